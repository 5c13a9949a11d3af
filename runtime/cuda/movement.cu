// Data movement: one strided-copy kernel serves transpose, slice, split and
// concat pieces, enlarge, pad and broadcasts (stride 0), for 1-, 2-, 4- and
// 8-byte elements.
#include <algorithm>

#include "runtime/cuda/kernels.cuh"

namespace tso::cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void strided_copy_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t n,
                                    Strided st) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, is = 0, id = 0;
    for (int d = st.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % st.dims[d];
      rest /= st.dims[d];
      is += idx * st.src[d];
      id += idx * st.dst[d];
    }
    dst[id] = src[is];
  }
}

__global__ void scaled_copy_kernel(const float* __restrict__ src, float* __restrict__ dst,
                                   int64_t n, Strided st, float scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, is = 0, id = 0;
    for (int d = st.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % st.dims[d];
      rest /= st.dims[d];
      is += idx * st.src[d];
      id += idx * st.dst[d];
    }
    dst[id] = scale * src[is];
  }
}

template <class T>
void launch(cudaStream_t s, const void* src, void* dst, int64_t n, const Strided& st) {
  const unsigned blocks =
      static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8));
  strided_copy_kernel<T><<<blocks, kThreads, 0, s>>>(static_cast<const T*>(src),
                                                     static_cast<T*>(dst), n, st);
}

}  // namespace

Status strided_copy(cudaStream_t s, const void* src, void* dst, int elem_bytes, const Strided& st,
                    float scale) {
  int64_t n = 1;
  for (int d = 0; d < st.rank; ++d) n *= st.dims[d];
  if (n == 0) return Status::Ok();
  if (scale != 1.0f) {
    if (elem_bytes != 4) return Error{"scaled copy of non-f32 elements"};
    const unsigned blocks =
        static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8));
    scaled_copy_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const float*>(src),
                                                   static_cast<float*>(dst), n, st, scale);
    return launch_status("scaled_copy");
  }
  switch (elem_bytes) {
    case 1: launch<uint8_t>(s, src, dst, n, st); break;
    case 2: launch<uint16_t>(s, src, dst, n, st); break;
    case 4: launch<uint32_t>(s, src, dst, n, st); break;
    case 8: launch<uint64_t>(s, src, dst, n, st); break;
    default: return Error{"strided copy of " + std::to_string(elem_bytes) + "-byte elements"};
  }
  return launch_status("strided_copy");
}

}  // namespace tso::cuda
