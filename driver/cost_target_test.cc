// The speed check's close calls: a win by less than opt::kCloseMargin, or by
// that much more than predicted, is timed again for twice its rounds and
// judged over all of them; anything else is judged as it was timed.
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

TEST(SpeedCheck, ACloseWinIsTimedAgainAndJudgedOverEveryRound) {
  std::vector<int> asked;
  // Again, the optimized graph is slower: over all 9 rounds it does not win.
  Expected<cpu::Comparison> c = retime_close_call(steady(3, 10, 9.5), 1, [&](int rounds) {
    asked.push_back(rounds);
    return Expected<cpu::Comparison>(steady(rounds, 10, 10.5));
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(asked, (std::vector<int>{6}));
  EXPECT_EQ(c->rounds, 9);
  EXPECT_EQ(speed_figures(*c).rounds_faster, 3);
  EXPECT_TRUE(speed_figures(*c).kept_input);
}

TEST(SpeedCheck, AClearWinOrALossIsNotTimedAgain) {
  int asked = 0;
  const CompareRounds compare = [&](int rounds) {
    ++asked;
    return Expected<cpu::Comparison>(steady(rounds, 10, 10));
  };
  for (double b_ms : {8.5, 10.5}) {
    Expected<cpu::Comparison> c = retime_close_call(steady(3, 10, b_ms), 0.85, compare);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->rounds, 3);
  }
  EXPECT_EQ(asked, 0);
}

// A win by 15% where the cost model predicts 1%: timed again, and judged
// over all nine rounds.
TEST(SpeedCheck, AWinBeyondThePredictionIsTimedAgain) {
  std::vector<int> asked;
  Expected<cpu::Comparison> c = retime_close_call(steady(3, 10, 8.5), 0.99, [&](int rounds) {
    asked.push_back(rounds);
    return Expected<cpu::Comparison>(steady(rounds, 10, 10.2));
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(asked, (std::vector<int>{6}));
  EXPECT_TRUE(speed_figures(*c).kept_input);
}

TEST(SpeedCheck, AFailedRetimingIsAnError) {
  Expected<cpu::Comparison> c = retime_close_call(steady(3, 10, 9.5), 1, [](int) {
    return Expected<cpu::Comparison>(Error{"weight 'w' has no data"});
  });
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "weight 'w' has no data");
}

}  // namespace
}  // namespace tso::driver
