// What the scheduler took from this process's threads while a run was
// timed, so that the profiler keeps only runs that measure the operator.
//
// An involuntary context switch alone does not disturb a run: on an idle
// machine a kernel thread takes a core for tens of microseconds about every
// 100 ms, so every timed run of a batch-16 convolution was "preempted" and
// such signatures were never measured. What delays a run is the time its
// threads wait, runnable, for a core (schedstat's run_delay): one waiting
// thread holds the others at the next barrier for that long.
#pragma once

#include <optional>

namespace tso::cpu {

// What the scheduler did to this process's threads so far.
struct SchedulerTally {
  long preemptions = 0;  // involuntary context switches (getrusage)
  // Milliseconds the threads waited, runnable, for a core
  // (/proc/self/task/*/schedstat); nullopt where the kernel does not say.
  std::optional<double> waited_ms;
};

SchedulerTally scheduler_tally();

// The share of a run's time its threads may have waited for a core in all
// for the run to count: it is then within 1% of an undisturbed run.
inline constexpr double kMaxWaitedShare = 0.01;

// Whether a run that took `run_ms` between the tallies `before` and `after`
// measures the operator: no thread was preempted, or (where the kernel
// reports waits) the threads waited at most kMaxWaitedShare of `run_ms`.
bool undisturbed(const SchedulerTally& before, const SchedulerTally& after, double run_ms);

}  // namespace tso::cpu
