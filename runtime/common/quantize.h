// The element formulas of quantize_linear and dequantize_linear (core/ops.h)
// and the parameter each element takes, shared by runtime/reference and
// runtime/cpu, so that both round and saturate alike.
#pragma once

#include <cmath>
#include <cstdint>

namespace tso::rt {

// The range of a quantized element type: [0, 255] for u8, [-128, 127] for i8.
struct QuantRange {
  int lo, hi;
};
constexpr QuantRange kU8Range{0, 255}, kI8Range{-128, 127};

// saturate(round(x / scale) + zero_point), rounding half to even (the
// default rounding mode); NaN quantizes to the zero point. T is float or
// double: the reference executor's f64 evaluation divides in f64.
template <class T>
int quantize_value(T x, T scale, int zero_point, QuantRange r) {
  const T q = std::nearbyint(x / scale) + static_cast<T>(zero_point);
  if (q != q) return zero_point;
  if (q <= static_cast<T>(r.lo)) return r.lo;
  if (q >= static_cast<T>(r.hi)) return r.hi;
  return static_cast<int>(q);
}

template <class T>
T dequantize_value(int64_t x, T scale, int64_t zero_point) {
  return static_cast<T>(x - zero_point) * scale;
}

// Which scale and zero point element `i` of a row-major tensor takes: the
// only one (per tensor), or the one of its index along the axis, whose
// extent is `extent` with `inner` elements after it.
struct QuantParams {
  int64_t extent = 1, inner = 1;  // extent 1: per tensor
  int64_t index(int64_t i) const { return extent == 1 ? 0 : (i / inner) % extent; }
};

}  // namespace tso::rt
