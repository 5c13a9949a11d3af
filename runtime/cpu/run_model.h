// What `tso run MODEL --device cpu` does: plan the graph on the CPU runtime,
// run the inputs once, then time many runs and report the minimum and median
// latency and the memory the plan holds. Plain C++ header; cli/run.cc calls it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cpu/executor.h"

namespace tso::cpu {

struct RunOptions {
  int iters = 50;            // timed runs
  int warmup = 5;            // untimed runs before them
  int threads = 0;           // 0: all cores
  int profile_iters = 0;     // > 0: also time every step over that many runs
  std::string choices_file;  // ExecutorOptions::choices_file
  // Values of the graph's input nodes (Op::Input, in input-node order).
  std::vector<WeightData> inputs;
};

struct RunReport {
  std::string library;  // Executor::library_info()
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int iters = 0;
  double plan_ms = 0;  // creating the executor (primitives, weight reorders)
  ExecutorStats stats;
  std::vector<StepTime> steps;      // with profile_iters > 0, slowest first
  std::vector<WeightData> outputs;  // of the first run, in graph output order
};

// Takes the graph: its weights are given up as the executor copies them
// (Executor::create_releasing_weights), so a caller that moves its graph in
// holds the model's weights once.
Expected<RunReport> run_model(Graph g, const RunOptions& options);

// Two graphs of the same function timed end to end on this runtime, as
// `tso optimize` does before it writes its result: both planned, fed the same
// seeded random inputs, then rounds of `runs` timed runs of each after
// warm-up, in the order a, b; b, a; a, b; ... (timed_first): a host whose
// speed drifts within the check favours neither graph. Both executors live in
// one process: they share the one OpenMP team, so neither has a pool
// spinning beside the other, and the weight copies both graphs read
// (constant_store.h), so the check holds the model's weights once.
struct CompareOptions {
  int rounds = 5;
  int runs = 5;
  int threads = 0;
  uint64_t seed = 1;
  std::string choices_file;  // ExecutorOptions::choices_file
};

struct Comparison {
  double a_min_ms = 0, b_min_ms = 0;        // minimum over every timed run
  double a_median_ms = 0, b_median_ms = 0;  // median of the rounds' medians
  int rounds = 0, runs = 0;
  std::vector<double> a_round_min_ms, b_round_min_ms;        // each round's minimum
  std::vector<double> a_round_median_ms, b_round_median_ms;  // each round's median
};

// The rounds of `x` then of `y` (of the same graphs and runs per round) as
// one comparison: minimums over both, the median of every round's median.
Comparison joined(const Comparison& x, const Comparison& y);

// `c` with the roles of its two graphs exchanged.
Comparison swapped(const Comparison& c);

// Whether a model's weights stay in the caches between its runs, measured
// on the model itself: rounds that time it run after run (its steady state)
// and with its constants evicted before each run (Executor::
// evict_constants), alternating. Where the steady state is no faster than
// the evicted runs, the weights come from memory anyway; where it is, they
// stay cached (NasRNN's 84 MB: 1.55 against 2.6 ms), and its operators are
// timed so (ProfileOptions::weights_cached). A probe of the last-level
// cache's capacity was tried first and dropped: on this host its reading
// moved from 32 to 201 MB within minutes, and it read 48 to 64 MB while 80
// chained 1 MB products ran from the cache.
struct WeightResidency {
  double warm_ms = 0;     // minimum, run after run
  double evicted_ms = 0;  // minimum, constants evicted before each run
  int64_t weight_bytes = 0;
  // The steady state faster than the evicted runs by more than 10%.
  bool cached() const { return warm_ms < 0.9 * evicted_ms; }
};
Expected<WeightResidency> measure_weight_residency(const Graph& g, int threads,
                                                   const std::string& choices_file);

// Which graph round `round` of compare_graphs times first: 0 (a) in even
// rounds, 1 (b) in odd ones. With a fixed order, a host whose speed drifts
// one way during the check favours the same graph in every round. (Seen
// before the change, cause not established: ResNet-50's search result,
// predicted 0.1% cheaper, won all three rounds by 16% and was written, then
// ran 3% slower in the experiments' rounds.)
int timed_first(int round);

// Errors: either graph cannot run here (an opaque node, a missing weight).
Expected<Comparison> compare_graphs(const Graph& a, const Graph& b, const CompareOptions& options);

// The lines `tso run` prints, e.g.
//   device       cpu, 2 threads, oneDNN 3.2.0, avx2
//   latency      median 58.123 ms (min 55.210, max 60.331) over 50 runs
//   memory       peak 120.3 MiB: weights, inputs and constants 97.5 MiB, arena 12.3 MiB,
//   scratchpad 1.0 MiB plan         163 steps, 54 fused nodes, 12 reorders, 10 views; planned in
//   812 ms
std::string format_run_report(const RunReport& r);

}  // namespace tso::cpu
