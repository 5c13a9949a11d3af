// Constant folding of ONNX nodes at import: evaluates the shape-computation
// operators (Shape, Gather, Cast, ConstantOfShape, Unsqueeze, Concat, Equal,
// Where, Expand, Slice, Range, arithmetic, ...) on small constant tensors, so
// that a model exported with dynamic-shape logic imports with every shape
// static. A compact evaluator of its own: the frontend does not depend on the
// reference runtime, and these operators are not IR operators anyway.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "core/types.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// A constant tensor in a form that is easy to compute with. Floating-point
// elements live in `f`, rounded to `dtype` after every operation so results
// match evaluation in that type; integer and bool elements live in `i`.
struct HostTensor {
  DType dtype = DType::kI64;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  static bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kF64; }
  bool is_float() const { return is_float(dtype); }
  int64_t numel() const { return shape.numel(); }
  double get_f(int64_t k) const { return is_float() ? f[k] : static_cast<double>(i[k]); }
  int64_t get_i(int64_t k) const;  // floats truncate toward zero
  // A tensor of `dtype` and `shape` with zeroed elements.
  static HostTensor zeros(DType dtype, Shape shape);
};

HostTensor host_from_weight(const WeightData& w);
WeightData weight_from_host(const HostTensor& h);
// A rank-1 int64 tensor.
HostTensor host_ints(const std::vector<int64_t>& v);
// The element values of an integer tensor of rank <= 1.
std::vector<int64_t> host_to_ints(const HostTensor& h);

// Whether the folder evaluates `op_type` of the default domain.
bool can_fold(std::string_view op_type);

// Evaluates `node` on constant inputs (null for absent optional inputs).
// Returns nullopt when a tensor involved exceeds `max_elements` (the node is
// then better imported as an operator); an Error when the node is invalid
// for its inputs. The caller names the node in the message.
Expected<std::optional<std::vector<HostTensor>>> fold_node(
    const onnx::NodeProto& node, int64_t opset, std::span<const HostTensor* const> inputs,
    int64_t max_elements);

}  // namespace tso::onnx_frontend
