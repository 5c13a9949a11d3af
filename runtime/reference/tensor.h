// Dense host tensors for the reference executor, and the exact modular
// scalar used for fingerprints.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace tso::ref {

// Integers modulo the Mersenne prime p = 2^31 - 1, exact under +, -, * and
// division by non-zero values. Non-linear operators evaluate fixed polynomial
// surrogates on this type (see executor.h), so equal fingerprints mean equal
// multilinear structure, never float coincidence.
struct Mod {
  static constexpr uint64_t kP = (uint64_t{1} << 31) - 1;
  uint32_t v = 0;

  constexpr Mod() = default;
  constexpr explicit Mod(uint64_t x) : v(static_cast<uint32_t>(x % kP)) {}
  static Mod from_signed(int64_t x);

  friend Mod operator+(Mod a, Mod b);
  friend Mod operator-(Mod a, Mod b);
  friend Mod operator*(Mod a, Mod b);
  friend Mod operator-(Mod a);
  Mod inverse() const;  // v != 0
  Mod& operator+=(Mod b) { return *this = *this + b; }
  Mod& operator*=(Mod b) { return *this = *this * b; }
  friend bool operator==(Mod a, Mod b) { return a.v == b.v; }
};

template <class S>
struct Tensor {
  Shape shape;
  std::vector<S> data;  // row-major

  Tensor() = default;
  explicit Tensor(Shape s) : shape(s), data(static_cast<size_t>(s.numel())) {}
  Tensor(Shape s, std::vector<S> d) : shape(s), data(std::move(d)) {}
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
};

}  // namespace tso::ref
