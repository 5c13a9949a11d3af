// Plan-time measurements that choose between implementations of one
// operator (inner product or matmul; direct or Winograd convolution): each
// candidate runs on scratch buffers of its own, and the fastest wins. Choices
// are remembered per shape for the process, so repeated shapes (BERT's
// twelve layers, ResNet's repeated blocks) are timed once, and with
// ExecutorOptions::choices_file across processes. Internal to runtime/cpu.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cpu/builder.h"

namespace tso::cpu {

constexpr double kNotTimed = 1e300;

// Best time of `run` in milliseconds over up to `runs` runs after one warm-up,
// stopping once the timed runs add up to 50 ms: a batch-16 convolution's
// candidates differ by far more than the spread of its runs, and at 200 ms
// choosing kernels took half the time of measuring CSRNet's batch-16
// signatures. A warm-up slower than 1.5 times
// `bound` (the best candidate so far) is the time: the candidate cannot win,
// and timing it further would cost more than the winner's runs. `prepare`,
// when set, runs untimed before each run.
double best_ms(const std::function<void()>& run, double bound = kNotTimed,
               const std::function<void()>& prepare = {}, int runs = 5);

// Runs a candidate timed cold takes, with no bound: a product of one row
// reads 1 MB in 30 us, and its first run in a process can take twice that.
// With 5 runs and the bound, 3 of 42 fresh choices of NasRNN's products over
// 6 plans fell on a slower implementation; with 15 and no bound, 3 of 56
// over 8; in 3 rounds as well (fastest's `rounds`), 2 of 56 over 8, each
// on the matmul where the plan most often chose tso's kernel.
constexpr int kColdRuns = 15;

// Whether scratch buffers of `bytes` may be allocated to time a candidate:
// at most half the memory available, so that measuring never exhausts the
// machine before the plan's own memory check (a candidate that cannot be
// timed is not chosen).
bool can_time(int64_t bytes);

// Zeroed scratch memories of `pd`'s sources, weights, bias, destination and
// scratchpad, plus `extra` arguments (post-op operands), by argument; none
// when they may not be allocated (can_time).
std::optional<std::unordered_map<int, memory>> scratch_args(const dnnl::engine& engine,
                                                            const dnnl::primitive_desc_base& pd,
                                                            const std::vector<Arg>& extra);

// Times a primitive on zeroed scratch memories of its source, weights,
// destination and scratchpad, plus `extra` arguments (post-op operands);
// `bound` as in best_ms. `cold_weights`: its weights are flushed from every
// cache level before each run, as a product that reads each weight once
// per run finds them inside a model (row_product.h), over kColdRuns runs
// and without the bound.
double time_primitive(const dnnl::engine& engine, const dnnl::primitive& prim,
                      const dnnl::primitive_desc_base& pd, const std::vector<Arg>& extra,
                      double bound = kNotTimed, bool cold_weights = false);

// One implementation's time in milliseconds, given the best time of the
// candidates timed before it (kNotTimed for the first) as best_ms's bound.
using Candidate = std::function<double(double bound)>;

// The index of the fastest of `candidates`, remembered under `key` for the
// process and, when `choices_file` is not empty, in that file
// (plan_choices.h), where a later plan finds it. With `rounds` > 1 the
// candidates are timed in turn that many times, each keeping its best, so a
// burst of load on the host falls on all of them.
int fastest(const std::string& choices_file, const std::string& key,
            const std::vector<Candidate>& candidates, int rounds = 1);

}  // namespace tso::cpu
