// tso's own CUDA kernels, as launch functions on a stream. Internal to
// runtime/cuda (included by .cu files only). Every launch checks
// cudaGetLastError and returns an Error naming the kernel; the caller adds
// the node. Shapes arrive as small by-value structs (rank <= Shape::kMaxRank).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/types.h"

namespace tso::cuda {

constexpr int kMaxDims = Shape::kMaxRank;

// A strided view: extents and element strides, innermost last.
struct Strided {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t src[kMaxDims] = {};  // source strides (0 broadcasts)
  int64_t dst[kMaxDims] = {};  // destination strides
};

// Builds the strides for `dims` with the given per-dimension strides.
Strided make_strided(const Shape& dims, const std::vector<int64_t>& src,
                     const std::vector<int64_t>& dst);

// kLeakyRelu takes its alpha as `lo`; kClip its bounds as `lo` and `hi`.
enum class UnaryFn : unsigned char {
  kRelu, kSigmoid, kTanh, kErf, kGelu, kSqrt, kNeg, kExp, kClip, kLeakyRelu, kSoftplus, kLog, kAbs,
  kSin, kCos
};
// kMax and kMin give NaN where either operand is NaN.
enum class BinaryFn : unsigned char { kAdd, kMul, kSub, kDiv, kPow, kMax, kMin };

// Names the CUDA error of the last launch, or Ok.
Status launch_status(const char* kernel);

// y = f(x) elementwise over n elements; lo and hi are clip's bounds. In place is fine.
Status unary(cudaStream_t s, UnaryFn f, const float* x, float* y, int64_t n, float lo = 0,
             float hi = 0);
// y = a (op) b with numpy broadcasting: `st.dims` is the output shape,
// `st.src` a's strides and `st.dst` b's strides (0 where they broadcast).
Status binary(cudaStream_t s, BinaryFn f, const float* a, const float* b, float* y, int64_t n,
              const Strided& st);
// y = 1 where x is NaN, else 0, one byte per element (a bool tensor).
Status nan_mask(cudaStream_t s, const float* x, unsigned char* y, int64_t n);
// Strides of where's three operands over the output shape `dims` (0 where
// an operand broadcasts).
struct SelectStrides {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t c[kMaxDims] = {};
  int64_t a[kMaxDims] = {};
  int64_t b[kMaxDims] = {};
};
SelectStrides make_select_strides(const Shape& dims, const std::vector<int64_t>& c,
                                  const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// y = c ? a : b elementwise with broadcasting; c is bool (bytes), a, b and y
// hold elements of `elem_bytes` bytes (1, 2, 4 or 8), whatever their dtype.
Status where_select(cudaStream_t s, const unsigned char* c, const void* a, const void* b, void* y,
                    int elem_bytes, int64_t n, const SelectStrides& st);
// y[n, c, ...] = act(y[n, c, ...] + bias[c]) over `outer` x `channels` x `inner`
// (relu, sigmoid, tanh, gelu, or clip to [lo, hi]).
Status bias_act(cudaStream_t s, float* y, const float* bias, int64_t outer, int64_t channels,
                int64_t inner, UnaryFn act, bool has_act, float lo = 0, float hi = 0);
// The fused activation of a conv2d, matmul or gemm (not kNone) as the unary
// function that computes it, with clip's bounds from `a`.
UnaryFn unary_of_act(const Attrs& a, float* lo, float* hi);
// dst[j] = scale * src[i] for every index of `st.dims`, elements of
// `elem_bytes` bytes (scale applies to f32 only and must be 1 otherwise).
Status strided_copy(cudaStream_t s, const void* src, void* dst, int elem_bytes, const Strided& st,
                    float scale = 1.0f);
// Fills n f32 elements with v.
Status fill(cudaStream_t s, float* y, int64_t n, float v);

// Inference batchnorm over [N, C, inner].
Status batchnorm(cudaStream_t s, const float* x, const float* scale, const float* bias,
                 const float* mean, const float* var, float* y, int64_t n, int64_t c,
                 int64_t inner, float eps);
// Softmax along an axis of extent `len`, elements `inner` apart, `outer` rows;
// its logarithm (x - max - log(sum(exp(x - max)))) when `log`.
Status softmax(cudaStream_t s, const float* x, float* y, int64_t outer, int64_t len, int64_t inner,
               bool log);
// Layer normalization of `rows` rows of `len` contiguous elements; scale and
// bias have `len` elements.
Status layernorm(cudaStream_t s, const float* x, const float* scale, const float* bias, float* y,
                 int64_t rows, int64_t len, float eps);
// Mean over the dimensions of `reduced` for each output element: out element
// o reads x[base(o) + r] where base comes from `kept` (dims = output extents,
// src = input strides) and r from `reduced` (dims = reduced extents, src =
// input strides).
Status reduce_mean(cudaStream_t s, const float* x, float* y, int64_t outputs, const Strided& kept,
                   int64_t count, const Strided& reduced);

struct PoolArgs {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, ph_hi = 0, pw_hi = 0;
  bool max = true;
  bool count_include_pad = false;
};
Status pool(cudaStream_t s, const float* x, float* y, const PoolArgs& a);

}  // namespace tso::cuda
