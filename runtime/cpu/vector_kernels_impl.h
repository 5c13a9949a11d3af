// The kernels of vector_kernels.h over a vector type V, written once:
// vector_kernels.cc instantiates them with AVX2's 8 lanes, and
// vector_kernels_avx512.cc, compiled for AVX-512, with its 16. V provides
// kLanes, set1, load, store, div, mul, add, sub, min, max, round_even (half
// to even), nan_to (NaN lanes replaced), load_levels and store_levels (bytes
// to and from floats holding integers) and erf. Internal to runtime/cpu.
#pragma once

#include <type_traits>

#include "runtime/cpu/vector_kernels.h"

namespace tso::cpu {

template <class V>
struct VectorKernelsOf {
  using R = typename V::R;

  // rt::quantize_value of each lane: the same division and rounding, NaN to
  // the zero point, the clamp; as floats holding the levels.
  struct Levels {
    R scale, zero, lo, hi;
    explicit Levels(QuantLevels q)
        : scale(V::set1(q.scale)),
          zero(V::set1(static_cast<float>(q.zero))),
          lo(V::set1(static_cast<float>(q.range.lo))),
          hi(V::set1(static_cast<float>(q.range.hi))) {}
    R of(const float* x) const {
      const R q = V::nan_to(V::add(V::round_even(V::div(V::load(x), scale)), zero), zero);
      return V::min(V::max(q, lo), hi);
    }
  };

  static int64_t fake_quantize(const float* x, QuantLevels q, float* y, int64_t n) {
    const Levels l(q);
    int64_t i = 0;
    for (; i + V::kLanes <= n; i += V::kLanes)
      V::store(y + i, V::mul(V::sub(l.of(x + i), l.zero), l.scale));
    return i;
  }

  template <class Q>
  static int64_t quantize(const float* x, QuantLevels q, Q* y, int64_t n) {
    const Levels l(q);
    int64_t i = 0;
    for (; i + V::kLanes <= n; i += V::kLanes) V::store_levels(y + i, l.of(x + i));
    return i;
  }

  // (x - zero) * scale: x - zero is exact in float for bytes.
  template <class Q>
  static int64_t dequantize(const Q* x, float scale, int zero, float* y, int64_t n) {
    const R s = V::set1(scale), z = V::set1(static_cast<float>(zero));
    int64_t i = 0;
    for (; i + V::kLanes <= n; i += V::kLanes)
      V::store(y + i, V::mul(V::sub(V::load_levels(x + i), z), s));
    return i;
  }

  static int64_t erf(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + V::kLanes <= n; i += V::kLanes) V::store(y + i, V::erf(V::load(x + i)));
    return i;
  }

  static constexpr VectorKernels kernels(const char* isa) {
    return {isa,
            &fake_quantize,
            &quantize<uint8_t>,
            &quantize<int8_t>,
            &dequantize<uint8_t>,
            &dequantize<int8_t>,
            &erf};
  }
};

}  // namespace tso::cpu
