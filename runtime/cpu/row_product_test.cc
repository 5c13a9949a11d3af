#include "runtime/cpu/row_product.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace tso::cpu {
namespace {

// Against the sum in double, for widths that fill panels exactly, leave a
// panel's tail, and fit in one; weights stored [K, N] and [N, K].
TEST(RowProduct, MatchesTheSumForEveryPanelWidthAndBothWeightLayouts) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {5, 3}, {64, 64}, {37, 130}, {512, 512}, {3, 200}}) {
    for (bool transposed : {false, true}) {
      SCOPED_TRACE("k " + std::to_string(k) + " n " + std::to_string(n) +
                   (transposed ? " transposed" : ""));
      std::vector<float> x(k), w(k * n);
      for (float& v : x) v = dist(rng);
      for (float& v : w) v = dist(rng);
      std::vector<float> packed(row_panel_floats(k, n), -1.f);
      pack_row_panels(w.data(), k, n, transposed, packed.data());
      std::vector<float> y(n + 1, 42.f);
      row_product(x.data(), packed.data(), k, n, y.data());
      for (int64_t c = 0; c < n; ++c) {
        double want = 0;
        for (int64_t i = 0; i < k; ++i)
          want += double(x[i]) * (transposed ? w[c * k + i] : w[i * n + c]);
        ASSERT_NEAR(y[c], want, 1e-5 * std::max(1.0, std::sqrt(double(k)))) << "column " << c;
      }
      EXPECT_EQ(y[n], 42.f) << "wrote past column n";
    }
  }
}

}  // namespace
}  // namespace tso::cpu
