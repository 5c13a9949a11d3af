// Cost models: the predicted run time of a node, behind one interface so the
// search can use an analytic roofline model anywhere and a measured table
// where `tso profile` produced one. Weight-only nodes cost nothing (they are
// folded into weights after the search) and neither do graph inputs. A node
// the runtime fuses into a convolution or product (optimizer/post_op.h)
// costs what it adds to that kernel; in a model that costs post-ops apart,
// so does a fused activation (act=relu, split_fused_activation). In a
// quantized model (core/quantized.h), an int8 product costs its int8
// kernel (its signature names its input and weights' integer types), and a
// dequantize_linear that runs in the step of the quantize_linear it undoes
// costs what it adds to that step: a post-op of that quantize_linear
// (quantize_linear+dequantize_linear(u8[...],f32[],u8[]) in a table).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/graph.h"
#include "optimizer/graph_index.h"
#include "optimizer/post_op.h"

namespace tso::opt {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Predicted time of `n` in microseconds; `inputs` are its argument types.
  virtual double node_us(const Node& n, std::span<const TensorType> inputs) const = 0;
  // Predicted time `n` adds to the kernel of `p.anchor` it runs in as a
  // post-op; by default what it costs alone.
  virtual double post_op_us([[maybe_unused]] const PostOp& p, const Node& n,
                            std::span<const TensorType> inputs) const {
    return node_us(n, inputs);
  }
  // Whether post_op_us differs from node_us: the search then scores a
  // rewrite with the post-ops around it.
  virtual bool fuses() const { return false; }
  // Measures a second time, apart from the first, each cost a prediction of
  // `g` (indexed by `index`) rests on that was measured only once (a model that times signatures
  // on demand), keeping the lesser; returns how many were measured again.
  // On a shared machine one measurement can fall in a slow moment of the
  // host: a convolution measured at 2x its cost, the input graph then
  // predicted 1.4x slower than it runs.
  virtual int confirm([[maybe_unused]] const Graph& g,
                      [[maybe_unused]] const GraphIndex& index) const {
    return 0;
  }
  // Seconds spent measuring so far (a model that times signatures on
  // demand); the search's time limit does not count them.
  virtual double measuring_seconds() const { return 0; }
  // One line for reports: the model and its device or table.
  virtual std::string describe() const = 0;
};

// What a model that costs post-ops apart (`model.fuses()`) charges for a
// node with a fused activation: its kernel without it plus the activation's
// post-op (split_fused_activation); nullopt for other nodes and models.
std::optional<double> fused_activation_us(const CostModel& model, const Node& n,
                                          std::span<const TensorType> inputs);

// The cost of node `i` of `g` (0 for sources and weight-only nodes; the
// post-op cost for a post-op).
double node_cost(const Graph& g, const GraphIndex& index, const CostModel& model, int i);
// The sum over the graph's nodes.
double graph_cost(const Graph& g, const GraphIndex& index, const CostModel& model);

}  // namespace tso::opt
