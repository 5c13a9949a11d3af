#include "runtime/cuda/axpy.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

namespace tso::cuda {
namespace {

__global__ void axpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y,
                            int64_t n) {
  // Grid-stride loop: any n runs with a bounded grid.
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = fmaf(a, x[i], y[i]);
  }
}

}  // namespace

Status axpy(float a, const DeviceBuffer& x, DeviceBuffer& y, int64_t n) {
  if (n < 0) return Error{"axpy: negative length " + std::to_string(n)};
  const size_t need = static_cast<size_t>(n) * sizeof(float);
  if (x.bytes() < need || y.bytes() < need)
    return Error{"axpy: n=" + std::to_string(n) + " needs " + std::to_string(need) +
                 " bytes, but x holds " + std::to_string(x.bytes()) + " and y " +
                 std::to_string(y.bytes())};
  if (n == 0) return Status::Ok();

  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 4096;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks);
  axpy_kernel<<<static_cast<unsigned>(blocks), kThreads>>>(a, static_cast<const float*>(x.data()),
                                                           static_cast<float*>(y.data()), n);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return Error{std::string("axpy: ") + cudaGetErrorString(e)};
  return Status::Ok();
}

}  // namespace tso::cuda
