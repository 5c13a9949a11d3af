// Element-level helpers of the constant folder (internal to frontend/).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "frontend/constant_folding.h"

namespace tso::onnx_frontend {

// Rounds a value computed in double to what `t` can hold (float, half).
double round_to(DType t, double v);
// Wraps an integer to `t` (int32 wraps, bool becomes 0 or 1).
int64_t wrap_int(DType t, int64_t v);
// Truncates toward zero, saturating; NaN becomes 0.
int64_t float_to_int(double v);

// A shape from computed extents: rank and extents checked.
Expected<Shape> shape_from_values(const std::vector<int64_t>& dims);
// Numpy broadcasting; nullopt when the shapes do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// For each element of `out` (row-major), the index of the element of `in`
// that broadcasts to it.
std::vector<int64_t> broadcast_map(const Shape& out, const Shape& in);
std::vector<int64_t> strides_of(const Shape& s);
// to[j] = from[k], converted to `to`'s element type.
void copy_element(const HostTensor& from, int64_t k, HostTensor* to, int64_t j);

}  // namespace tso::onnx_frontend
