// Dense host tensors for the reference executor, and the exact modular
// scalar used for fingerprints.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/types.h"

namespace tso::ref {

// Integers modulo the Mersenne prime p = 2^31 - 1, exact under +, -, * and
// division by non-zero values. Non-linear operators evaluate fixed polynomial
// surrogates on this type (see executor.h), so equal fingerprints mean equal
// multilinear structure, never float coincidence.
//
// The arithmetic is inline and constexpr: it sits in the inner loops of the
// Mod convolution and matrix product, and the surrogates' constants (1/2,
// 1/48, ...) are computed at compile time.
struct Mod {
  static constexpr uint64_t kP = (uint64_t{1} << 31) - 1;
  uint32_t v = 0;  // canonical representative, always in [0, p)

  constexpr Mod() = default;
  constexpr explicit Mod(uint64_t x) : v(static_cast<uint32_t>(x % kP)) {}
  static constexpr Mod from_signed(int64_t x) {
    int64_t r = x % static_cast<int64_t>(kP);
    return Mod(static_cast<uint64_t>(r < 0 ? r + static_cast<int64_t>(kP) : r));
  }
  // The representative in (-p/2, p/2): how Mod values are ordered (maxpool,
  // clip) and how a pow exponent is read, so small negative integers behave
  // like the numbers they stand for.
  constexpr int64_t to_signed() const {
    return v > kP / 2 ? static_cast<int64_t>(v) - static_cast<int64_t>(kP) : v;
  }

  // Reduces x < 2^62 (a product of two canonical values) mod p without a
  // division: 2^31 = 1 (mod p), so the high bits fold onto the low ones.
  static constexpr uint32_t reduce(uint64_t x) {
    x = (x & kP) + (x >> 31);  // < 2^32
    x = (x & kP) + (x >> 31);  // <= p
    return static_cast<uint32_t>(x >= kP ? x - kP : x);
  }

  friend constexpr Mod operator+(Mod a, Mod b) {
    uint32_t s = a.v + b.v;  // < 2^32: no overflow
    return raw(s >= kP ? s - static_cast<uint32_t>(kP) : s);
  }
  friend constexpr Mod operator-(Mod a, Mod b) {
    return raw(a.v >= b.v ? a.v - b.v : a.v + static_cast<uint32_t>(kP) - b.v);
  }
  friend constexpr Mod operator*(Mod a, Mod b) {
    return raw(reduce(static_cast<uint64_t>(a.v) * b.v));
  }
  friend constexpr Mod operator-(Mod a) { return Mod() - a; }

  // x^e by repeated squaring; x^0 = 1 (0^0 included).
  constexpr Mod pow(uint64_t e) const {
    Mod r = raw(1), b = *this;
    for (; e; e >>= 1, b = b * b)
      if (e & 1) r = r * b;
    return r;
  }
  // The multiplicative inverse (Fermat: x^(p-2)). Total: 0 maps to 0, so a
  // division by zero in a fingerprint is a deterministic value, not a trap.
  constexpr Mod inverse() const { return pow(kP - 2); }

  constexpr Mod& operator+=(Mod b) { return *this = *this + b; }
  constexpr Mod& operator-=(Mod b) { return *this = *this - b; }
  constexpr Mod& operator*=(Mod b) { return *this = *this * b; }
  friend constexpr bool operator==(Mod a, Mod b) { return a.v == b.v; }

 private:
  static constexpr Mod raw(uint32_t v) {
    Mod m;
    m.v = v;
    return m;
  }
};

template <class S>
struct Tensor {
  Shape shape;
  std::vector<S> data;  // row-major

  Tensor() = default;
  explicit Tensor(Shape s) : shape(s), data(static_cast<size_t>(s.numel())) {}
  Tensor(Shape s, std::vector<S> d) : shape(s), data(std::move(d)) {}
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  friend bool operator==(const Tensor&, const Tensor&) = default;
};

}  // namespace tso::ref
