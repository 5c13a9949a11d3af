// Plan-time measurements that choose between implementations of one
// operator (inner product or matmul; direct or Winograd convolution): each
// candidate runs on scratch buffers of its own, and the fastest wins. Choices
// are remembered per shape for the process, so repeated shapes (BERT's
// twelve layers, ResNet's repeated blocks) are timed once, and with
// ExecutorOptions::choices_file across processes. Internal to runtime/cpu.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/cpu/builder.h"

namespace tso::cpu {

constexpr double kNotTimed = 1e300;

// Best time of `run` in milliseconds over up to 5 runs after one warm-up,
// stopping once the timed runs add up to 50 ms: a batch-16 convolution's
// candidates differ by far more than the spread of its runs, and at 200 ms
// choosing kernels took half the time of measuring CSRNet's batch-16
// signatures. A warm-up slower than 1.5 times
// `bound` (the best candidate so far) is the time: the candidate cannot win,
// and timing it further would cost more than the winner's runs. `prepare`,
// when set, runs untimed before each run.
double best_ms(const std::function<void()>& run, double bound = kNotTimed,
               const std::function<void()>& prepare = {});

// Whether scratch buffers of `bytes` may be allocated to time a candidate:
// at most half the memory available, so that measuring never exhausts the
// machine before the plan's own memory check (a candidate that cannot be
// timed is not chosen).
bool can_time(int64_t bytes);

// Times a primitive on zeroed scratch memories of its source, weights,
// destination and scratchpad, plus `extra` arguments (post-op operands);
// `bound` as in best_ms. `cold_weights`: its weights are flushed from every
// cache level before each run, as a product that reads each weight once
// per run finds them inside a model (row_product.h).
double time_primitive(const dnnl::engine& engine, const dnnl::primitive& prim,
                      const dnnl::primitive_desc_base& pd, const std::vector<Arg>& extra,
                      double bound = kNotTimed, bool cold_weights = false);

// One implementation's time in milliseconds, given the best time of the
// candidates timed before it (kNotTimed for the first) as best_ms's bound.
using Candidate = std::function<double(double bound)>;

// The index of the fastest of `candidates`, remembered under `key` for the
// process and, when `choices_file` is not empty, in that file
// (plan_choices.h), where a later plan finds it.
int fastest(const std::string& choices_file, const std::string& key,
            const std::vector<Candidate>& candidates);

}  // namespace tso::cpu
