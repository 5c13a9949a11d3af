// tso's own CPU kernels for what encoders compute on token ids and attention
// masks before the first layer: comparisons (DistilBERT's `mask == 0`),
// logic of bool masks, cumulative sums (RoBERTa's position ids count the
// tokens that are not padding), the position of a maximum (CLIP's
// end-of-text token) and integer arithmetic. oneDNN has none of
// them on i64 or bool. Plain row-major buffers, numpy broadcasting, parallel
// over the calling OpenMP team once a tensor is large. Internal to
// runtime/cpu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.h"
#include "runtime/cpu/kernels.h"

namespace tso::cpu {

// Element types the kernels compute on: f32, f64, i64 and i32.
bool numeric(DType t);

enum class CompareFn : unsigned char { kEqual, kLess, kGreater };
// y = f(a, b), 1 or 0 (bool, one byte each), with a and b of `t`
// (`numeric`); NaN compares unequal and unordered.
void compare(CompareFn f, DType t, const std::byte* a, const Shape& as, const std::byte* b,
             const Shape& bs, uint8_t* y, const Shape& out);

enum class LogicFn : unsigned char { kAnd, kOr };
// y = a and b, or a or b, of bool tensors (any non-zero byte is true).
void logical(LogicFn f, const uint8_t* a, const Shape& as, const uint8_t* b, const Shape& bs,
             uint8_t* y, const Shape& out);
void logical_not(const uint8_t* x, uint8_t* y, int64_t n);

// A tensor seen as lines along one axis: [outer, extent, inner].
struct AxisLines {
  int64_t outer = 1, extent = 1, inner = 1;
};
// The lines of `shape` along `axis`.
AxisLines lines_along(const Shape& shape, int axis);

// Running sums of `x` along the middle axis of [outer, extent, inner] (ONNX
// CumSum), in x's type (`numeric`); integers wrap around on overflow.
struct CumSumGeometry : AxisLines {
  bool exclusive = false, reverse = false;
};
void cumsum(const CumSumGeometry& g, DType t, const std::byte* x, std::byte* y);

// The index of the largest element of each line along the middle axis of
// [outer, extent, inner] of `x` (ONNX ArgMax), in x's type (`numeric`): the
// first of equal ones, or with `last` the last; NaN is larger than any
// number. extent >= 1.
struct ArgMaxGeometry : AxisLines {
  bool last = false;
};
void arg_max(const ArgMaxGeometry& g, DType t, const std::byte* x, int64_t* y);

// The k largest or smallest of each line of [outer, extent, inner] of `x`
// (f32 or f64) and their indices, into [outer, k, inner] (ONNX TopK;
// runtime/common/top_k.h), lines on the OpenMP team.
struct TopKGeometry : AxisLines {
  int64_t k = 1;
  bool largest = true;
};
void top_k(const TopKGeometry& g, DType t, const std::byte* x, std::byte* values,
           int64_t* indices);

// y = f(a, b) on i64 or i32 with numpy broadcasting; add, sub and mul only,
// wrapping around on overflow as two's complement does.
bool integer_binary_supported(BinaryFn f, DType t);
void integer_binary(BinaryFn f, DType t, const std::byte* a, const Shape& as, const std::byte* b,
                    const Shape& bs, std::byte* y, const Shape& out);

// y = c ? a : b for elements of `elem_bytes` (1, 4 or 8): where on every
// element type, f32's among them.
void where_bytes(int elem_bytes, const uint8_t* c, const Shape& cs, const std::byte* a,
                 const Shape& as, const std::byte* b, const Shape& bs, std::byte* y,
                 const Shape& out);

}  // namespace tso::cpu
