// Which timed runs measure the operator: the scheduler's tallies of the
// process's threads, and the rule that keeps a run.
#include "runtime/cpu/interference.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tso::cpu {
namespace {

TEST(Interference, RunWithoutPreemptionCounts) {
  EXPECT_TRUE(undisturbed({3, 1.0}, {3, 9.0}, 1.0));
  EXPECT_TRUE(undisturbed({3, std::nullopt}, {3, std::nullopt}, 1.0));
}

TEST(Interference, PreemptedRunCountsWhenItsThreadsBarelyWaited) {
  EXPECT_TRUE(undisturbed({3, 10.0}, {4, 10.05}, 100.0));   // 50 us of a 100 ms run
  EXPECT_FALSE(undisturbed({3, 10.0}, {4, 14.0}, 100.0));   // a 4 ms time slice
  EXPECT_FALSE(undisturbed({3, 10.0}, {4, 10.05}, 1.0));    // 5% of a 1 ms run
  EXPECT_FALSE(undisturbed({3, std::nullopt}, {4, std::nullopt}, 100.0));  // no waits known
}

// More spinning threads than cores wait for one another: the tally sees it.
TEST(Interference, TallyCountsWaitsOfCompetingThreads) {
  const SchedulerTally before = scheduler_tally();
  ASSERT_TRUE(before.waited_ms.has_value()) << "/proc/self/task/*/schedstat unreadable";
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (unsigned i = 0; i < 2 * std::max(2u, std::thread::hardware_concurrency()); ++i)
    hogs.emplace_back([&] {
      volatile unsigned long x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const SchedulerTally during = scheduler_tally();
  stop = true;
  for (std::thread& t : hogs) t.join();
  ASSERT_TRUE(during.waited_ms.has_value());
  EXPECT_GT(*during.waited_ms - *before.waited_ms, 10.0);
  EXPECT_FALSE(undisturbed(before, during, 300.0));
}

}  // namespace
}  // namespace tso::cpu
