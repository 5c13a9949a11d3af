#include "runtime/cpu/measure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

namespace tso::cpu {
namespace {

// A run that sleeps `ms` milliseconds and counts itself in `runs`.
std::function<void()> sleeper(int ms, int* runs) {
  return [ms, runs] {
    ++*runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  };
}

TEST(Measure, ACandidateThatCannotWinStopsAfterItsWarmUp) {
  int runs = 0;
  EXPECT_GE(best_ms(sleeper(5, &runs), 1.0), 5.0);  // 1.5 times the bound is 1.5 ms
  EXPECT_EQ(runs, 1);
  runs = 0;
  EXPECT_GE(best_ms(sleeper(5, &runs), 10.0), 5.0);  // it may win: timed
  EXPECT_EQ(runs, 6);                                // one warm-up, five timed runs of 5 ms
  runs = 0;
  EXPECT_GE(best_ms(sleeper(210, &runs)), 210.0);
  EXPECT_EQ(runs, 2);  // one warm-up, one timed run past 50 ms
  runs = 0;
  EXPECT_GE(best_ms(sleeper(30, &runs)), 30.0);
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

// In rounds each candidate keeps its best: one disturbed timing does not
// decide, where a single round would.
TEST(Measure, RoundsKeepEachCandidatesBest) {
  const auto candidate = [](std::vector<double> times) {
    return [times, k = size_t(0)](double) mutable { return times[k++ % times.size()]; };
  };
  EXPECT_EQ(fastest("", "rounds 1", {candidate({5, 1, 5}), candidate({2, 2, 2})}), 1);
  EXPECT_EQ(fastest("", "rounds 3", {candidate({5, 1, 5}), candidate({2, 2, 2})}, 3), 0);
  // Candidate times count out of `runs` timed runs after one warm-up.
  int runs = 0;
  best_ms([&] { ++runs; }, kNotTimed, {}, 15);
  EXPECT_EQ(runs, 16);
}

// A cold candidate's flush runs before each of its runs, warm-up included.
TEST(Measure, PrepareRunsBeforeEachRun) {
  std::string order;
  best_ms([&] { order += 'r'; }, kNotTimed, [&] { order += 'p'; }, 3);
  EXPECT_EQ(order, "prprprpr");
}

}  // namespace
}  // namespace tso::cpu
