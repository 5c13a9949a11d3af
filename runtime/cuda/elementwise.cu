// Elementwise kernels: unary functions, broadcasting binary operators, the
// NaN mask and the broadcasting select (isnan, where), the bias-plus-activation
// epilogue of convolutions cuDNN cannot fuse, fill.
#include <algorithm>
#include <string>

#include "runtime/cuda/kernels.cuh"

namespace tso::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8));
}

template <UnaryFn F>
__device__ __forceinline__ float apply(float x, float lo, float hi) {
  if constexpr (F == UnaryFn::kRelu) return fmaxf(x, 0.0f);
  if constexpr (F == UnaryFn::kSigmoid) return 1.0f / (1.0f + expf(-x));
  if constexpr (F == UnaryFn::kTanh) return tanhf(x);
  if constexpr (F == UnaryFn::kErf) return erff(x);
  if constexpr (F == UnaryFn::kGelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  if constexpr (F == UnaryFn::kSqrt) return sqrtf(x);
  if constexpr (F == UnaryFn::kNeg) return -x;
  if constexpr (F == UnaryFn::kExp) return expf(x);
  if constexpr (F == UnaryFn::kClip) return fminf(fmaxf(x, lo), hi);
  if constexpr (F == UnaryFn::kLeakyRelu) return x < 0.0f ? lo * x : x;
  if constexpr (F == UnaryFn::kSoftplus) return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
  if constexpr (F == UnaryFn::kLog) return logf(x);
  if constexpr (F == UnaryFn::kAbs) return fabsf(x);
  if constexpr (F == UnaryFn::kSin) return sinf(x);
  if constexpr (F == UnaryFn::kCos) return cosf(x);
  return x;
}

template <UnaryFn F>
__global__ void unary_kernel(const float* __restrict__ x, float* y, int64_t n, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = apply<F>(x[i], lo, hi);
}

template <BinaryFn F>
__device__ __forceinline__ float combine(float a, float b) {
  if constexpr (F == BinaryFn::kAdd) return a + b;
  if constexpr (F == BinaryFn::kMul) return a * b;
  if constexpr (F == BinaryFn::kSub) return a - b;
  if constexpr (F == BinaryFn::kDiv) return a / b;
  if constexpr (F == BinaryFn::kMax) return a > b || a != a ? a : b;
  if constexpr (F == BinaryFn::kMin) return a < b || a != a ? a : b;
  return powf(a, b);
}

template <BinaryFn F>
__global__ void binary_same_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = combine<F>(a[i], b[i]);
}

template <BinaryFn F>
__global__ void binary_bcast_kernel(const float* a, const float* b, float* y, int64_t n,
                                    Strided st) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = st.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % st.dims[d];
      rest /= st.dims[d];
      ia += idx * st.src[d];
      ib += idx * st.dst[d];
    }
    y[i] = combine<F>(a[ia], b[ib]);
  }
}

__global__ void nan_mask_kernel(const float* __restrict__ x, unsigned char* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = isnan(x[i]) ? 1 : 0;
}

// T is an unsigned integer as wide as the element: where moves bits, so one
// instantiation per width serves every dtype.
template <class T>
__global__ void where_kernel(const unsigned char* __restrict__ c, const T* __restrict__ a,
                             const T* __restrict__ b, T* y, int64_t n, SelectStrides st) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ic = 0, ia = 0, ib = 0;
    for (int d = st.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % st.dims[d];
      rest /= st.dims[d];
      ic += idx * st.c[d];
      ia += idx * st.a[d];
      ib += idx * st.b[d];
    }
    y[i] = c[ic] ? a[ia] : b[ib];
  }
}

template <class T>
void launch_where(cudaStream_t s, const unsigned char* c, const void* a, const void* b, void* y,
                  int64_t n, const SelectStrides& st) {
  where_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(
      c, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n, st);
}

