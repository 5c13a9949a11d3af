// Measured operator costs on the CPU runtime: what `tso profile --device
// cpu` writes and what `tso optimize --device cpu` asks for on demand. One
// operator signature (core/signature.h) is timed as a one-node graph planned
// by cpu::Executor, so it runs the primitive, layout and implementation
// choice (Winograd, inner product) the runtime's plan would make for it.
//
// The one-node graph is core/signature_graph.h's: weights stored with seeded
// random values, so the plan reorders them once in its prologue, as in a
// real model; the other arguments are graph inputs fed random values. A node
// whose plan runs nothing (a view) costs 0.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/common/cost_table.h"

namespace tso::cpu {

struct ProfileOptions {
  int iters = 50;   // timed runs per signature
  int warmup = 5;   // untimed runs before them
  int threads = 0;  // 0: all cores
  uint64_t seed = 1;
  // Called after each signature: (done, total, signature). Libraries never print.
  std::function<void(int, int, const std::string&)> progress;
};

// Times `n` on arguments of types `inputs` as it runs inside a model:
// rank-4 inputs in NHWC (what convolutions write), and only its own steps,
// without the layout reorders at the one-node graph's boundary. The entry's signature, op, kernel
// (the plan's steps, "view" when it runs none), median and min milliseconds
// and samples are set; occurrences is 1.
Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> inputs,
                                     const ProfileOptions& options);

// Times each distinct signature of `g` (sources skipped, occurrences
// counted); the table's device is device_description(options.threads).
Expected<rt::CostTable> profile_model(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options);

// The machine and library a CPU measurement belongs to, e.g.
// "cpu: AMD EPYC 7B13, 2 threads, oneDNN 3.2.0, avx2" (the model name from
// /proc/cpuinfo; `threads` 0 means all cores, as the executor counts them).
std::string device_description(int threads);

}  // namespace tso::cpu
