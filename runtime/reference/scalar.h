// Internal to runtime/reference: the scalar functions every operator is built
// from, for float and double (the true functions) and for Mod (the fixed
// polynomial surrogates and exact modular forms listed in executor.h). Each
// fused activation and each standalone operator calls the same function here,
// which is what makes relu(conv(x, w)) == conv(x, w; act=relu) exact.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>

#include "core/attrs.h"
#include "runtime/reference/tensor.h"

namespace tso::ref::fn {

template <class S>
concept Real = std::floating_point<S>;

// Modular constants of the surrogates, folded at compile time.
constexpr Mod m(int64_t x) { return Mod::from_signed(x); }
constexpr Mod inv(int64_t x) { return m(x).inverse(); }
static_assert(m(2) * inv(2) == m(1));

// A float constant (an attribute value such as gemm's alpha or layernorm's
// epsilon) as an S. Mod has no fractions: the nearest integer (halves away
// from zero), reduced mod p; the same rule converts stored weights, so a
// constant means the same thing as an attribute and as a weight. Non-finite
// values have no Mod image and map to 0 (the callers that accept infinities,
// clip's bounds, test for them first).
template <class S>
S constant(double x) {
  if constexpr (Real<S>) {
    return static_cast<S>(x);
  } else {
    if (!std::isfinite(x)) return Mod();
    // fmod of an integral double is exact, so huge values reduce correctly.
    return Mod::from_signed(static_cast<int64_t>(std::fmod(std::round(x), double(Mod::kP))));
  }
}

template <class S>
S zero() { return constant<S>(0); }
template <class S>
S one() { return constant<S>(1); }

// ---- float and double: the real functions --------------------------------

template <Real S> S relu(S x) { return x > S(0) ? x : S(0); }
template <Real S> S sigmoid(S x) { return S(1) / (S(1) + std::exp(-x)); }
template <Real S> S tanh(S x) { return std::tanh(x); }
template <Real S> S erf(S x) { return std::erf(x); }
template <Real S> S gelu(S x) {
  return S(0.5) * x * (S(1) + std::erf(x * static_cast<S>(0.70710678118654752440)));
}
template <Real S> S exp(S x) { return std::exp(x); }
template <Real S> S sqrt(S x) { return std::sqrt(x); }
template <Real S> S pow(S x, S y) { return std::pow(x, y); }
template <Real S> S div(S a, S b) { return a / b; }
template <Real S> S reciprocal(S x) { return S(1) / x; }
// The order used by max pooling and clip.
template <Real S> bool less(S a, S b) { return a < b; }

// ---- Mod: surrogates (keep in sync with the table in executor.h) ----------

inline Mod relu(Mod x) { return (x * x + x) * inv(2); }
inline Mod sigmoid(Mod x) {
  return inv(2) + x * inv(4) - x * x * x * inv(48);
}
inline Mod tanh(Mod x) { return x - x * x * x * inv(3); }
inline Mod erf(Mod x) {
  Mod x2 = x * x;
  return x * (m(1) - x2 * inv(3) + x2 * x2 * inv(10));
}
inline Mod gelu(Mod x) { return x * (m(1) + erf(x)) * inv(2); }
inline Mod exp(Mod x) { return m(1) + x + x * x * inv(2) + x * x * x * inv(6); }
inline Mod sqrt(Mod x) { return (m(3) + m(6) * x - x * x) * inv(8); }
// Exact for integer exponents: y is read as the signed integer it stands for;
// a negative exponent raises the inverse (0 stays 0, and 0^0 = 1).
inline Mod pow(Mod x, Mod y) {
  int64_t e = y.to_signed();
  return e >= 0 ? x.pow(static_cast<uint64_t>(e)) : x.inverse().pow(static_cast<uint64_t>(-e));
}
inline Mod reciprocal(Mod x) { return x.inverse(); }
inline Mod div(Mod a, Mod b) { return a * b.inverse(); }
// Signed-representative order: exact, deterministic, and equal to the order of
// the integers when the values are small, as in hand-written tests.
inline bool less(Mod a, Mod b) { return a.to_signed() < b.to_signed(); }

template <class S>
S neg(S x) { return -x; }

// Clip with bounds given as doubles; an infinite bound does not clip, which
// is how the defaults (-inf, inf) are represented.
template <class S>
S clip(S x, double lo, double hi) {
  if (lo > -std::numeric_limits<double>::infinity() && less(x, constant<S>(lo))) x = constant<S>(lo);
  if (hi < std::numeric_limits<double>::infinity() && less(constant<S>(hi), x)) x = constant<S>(hi);
  return x;
}

}  // namespace tso::ref::fn
