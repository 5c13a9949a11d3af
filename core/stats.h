// Summary statistics of timings.
#pragma once

#include <algorithm>
#include <vector>

namespace tso {

// The median of `v` (the mean of the middle two for an even count); 0 for
// none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace tso
