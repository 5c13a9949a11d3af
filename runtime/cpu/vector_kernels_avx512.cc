// AVX-512's 16 lanes. This file alone is compiled for AVX-512 F, BW, DQ and
// VL (CMakeLists.txt); vector_kernels.cc runs it only where the CPU has them.
// Twice AVX2's elements an instruction: a quantize pair over BERT-base's
// [128, 768] activations took 6.2 us against 11.7 with AVX2 (one thread,
// Zen 5).
#include <immintrin.h>

#include "runtime/cpu/vector_kernels_impl.h"

// libmvec's erff under the x86-64 vector function ABI ('e': AVX-512).
extern "C" __m512 _ZGVeN16v_erff(__m512 x);

namespace tso::cpu {

namespace {

struct Avx512 {
  using R = __m512;
  static constexpr int kLanes = 16;
  static R set1(float v) { return _mm512_set1_ps(v); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R min(R a, R b) { return _mm512_min_ps(a, b); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  static R round_even(R a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static R nan_to(R a, R b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a, b);
  }
  // Levels in range, so truncating to bytes keeps them.
  template <class Q>
  static void store_levels(Q* p, R v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm512_maskz_cvtepi32_epi8(0xffff, _mm512_cvtps_epi32(v)));
  }
  template <class Q>
  static R load_levels(const Q* p) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm512_cvtepi32_ps(std::is_same_v<Q, uint8_t> ? _mm512_cvtepu8_epi32(b)
                                                         : _mm512_cvtepi8_epi32(b));
  }
  static R erf(R v) { return _ZGVeN16v_erff(v); }
};

}  // namespace

extern const VectorKernels kAvx512Kernels = VectorKernelsOf<Avx512>::kernels("avx512");

}  // namespace tso::cpu
