// AVX2's 8 lanes, and the choice of the widest set the CPU runs.
#include "runtime/cpu/vector_kernels.h"

#ifdef __AVX2__
#include <immintrin.h>

#include "runtime/cpu/vector_kernels_impl.h"

// glibc's vector math library (libmvec, glibc 2.35 on): erff on eight lanes
// under the x86-64 vector function ABI ('d': AVX2).
extern "C" __m256 _ZGVdN8v_erff(__m256 x);
#endif

namespace tso::cpu {

#ifdef TSO_AVX512_KERNELS
extern const VectorKernels kAvx512Kernels;  // vector_kernels_avx512.cc
#endif

namespace {

#ifdef __AVX2__
struct Avx2 {
  using R = __m256;
  static constexpr int kLanes = 8;
  static R set1(float v) { return _mm256_set1_ps(v); }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  static R round_even(R a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static R nan_to(R a, R b) { return _mm256_blendv_ps(a, b, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
  // Levels in range, so the saturating packs keep them.
  template <class Q>
  static void store_levels(Q* p, R v) {
    const __m256i i = _mm256_cvtps_epi32(v);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    const __m128i b = std::is_same_v<Q, uint8_t> ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
  }
  template <class Q>
  static R load_levels(const Q* p) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi32_ps(std::is_same_v<Q, uint8_t> ? _mm256_cvtepu8_epi32(b)
                                                         : _mm256_cvtepi8_epi32(b));
  }
  static R erf(R v) { return _ZGVdN8v_erff(v); }
};

constexpr VectorKernels kAvx2Kernels = VectorKernelsOf<Avx2>::kernels("avx2");
#endif

// Without AVX2 (TSO_NATIVE off) the callers' scalar formulas do everything.
const VectorKernels kNoKernels{
    "none",
    [](const float*, QuantLevels, float*, int64_t) -> int64_t { return 0; },
    [](const float*, QuantLevels, uint8_t*, int64_t) -> int64_t { return 0; },
    [](const float*, QuantLevels, int8_t*, int64_t) -> int64_t { return 0; },
    [](const uint8_t*, float, int, float*, int64_t) -> int64_t { return 0; },
    [](const int8_t*, float, int, float*, int64_t) -> int64_t { return 0; },
    [](const float*, float*, int64_t) -> int64_t { return 0; }};

bool has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

}  // namespace

std::vector<const VectorKernels*> runnable_vector_kernels() {
  std::vector<const VectorKernels*> sets;
#ifdef TSO_AVX512_KERNELS
  if (has_avx512()) sets.push_back(&kAvx512Kernels);
#endif
#ifdef __AVX2__
  sets.push_back(&kAvx2Kernels);
#endif
  sets.push_back(&kNoKernels);
  return sets;
}

bool avx512_kernels_run() {
#ifdef TSO_AVX512_KERNELS
  return has_avx512();
#else
  return false;
#endif
}

const VectorKernels& vector_kernels() {
  static const VectorKernels* widest = runnable_vector_kernels().front();
  return *widest;
}

}  // namespace tso::cpu