__global__ void bias_act_kernel(float* y, const float* bias, int64_t n, int64_t channels,
                                int64_t inner, UnaryFn act, bool has_act, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    float v = y[i] + (bias ? bias[i / inner % channels] : 0.0f);
    if (has_act) {
      switch (act) {
        case UnaryFn::kRelu: v = apply<UnaryFn::kRelu>(v, lo, hi); break;
        case UnaryFn::kSigmoid: v = apply<UnaryFn::kSigmoid>(v, lo, hi); break;
        case UnaryFn::kTanh: v = apply<UnaryFn::kTanh>(v, lo, hi); break;
        case UnaryFn::kGelu: v = apply<UnaryFn::kGelu>(v, lo, hi); break;
        case UnaryFn::kClip: v = apply<UnaryFn::kClip>(v, lo, hi); break;
        default: break;
      }
    }
    y[i] = v;
  }
}

__global__ void fill_kernel(float* y, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = v;
}

template <UnaryFn F>
void launch_unary(cudaStream_t s, const float* x, float* y, int64_t n, float lo, float hi) {
  unary_kernel<F><<<blocks_for(n), kThreads, 0, s>>>(x, y, n, lo, hi);
}

template <BinaryFn F>
void launch_binary(cudaStream_t s, const float* a, const float* b, float* y, int64_t n,
                   const Strided& st, bool same) {
  if (same)
    binary_same_kernel<F><<<blocks_for(n), kThreads, 0, s>>>(a, b, y, n);
  else
    binary_bcast_kernel<F><<<blocks_for(n), kThreads, 0, s>>>(a, b, y, n, st);
}

}  // namespace

Strided make_strided(const Shape& dims, const std::vector<int64_t>& src,
                     const std::vector<int64_t>& dst) {
  Strided st;
  st.rank = dims.rank();
  for (int d = 0; d < st.rank; ++d) {
    st.dims[d] = dims[d];
    st.src[d] = d < static_cast<int>(src.size()) ? src[d] : 0;
    st.dst[d] = d < static_cast<int>(dst.size()) ? dst[d] : 0;
  }
  return st;
}

Status launch_status(const char* kernel) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::Ok();
  return Error{std::string("launch of ") + kernel + " kernel: " + cudaGetErrorString(e)};
}

Status unary(cudaStream_t s, UnaryFn f, const float* x, float* y, int64_t n, float lo, float hi) {
  if (n == 0) return Status::Ok();
  switch (f) {
    case UnaryFn::kRelu: launch_unary<UnaryFn::kRelu>(s, x, y, n, lo, hi); break;
    case UnaryFn::kSigmoid: launch_unary<UnaryFn::kSigmoid>(s, x, y, n, lo, hi); break;
    case UnaryFn::kTanh: launch_unary<UnaryFn::kTanh>(s, x, y, n, lo, hi); break;
    case UnaryFn::kErf: launch_unary<UnaryFn::kErf>(s, x, y, n, lo, hi); break;
    case UnaryFn::kGelu: launch_unary<UnaryFn::kGelu>(s, x, y, n, lo, hi); break;
    case UnaryFn::kSqrt: launch_unary<UnaryFn::kSqrt>(s, x, y, n, lo, hi); break;
    case UnaryFn::kNeg: launch_unary<UnaryFn::kNeg>(s, x, y, n, lo, hi); break;
    case UnaryFn::kExp: launch_unary<UnaryFn::kExp>(s, x, y, n, lo, hi); break;
    case UnaryFn::kClip: launch_unary<UnaryFn::kClip>(s, x, y, n, lo, hi); break;
    case UnaryFn::kLeakyRelu: launch_unary<UnaryFn::kLeakyRelu>(s, x, y, n, lo, hi); break;
    case UnaryFn::kSoftplus: launch_unary<UnaryFn::kSoftplus>(s, x, y, n, lo, hi); break;
    case UnaryFn::kLog: launch_unary<UnaryFn::kLog>(s, x, y, n, lo, hi); break;
    case UnaryFn::kAbs: launch_unary<UnaryFn::kAbs>(s, x, y, n, lo, hi); break;
    case UnaryFn::kSin: launch_unary<UnaryFn::kSin>(s, x, y, n, lo, hi); break;
    case UnaryFn::kCos: launch_unary<UnaryFn::kCos>(s, x, y, n, lo, hi); break;
  }
  return launch_status("unary");
}

