// The speed check's timing: opt::kCheckPairs pairs of freshly planned
// executors, opt::kCheckRounds rounds each, joined and judged over all of
// them (opt::optimized_wins: four rounds in five).
#include "driver/cost_target.h"

#include <gtest/gtest.h>

#include <vector>

namespace tso::driver {
namespace {

// `rounds` rounds in which the input (a) and the optimized graph (b) take
// `a_ms` and `b_ms`, minimum and median alike.
cpu::Comparison steady(int rounds, double a_ms, double b_ms) {
  cpu::Comparison c;
  c.rounds = rounds;
  c.runs = 5;
  c.a_min_ms = c.a_median_ms = a_ms;
  c.b_min_ms = c.b_median_ms = b_ms;
  c.a_round_min_ms = c.a_round_median_ms = std::vector<double>(rounds, a_ms);
  c.b_round_min_ms = c.b_round_median_ms = std::vector<double>(rounds, b_ms);
  return c;
}

const Graph kInput, kOptimized;

TEST(SpeedCheck, TimesFivePairsOfThreeRoundsPlanningTheOptimizedGraphFirstEveryOtherPair) {
  std::vector<std::pair<int, bool>> asked;
  Expected<cpu::Comparison> c =
      compare_in_pairs(kInput, kOptimized, [&](const Graph& a, const Graph&, int rounds) {
        const bool optimized_first = &a == &kOptimized;
        asked.emplace_back(rounds, optimized_first);
        // The optimized graph takes 9 ms wherever it is timed.
        return Expected<cpu::Comparison>(optimized_first ? steady(rounds, 9, 10)
                                                         : steady(rounds, 10, 9));
      });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(asked, (std::vector<std::pair<int, bool>>{
                       {3, false}, {3, true}, {3, false}, {3, true}, {3, false}}));
  EXPECT_EQ(c->rounds, 15);
  EXPECT_EQ(speed_figures(*c).rounds_faster, 15);
  EXPECT_FALSE(speed_figures(*c).kept_input);
}

// Faster by both figures in every pair, but in how many rounds: 12 of 15 is
// written, 11 is not.
TEST(SpeedCheck, AGraphFasterInTwelveOfFifteenRoundsIsWrittenInElevenNot) {
  for (int lost : {3, 4}) {
    int pair = 0;
    Expected<cpu::Comparison> c =
        compare_in_pairs(kInput, kOptimized, [&](const Graph& a, const Graph&, int rounds) {
          cpu::Comparison p = steady(rounds, 10, 9.4);
          for (int r = 0; r < rounds && pair * rounds + r < lost; ++r) p.b_round_min_ms[r] = 10.2;
          ++pair;
          return Expected<cpu::Comparison>(&a == &kOptimized ? cpu::swapped(p) : p);
        });
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(speed_figures(*c).rounds_faster, 15 - lost);
    EXPECT_EQ(speed_figures(*c).kept_input, lost == 4);
  }
}

TEST(SpeedCheck, APairThatCannotBeTimedIsAnError) {
  int pairs = 0;
  Expected<cpu::Comparison> c =
      compare_in_pairs(kInput, kOptimized, [&](const Graph&, const Graph&, int rounds) {
        if (++pairs == 2) return Expected<cpu::Comparison>(Error{"weight 'w' has no data"});
        return Expected<cpu::Comparison>(steady(rounds, 10, 9));
      });
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "weight 'w' has no data");
  EXPECT_EQ(pairs, 2);
}

}  // namespace
}  // namespace tso::driver
