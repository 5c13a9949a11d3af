// Index arithmetic a runtime's kernels are launched with, worked out once per
// node when the plan is made: sliding windows (conv2d and pooling, with
// tso's padding modes and ceil mode), matrix-product shapes and batch
// strides, broadcast strides. Shared by runtime/cuda and runtime/cpu so that
// both read core/ops.h's rules the same way; plain C++, tested without a
// GPU; the rules agree with runtime/reference.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/types.h"

namespace tso::rt {

// One spatial dimension of a window: the input extent, kernel, stride,
// dilation, resolved leading and trailing padding, and the output extent.
struct WindowAxis {
  int64_t in = 0, k = 1, stride = 1, dil = 1, pad_lo = 0, pad_hi = 0, out = 0;
  bool symmetric() const { return pad_lo == pad_hi; }
};

// Resolves H and W of conv2d (kernel from the weight) or pooling (kernel
// attribute) on an NCHW input, as core/ops.h defines `same`, explicit
// padding and ceil_mode.
Expected<std::vector<WindowAxis>> resolve_window(const Shape& x, int64_t kh, int64_t kw,
                                                 const Attrs& attrs, bool ceil_mode);

// A matrix product as a strided-batch library call sees it (cuBLASLt,
// oneDNN's matmul): `batch` row-major [m,k] x [k,n] products, operand batch
// strides in elements (0 when an operand is shared by every batch). When
// batch shapes broadcast in a way one stride cannot express, `expand_a` /
// `expand_b` says the operand must first be materialized to the full batch
// shape `batch_shape` (then its stride is the full matrix).
struct MatmulGeometry {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t stride_a = 0, stride_b = 0;
  bool expand_a = false, expand_b = false;
  Shape batch_shape;  // the broadcast leading dimensions of the result
};

// Geometry of tso's matmul (numpy semantics, rank-1 operands included).
// A left operand whose batch is not broadcast against a 2-D right operand is
// folded into one product of m * batch rows.
Expected<MatmulGeometry> matmul_geometry(const Shape& a, const Shape& b);

// Row-major strides of `s` in elements.
std::vector<int64_t> strides_of(const Shape& s);
// Strides that read a tensor of shape `s` broadcast to `out` (numpy
// alignment at the trailing dimension; 0 along stretched or missing
// dimensions). `s` must broadcast to `out`.
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out);

}  // namespace tso::rt
