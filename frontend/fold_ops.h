// The folder's operator implementations, grouped by kind (internal to
// frontend/): elementwise arithmetic and comparisons (fold_elementwise.cc) and
// data movement and shape queries (fold_shape.cc), Resize (fold_resize.cc). Each takes the node, the
// opset, and its inputs (null for an absent optional input), and returns its
// outputs or an Error describing what is wrong.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "frontend/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

using FoldInputs = std::span<const HostTensor* const>;
using FoldResult = Expected<std::vector<HostTensor>>;
// `limit` bounds the elements of any tensor the fold creates; an operator
// that would exceed it returns no outputs (the node is then not folded).
using FoldFn = FoldResult (*)(const onnx::NodeProto&, int64_t opset, FoldInputs, int64_t limit);

// Whether a tensor of `shape` is beyond `limit`, or its element count beyond
// int64 (a fuzzed Expand to [2^63 - 1, 1, 192]); folds return Declined() then.
inline bool too_large(const Shape& shape, int64_t limit) {
  const std::optional<int64_t> n = shape.checked_numel();
  return !n || *n > limit;
}
inline std::vector<HostTensor> Declined() { return {}; }

// The implementation of `op_type`, or null when the folder lacks it.
FoldFn find_elementwise_fold(std::string_view op_type);
FoldFn find_shape_fold(std::string_view op_type);

// Resize of a constant in any mode (fold_resize.cc).
FoldResult fold_resize(const onnx::NodeProto& n, int64_t opset, FoldInputs in, int64_t limit);

// The input at `k`, or an Error when it is absent.
Expected<const HostTensor*> need_input(FoldInputs in, size_t k);

}  // namespace tso::onnx_frontend
