// Normalizations and reductions: batchnorm (inference), softmax, layernorm,
// reduce_mean (which also runs global_avgpool). Rows are reduced by one
// block each with warp shuffles, in float.
#include <algorithm>

#include "runtime/cuda/kernels.cuh"

namespace tso::cuda {
namespace {

constexpr int kThreads = 256;

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum (or max) over the block; every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float partial[kThreads / 32];
  __shared__ float result;
  v = kMax ? warp_max(v) : warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float p = lane < blockDim.x / 32 ? partial[lane] : (kMax ? -INFINITY : 0.0f);
    p = kMax ? warp_max(p) : warp_sum(p);
    if (lane == 0) result = p;
  }
  __syncthreads();
  const float r = result;
  __syncthreads();  // `result` and `partial` are reused by the next call
  return r;
}

__global__ void batchnorm_kernel(const float* x, const float* scale, const float* bias,
                                 const float* mean, const float* var, float* y, int64_t n,
                                 int64_t c, int64_t inner, float eps) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ch = i / inner % c;
    y[i] = (x[i] - mean[ch]) * rsqrtf(var[ch] + eps) * scale[ch] + bias[ch];
  }
}

// One block per (outer, inner) row of `len` elements `inner` apart; the
// logarithm of the softmax when `Log`.
template <bool Log>
__global__ void softmax_kernel(const float* x, float* y, int64_t len, int64_t inner) {
  const int64_t row = blockIdx.x;
  const int64_t base = row / inner * len * inner + row % inner;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) m = fmaxf(m, x[base + i * inner]);
  m = block_reduce<true>(m);
  float sum = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) sum += expf(x[base + i * inner] - m);
  sum = block_reduce<false>(sum);
  if constexpr (Log) {
    const float log_sum = logf(sum);
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      y[base + i * inner] = (x[base + i * inner] - m) - log_sum;
  } else {
    const float r = 1.0f / sum;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      y[base + i * inner] = expf(x[base + i * inner] - m) * r;
  }
}

__global__ void layernorm_kernel(const float* x, const float* scale, const float* bias, float* y,
                                 int64_t len, float eps) {
  const float* px = x + blockIdx.x * len;
  float* py = y + blockIdx.x * len;
  float sum = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) sum += px[i];
  const float mean = block_reduce<false>(sum) / static_cast<float>(len);
  float sq = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) sq += (px[i] - mean) * (px[i] - mean);
  const float r = rsqrtf(block_reduce<false>(sq) / static_cast<float>(len) + eps);
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    py[i] = (px[i] - mean) * r * scale[i] + bias[i];
}

__device__ int64_t offset_of(int64_t i, const Strided& st) {
  int64_t off = 0;
  for (int d = st.rank - 1; d >= 0; --d) {
    off += i % st.dims[d] * st.src[d];
    i /= st.dims[d];
  }
  return off;
}

__global__ void reduce_mean_kernel(const float* x, float* y, Strided kept, int64_t count,
                                   Strided reduced) {
  const float* base = x + offset_of(blockIdx.x, kept);
  float sum = 0;
  for (int64_t r = threadIdx.x; r < count; r += blockDim.x) sum += base[offset_of(r, reduced)];
  sum = block_reduce<false>(sum);
  if (threadIdx.x == 0) y[blockIdx.x] = sum / static_cast<float>(count);
}

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8));
}

Status too_many(const char* what, int64_t rows) {
  return Error{std::string(what) + ": " + std::to_string(rows) + " rows exceed the grid limit"};
}

constexpr int64_t kMaxGrid = 2147483647;

}  // namespace

Status batchnorm(cudaStream_t s, const float* x, const float* scale, const float* bias,
                 const float* mean, const float* var, float* y, int64_t n, int64_t c,
                 int64_t inner, float eps) {
  const int64_t total = n * c * inner;
  if (total == 0) return Status::Ok();
  batchnorm_kernel<<<grid_for(total), kThreads, 0, s>>>(x, scale, bias, mean, var, y, total, c,
                                                        inner, eps);
  return launch_status("batchnorm");
}

Status softmax(cudaStream_t s, const float* x, float* y, int64_t outer, int64_t len,
               int64_t inner, bool log) {
  const int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return Status::Ok();
  if (rows > kMaxGrid) return too_many("softmax", rows);
  if (log)
    softmax_kernel<true><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, y, len, inner);
  else
    softmax_kernel<false><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, y, len, inner);
  return launch_status("softmax");
}

Status layernorm(cudaStream_t s, const float* x, const float* scale, const float* bias, float* y,
                 int64_t rows, int64_t len, float eps) {
  if (rows == 0 || len == 0) return Status::Ok();
  if (rows > kMaxGrid) return too_many("layernorm", rows);
  layernorm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, scale, bias, y, len, eps);
  return launch_status("layernorm");
}

Status reduce_mean(cudaStream_t s, const float* x, float* y, int64_t outputs, const Strided& kept,
                   int64_t count, const Strided& reduced) {
  if (outputs == 0) return Status::Ok();
  if (outputs > kMaxGrid) return too_many("reduce_mean", outputs);
  reduce_mean_kernel<<<static_cast<unsigned>(outputs), kThreads, 0, s>>>(x, y, kept, count,
                                                                         reduced);
  return launch_status("reduce_mean");
}

}  // namespace tso::cuda
