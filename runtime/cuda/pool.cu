// Max and average pooling over NCHW with any padding (asymmetric `same`
// included) and ceil mode, as core/ops.h defines them: max ignores padded
// positions (a window entirely in padding gives 0); average divides by the
// window clipped to the input, or to the padded input with count_include_pad.
#include <algorithm>

#include "runtime/cuda/kernels.cuh"

namespace tso::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void pool_kernel(const float* __restrict__ x, float* __restrict__ y, PoolArgs a,
                            int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ow = i % a.ow, oh = i / a.ow % a.oh, plane = i / (a.ow * a.oh);
    const int64_t hs = oh * a.sh - a.ph, ws = ow * a.sw - a.pw;
    const int64_t h0 = max(hs, int64_t{0}), h1 = min(hs + a.kh, a.h);
    const int64_t w0 = max(ws, int64_t{0}), w1 = min(ws + a.kw, a.w);
    const float* p = x + plane * a.h * a.w;
    float r;
    if (a.max) {
      r = (h0 < h1 && w0 < w1) ? p[h0 * a.w + w0] : 0.0f;
      for (int64_t u = h0; u < h1; ++u)
        for (int64_t v = w0; v < w1; ++v) r = fmaxf(r, p[u * a.w + v]);
    } else {
      float sum = 0;
      for (int64_t u = h0; u < h1; ++u)
        for (int64_t v = w0; v < w1; ++v) sum += p[u * a.w + v];
      const int64_t count =
          a.count_include_pad
              ? (min(hs + a.kh, a.h + a.ph_hi) - max(hs, -a.ph)) *
                    (min(ws + a.kw, a.w + a.pw_hi) - max(ws, -a.pw))
              : (h1 - h0) * (w1 - w0);
      r = sum / static_cast<float>(count);
    }
    y[i] = r;
  }
}

}  // namespace

Status pool(cudaStream_t s, const float* x, float* y, const PoolArgs& a) {
  const int64_t n = a.planes * a.oh * a.ow;
  if (n == 0) return Status::Ok();
  const unsigned blocks =
      static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8));
  pool_kernel<<<blocks, kThreads, 0, s>>>(x, y, a, n);
  return launch_status("pool");
}

}  // namespace tso::cuda
