#include "runtime/cpu/measure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tso::cpu {
namespace {

TEST(Measure, ACandidateThatCannotWinStopsAfterItsWarmUp) {
  int runs = 0;
  const auto slow = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  EXPECT_GE(best_ms(slow, 1.0), 5.0);  // 1.5 times the bound is 1.5 ms
  EXPECT_EQ(runs, 1);
  runs = 0;
  EXPECT_GE(best_ms(slow, 10.0), 5.0);  // it may win: timed
  EXPECT_EQ(runs, 6);                   // one warm-up, five timed runs of 5 ms
  runs = 0;
  const auto long_run = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(210));
  };
  EXPECT_GE(best_ms(long_run), 210.0);
  EXPECT_EQ(runs, 2);  // one warm-up, one timed run past 50 ms
  runs = 0;
  const auto medium_run = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  EXPECT_GE(best_ms(medium_run), 30.0);
  EXPECT_EQ(runs, 3);  // one warm-up, two timed runs adding up to 60 ms
}

TEST(Measure, EachCandidateIsBoundByTheBestBeforeIt) {
  std::vector<double> bounds;
  const auto candidate = [&](double ms) {
    return [&bounds, ms](double bound) {
      bounds.push_back(bound);
      return ms;
    };
  };
  EXPECT_EQ(fastest("", "measure test", {candidate(3), candidate(1), candidate(2)}), 1);
  EXPECT_EQ(bounds, (std::vector<double>{kNotTimed, 3, 1}));
  bounds.clear();
  EXPECT_EQ(fastest("", "measure test", {candidate(3), candidate(1), candidate(2)}), 1);
  EXPECT_TRUE(bounds.empty());  // remembered for the process
}

}  // namespace
}  // namespace tso::cpu
