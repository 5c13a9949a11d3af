// tso's own CPU kernels, for what no library on the machine has: strided
// copies (transpose, slice, pad, enlarge, split and concat of any dtype),
// gather, erf, batchnorm of channels-last tensors, and binaries whose
// broadcasting oneDNN cannot express (both operands stretched, or the left
// one; pow). Plain row-major buffers, channels-last for batchnorm; parallel
// over the calling OpenMP team. Internal to runtime/cpu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ops.h"
#include "core/types.h"
#include "runtime/common/quantize.h"

namespace tso::cpu {

// For every index i of `extent` (row-major order), copies one element of
// `elem_bytes`:
//   dst[dst_off + sum_d i_d * dst_st[d]] = src[src_off + sum_d i_d * src_st[d]]
// (offsets and strides in elements; source strides may be negative).
struct StridedCopy {
  int elem_bytes = 4;
  std::span<const int64_t> extent;
  int64_t src_off = 0;
  std::span<const int64_t> src_st;
  int64_t dst_off = 0;
  std::span<const int64_t> dst_st;
};
void strided_copy(const StridedCopy& c, const std::byte* src, std::byte* dst);

// Sets `n` elements of `elem_bytes` each to the element at `value`.
void fill(std::byte* dst, int64_t n, int elem_bytes, const void* value);

// ONNX Gather on row-major bytes: data viewed as [outer, extent] rows of
// `row_bytes` and the output as [outer, count] rows, output row (o, j) is
// data row (o, indices[j]), a negative index counting from the end. Indices
// are i64 or i32 (`wide`). Checks every index first: returns the position of
// the first one outside [-extent, extent) and writes nothing, or -1 once the
// rows are copied (memcpy each, parallel when large).
struct GatherRows {
  int64_t outer = 1, extent = 0, count = 0, row_bytes = 0;
  bool wide = true;
};
int64_t gather(const GatherRows& g, const std::byte* data, const void* indices, std::byte* y);

// ONNX GatherElements on row-major bytes: data and indices of one rank, y of
// indices' shape, y[i] = data[i with i(axis) replaced by indices[i]] (plus the
// axis' extent when negative). Checks every index first: returns the position
// of the first one out of range and writes nothing, or -1 once y is written.
struct GatherElements {
  Shape data, indices;
  int axis = 0;
  int64_t elem_bytes = 4;
  bool wide = true;
};
int64_t gather_elements(const GatherElements& g, const std::byte* data, const void* indices,
                        std::byte* y);

// Element type conversion as ONNX Cast between any two of f32, f16, f64,
// i64, i32 and bool: floats to integers truncate toward zero, anything to
// bool is x != 0, to f16 rounds to nearest even.
void convert(const std::byte* x, DType from, std::byte* y, DType to, int64_t n);

// Inference batch normalization of a channels-last tensor, `rows` rows of
// `channels` elements: y = (x - mean) * scale / sqrt(var + epsilon) + shift
// per channel, parallel over rows.
struct ChannelsLastBatchNorm {
  int64_t rows = 0, channels = 0;
  float epsilon = 0;
};
void batchnorm_channels_last(const ChannelsLastBatchNorm& n, const float* x, const float* scale,
                             const float* shift, const float* mean, const float* var, float* y);

// erf, sin or cos of each of n elements (oneDNN has no eltwise for them).
void erf(const float* x, float* y, int64_t n);
void sin(const float* x, float* y, int64_t n);
// dequantize(quantize(x)) of each of n elements through float: the same
// values as the two steps (runtime/common/quantize.h's formulas). In place
// when y is x.
void fake_quantize(const float* x, float scale, int zero, rt::QuantRange r, float* y,
                   int64_t n);
void cos(const float* x, float* y, int64_t n);
// y[i] = 1 where x[i] is NaN, else 0 (bool tensors hold one byte per element).
void isnan(const float* x, uint8_t* y, int64_t n);

// A reduction of a row-major tensor viewed as [outer, reduced, inner] over
// its middle extent: y[o, i] = op over r of x[o, r, i] (the reduced axes
// contiguous: a normalization's last axis, selective kernels' branches).
struct RowReduction {
  enum Kind : unsigned char { kSum, kMean, kMax, kL2 } kind;
  int64_t outer, reduced, inner;
};
void reduce_rows(const RowReduction& r, const float* x, float* y);

enum class BinaryFn : unsigned char { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };
// The function of add, sub, mul (and smul), div, pow, max and min (NaN where
// either operand is, as ONNX Runtime's Max and Min).
BinaryFn binary_fn(Op op);
// y = f(a, b) with numpy broadcasting of `a` and `b` to `out`.
void broadcast_binary(BinaryFn f, const float* a, const Shape& as, const float* b, const Shape& bs,
                      float* y, const Shape& out);

// Average pooling of an NCHW tensor whose windows are divided by their size
// clipped to the padded input (count_include_pad = 1 with ceil-mode windows
// reaching past the padding, which oneDNN's divisor does not express).
struct AvgPoolGeometry {
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t k_h = 1, k_w = 1, s_h = 1, s_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};
void avgpool_include_pad(const AvgPoolGeometry& g, const float* x, float* y);

}  // namespace tso::cpu
