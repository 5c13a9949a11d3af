// The epilogue of tso's own convolution kernels (winograd.h): what a fused
// group's bias, batchnorm, residual add and activation become, applied to 8
// output channels at a time as they are stored. Internal to runtime/cpu;
// needs AVX2.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <span>

namespace tso::cpu {

// One step of the epilogue applied to each output element after the sum, in
// order: the conv's fused bias, batchnorm, residual and activation.
struct EpilogueOp {
  enum Kind { kAddChannel, kMulChannel, kAddTensor, kRelu, kClip } kind;
  // [K] per channel (kAddChannel, kMulChannel), or a dense NHWC tensor shaped
  // like the output (kAddTensor); unused otherwise.
  const float* data = nullptr;
  float lo = 0, hi = 0;  // kClip: min(max(x, lo), hi)
};

using v8 = __m256;  // 8 channels; GCC's vector operators work on it

inline v8 load8(const float* p, bool full, __m256i mask) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

// `x` holds output channels [k, k + 8) of the element at `at` (its offset in
// the NHWC output); `full` false: only the lanes of `mask` exist.
inline v8 apply_epilogue(v8 x, std::span<const EpilogueOp> epilogue, int64_t k, int64_t at,
                         bool full, __m256i mask) {
  for (const EpilogueOp& op : epilogue) {
    switch (op.kind) {
      case EpilogueOp::kAddChannel:
        x += load8(op.data + k, full, mask);
        break;
      case EpilogueOp::kMulChannel:
        x *= load8(op.data + k, full, mask);
        break;
      case EpilogueOp::kAddTensor:
        x += load8(op.data + at, full, mask);
        break;
      case EpilogueOp::kRelu:
        x = _mm256_max_ps(x, _mm256_setzero_ps());
        break;
      case EpilogueOp::kClip:
        x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(op.lo)), _mm256_set1_ps(op.hi));
        break;
    }
  }
  return x;
}

}  // namespace tso::cpu