Status binary(cudaStream_t s, BinaryFn f, const float* a, const float* b, float* y, int64_t n,
              const Strided& st) {
  if (n == 0) return Status::Ok();
  bool same = true;  // both operands contiguous with the output's shape
  int64_t expect = 1;
  for (int d = st.rank - 1; d >= 0; --d) {
    if (st.dims[d] != 1 && (st.src[d] != expect || st.dst[d] != expect)) same = false;
    expect *= st.dims[d];
  }
  switch (f) {
    case BinaryFn::kAdd: launch_binary<BinaryFn::kAdd>(s, a, b, y, n, st, same); break;
    case BinaryFn::kMul: launch_binary<BinaryFn::kMul>(s, a, b, y, n, st, same); break;
    case BinaryFn::kSub: launch_binary<BinaryFn::kSub>(s, a, b, y, n, st, same); break;
    case BinaryFn::kDiv: launch_binary<BinaryFn::kDiv>(s, a, b, y, n, st, same); break;
    case BinaryFn::kPow: launch_binary<BinaryFn::kPow>(s, a, b, y, n, st, same); break;
    case BinaryFn::kMax: launch_binary<BinaryFn::kMax>(s, a, b, y, n, st, same); break;
    case BinaryFn::kMin: launch_binary<BinaryFn::kMin>(s, a, b, y, n, st, same); break;
  }
  return launch_status("binary");
}

Status nan_mask(cudaStream_t s, const float* x, unsigned char* y, int64_t n) {
  if (n == 0) return Status::Ok();
  nan_mask_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
  return launch_status("nan_mask");
}

SelectStrides make_select_strides(const Shape& dims, const std::vector<int64_t>& c,
                                  const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  SelectStrides st;
  st.rank = dims.rank();
  for (int d = 0; d < st.rank; ++d) {
    st.dims[d] = dims[d];
    st.c[d] = c[d];
    st.a[d] = a[d];
    st.b[d] = b[d];
  }
  return st;
}

Status where_select(cudaStream_t s, const unsigned char* c, const void* a, const void* b, void* y,
                    int elem_bytes, int64_t n, const SelectStrides& st) {
  if (n == 0) return Status::Ok();
  switch (elem_bytes) {
    case 1: launch_where<uint8_t>(s, c, a, b, y, n, st); break;
    case 2: launch_where<uint16_t>(s, c, a, b, y, n, st); break;
    case 4: launch_where<uint32_t>(s, c, a, b, y, n, st); break;
    case 8: launch_where<uint64_t>(s, c, a, b, y, n, st); break;
    default: return Error{"where: elements of " + std::to_string(elem_bytes) + " bytes"};
  }
  return launch_status("where");
}

Status bias_act(cudaStream_t s, float* y, const float* bias, int64_t outer, int64_t channels,
                int64_t inner, UnaryFn act, bool has_act, float lo, float hi) {
  const int64_t n = outer * channels * inner;
  if (n == 0) return Status::Ok();
  bias_act_kernel<<<blocks_for(n), kThreads, 0, s>>>(y, bias, n, channels, inner, act, has_act, lo,
                                                     hi);
  return launch_status("bias_act");
}

UnaryFn unary_of_act(const Attrs& a, float* lo, float* hi) {
  *lo = static_cast<float>(a.f(AttrKey::min));
  *hi = static_cast<float>(a.f(AttrKey::max));
  switch (a.act(AttrKey::act)) {
    case Act::kSigmoid: return UnaryFn::kSigmoid;
    case Act::kTanh: return UnaryFn::kTanh;
    case Act::kGelu: return UnaryFn::kGelu;
    case Act::kClip: return UnaryFn::kClip;
    default: return UnaryFn::kRelu;
  }
}

Status fill(cudaStream_t s, float* y, int64_t n, float v) {
  if (n == 0) return Status::Ok();
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(y, n, v);
  return launch_status("fill");
}

}  // namespace tso::cuda
