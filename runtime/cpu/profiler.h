// Measured operator costs on the CPU runtime: what `tso profile --device
// cpu` writes and what `tso optimize --device cpu` asks for on demand. One
// operator signature (core/signature.h) is timed as a one-node graph planned
// by cpu::Executor, so it runs the primitive, layout and implementation
// choice (Winograd, inner product) the runtime's plan would make for it.
//
// Which arguments are weights: a signature carries only types, so the same
// rule serves a model's nodes and the nodes the search invents (merged
// convolutions, concatenated weights): see weight_args. Weights are stored
// with seeded random values, so the plan reorders them once in its prologue,
// as in a real model; the other arguments are graph inputs fed random
// values. A node whose plan runs nothing (a view) costs 0.
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

// Which arguments of `n` (with argument types `inputs`) are timed as stored
// weights: conv2d and gemm weights and bias, batchnorm and layernorm
// parameters, a rank-2 right operand of matmul (a linear layer), and the
// smaller, broadcast operand of a binary elementwise operator (a bias or
// scale). Everything else is a graph input.
std::vector<bool> weight_args(const Node& n, std::span<const TensorType> inputs);

// The one-node graph that times `n`: arguments named in0, in1, ... (inputs,
// or weights holding seeded random values where `weights` says), outputs
// out0, out1, ...
Expected<Graph> signature_graph(const Node& n, std::span<const TensorType> inputs,
                                const std::vector<bool>& weights, uint64_t seed);

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
