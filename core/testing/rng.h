// The seeded generator of core/testing: splitmix64, tiny and the same on
// every platform, unlike std:: distributions, so a seed names one test case
// everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tso::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(size_t n) { return static_cast<int>(next() % n); }
  int64_t range(int64_t lo, int64_t hi) { return lo + below(static_cast<size_t>(hi - lo + 1)); }
  bool chance(int percent) { return below(100) < percent; }
  // Uniform in [lo, hi), from the top 53 bits.
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint64_t s_;
};

}  // namespace tso::testing
