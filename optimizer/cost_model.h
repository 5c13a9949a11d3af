// Cost models: the predicted run time of a node, behind one interface so the
// search can use an analytic roofline model anywhere and a measured table
// where `tso profile` produced one. Weight-only nodes cost nothing (they are
// folded into weights after the search) and neither do graph inputs.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "core/graph.h"
#include "optimizer/graph_index.h"

namespace tso::opt {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Predicted time of `n` in microseconds; `inputs` are its argument types.
  virtual double node_us(const Node& n, std::span<const TensorType> inputs) const = 0;
  // One line for reports: the model and its device or table.
  virtual std::string describe() const = 0;
};

// The cost of node `i` of `g` (0 for sources and weight-only nodes).
double node_cost(const Graph& g, const GraphIndex& index, const CostModel& model, int i);
// The sum over the graph's nodes.
double graph_cost(const Graph& g, const GraphIndex& index, const CostModel& model);

}  // namespace tso::opt
