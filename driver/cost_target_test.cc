// The speed check's timing: opt::kCheckPairs pairs of freshly planned
// executors, opt::kCheckRounds rounds each, joined and judged over all of
// them (opt::optimized_wins: four rounds in five), and a second stage as long
// where the first is too close to call (time_in_stages).
#include "driver/cost_target.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// Pairs in which the optimized graph (9.4 ms against 10) loses the rounds
// numbered in `lost` (counted over every pair asked for, in order).
CompareRounds losing(std::vector<int> lost, int* pairs) {
  return [lost, pairs](const Graph& a, const Graph&, int rounds) {
    cpu::Comparison p = steady(rounds, 10, 9.4);
    for (int r = 0; r < rounds; ++r)
      if (std::count(lost.begin(), lost.end(), *pairs * rounds + r)) p.b_round_min_ms[r] = 10.2;
    ++*pairs;
    return Expected<cpu::Comparison>(&a == &kOptimized ? cpu::swapped(p) : p);
  };
}

TEST(SpeedCheck, AFirstStageWonInTwelveRoundsIsNotTimedFurther) {
  int pairs = 0;
  Expected<opt::SpeedCheck> s = time_in_stages(kInput, kOptimized, losing({0, 5, 10}, &pairs));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(pairs, 5);
  EXPECT_EQ(s->stages, 1);
  EXPECT_EQ(s->rounds_faster, 12);
  EXPECT_FALSE(s->kept_input);
}

// Won in 10 of 15 rounds, faster by both figures: too close to call, so 15
// more rounds are timed and all 30 judged (22 needed).
TEST(SpeedCheck, AFirstStageTooCloseToCallIsTimedAgainAndJudgedWithTheSecond) {
  for (const auto& [lost, written] : std::vector<std::pair<std::vector<int>, bool>>{
           {{0, 3, 6, 9, 12, 15, 18, 21}, true}, {{0, 3, 6, 9, 12, 15, 18, 21, 24}, false}}) {
    int pairs = 0;
    Expected<opt::SpeedCheck> s = time_in_stages(kInput, kOptimized, losing(lost, &pairs));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(pairs, 10);
    EXPECT_EQ(s->stages, 2);
    EXPECT_EQ(s->rounds, 30);
    EXPECT_EQ(s->rounds_faster, 30 - static_cast<int>(lost.size()));
    EXPECT_EQ(s->kept_input, !written);
  }
}

TEST(SpeedCheck, AFirstStageWonInEightRoundsIsLostWithoutASecond) {
  int pairs = 0;
  Expected<opt::SpeedCheck> s =
      time_in_stages(kInput, kOptimized, losing({0, 1, 2, 3, 4, 5, 6}, &pairs));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(pairs, 5);
  EXPECT_EQ(s->stages, 1);
  EXPECT_EQ(s->rounds_faster, 8);
  EXPECT_TRUE(s->kept_input);
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

// The operators are timed with their weights cached only when the steady
// state is faster than the evicted runs and their sum timed so is the
// nearer one to it (figures of NasRNN before and after its one-row kernel).
TEST(WeightResidency, TheTimingWhoseSumIsNearerTheSteadyStateIsTaken) {
  std::vector<bool> asked;
  const auto sums = [&](double cached_ms, double from_memory_ms) {
    return [&asked, cached_ms, from_memory_ms](bool cached) {
      asked.push_back(cached);
      return cached ? cached_ms : from_memory_ms;
    };
  };
  cpu::WeightResidency partly{.warm_ms = 1.74, .evicted_ms = 2.09};
  EXPECT_FALSE(time_weights_cached(partly, sums(0.71, 1.44)));
  EXPECT_EQ(asked, (std::vector<bool>{true, false}));
  cpu::WeightResidency fully{.warm_ms = 1.55, .evicted_ms = 2.6};
  EXPECT_TRUE(time_weights_cached(fully, sums(1.4, 2.4)));
  asked.clear();
  cpu::WeightResidency from_memory{.warm_ms = 2.33, .evicted_ms = 2.47};
  EXPECT_FALSE(time_weights_cached(from_memory, sums(1.0, 2.0)));
  EXPECT_TRUE(asked.empty());
}

}  // namespace
}  // namespace tso::driver
