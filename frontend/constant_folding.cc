// Dispatch of the constant folder: finds the operator's implementation and
// keeps large tensors out of it.
#include "frontend/constant_folding.h"

#include <string>

#include "frontend/fold_ops.h"

namespace tso::onnx_frontend {

namespace {

FoldFn find_fold(std::string_view op_type) {
  if (FoldFn f = find_elementwise_fold(op_type)) return f;
  return find_shape_fold(op_type);
}

}  // namespace

bool can_fold(std::string_view op_type) { return find_fold(op_type) != nullptr; }

Expected<std::optional<std::vector<HostTensor>>> fold_node(
    const onnx::NodeProto& node, int64_t opset, std::span<const HostTensor* const> inputs,
    int64_t max_elements) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::optional<std::vector<HostTensor>>();
  FoldFn f = find_fold(node.op_type());
  if (!f) return std::optional<std::vector<HostTensor>>();
  for (const HostTensor* t : inputs)
    if (t && t->numel() > max_elements) return std::optional<std::vector<HostTensor>>();
  FoldResult r = f(node, opset, inputs, max_elements);
  if (!r) return r.error();
  if (r->empty()) return std::optional<std::vector<HostTensor>>();
  return std::optional<std::vector<HostTensor>>(std::move(*r));
}

}  // namespace tso::onnx_frontend
