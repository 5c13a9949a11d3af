// The mapping of ONNX operators onto IR operators (internal to frontend/).
// The importer hands each node that did not fold to `map_node` through a
// NodeContext; the mapping either adds IR nodes for it or says why it cannot,
// and the importer then keeps the node as an opaque one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "frontend/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

class NodeContext {
 public:
  virtual ~NodeContext() = default;
  virtual const onnx::NodeProto& node() const = 0;
  virtual int64_t opset() const = 0;
  virtual GraphBuilder& builder() = 0;
  // Whether input k is given (optional inputs may be absent or "").
  virtual bool has_input(int k) const = 0;
  // Input k as an IR tensor; a constant becomes a weight on first use.
  virtual Expected<TensorRef> tensor(int k) = 0;
  // Input k's value when it is a constant, else null.
  virtual const HostTensor* constant(int k) const = 0;
  virtual TensorType type(int k) const = 0;
  // Whether output k is read by a later node or is a graph output.
  virtual bool output_used(int k) const = 0;
  // A new weight holding `value` (e.g. a zero bias a mapping needs).
  virtual TensorRef new_weight(const std::string& suffix, const HostTensor& value) = 0;
};

struct Mapped {
  std::vector<TensorRef> outputs;  // one per ONNX output the mapping produced
  std::string opaque_reason;       // set when the node must stay opaque
};

using MapFn = Expected<Mapped> (*)(NodeContext& ctx);
// The mappings, by file: convolution, pooling, linear algebra and
// normalization (import_nn.cc); elementwise and data movement (import_ops.cc).
MapFn find_nn_mapping(std::string_view op_type);

// A mapping's way of declining: the node stays opaque for `reason`.
inline Mapped opaque(std::string reason) { return Mapped{{}, std::move(reason)}; }
// Adds one IR node and returns it as the node's only output.
Expected<Mapped> add_one(NodeContext& ctx, Op op, std::vector<TensorRef> args, Attrs attrs = {});

// Maps the node; an Error when the node is malformed in a way the ONNX
// specification rules out (the importer names the node).
Expected<Mapped> map_node(NodeContext& ctx);

}  // namespace tso::onnx_frontend
