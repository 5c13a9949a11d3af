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
  int iters = 50;  // timed runs per signature
  int warmup = 5;  // untimed runs before them
  // Time one plan may spend in its timed runs, then in its warm-up runs, in
  // milliseconds (0: no limit): past it, timing stops once 3 runs (or
  // `iters`, if fewer) are in or 6 were tried, disturbed ones included
  // (interference.h), and warming up after one run. A 2 s batch-16
  // convolution is then timed 3 times, not 50, and a busy machine fails it
  // after 6 runs, not 80.
  double budget_ms = 0;
  int threads = 0;  // 0: all cores
  uint64_t seed = 1;
  // ExecutorOptions::choices_file: the operator is timed with the
  // implementation a model's plan on this machine runs.
  std::string choices_file;
  // Each timed run finds the plan's constants in the last-level cache, out
  // of L1 and L2 (evict_private_caches), as in a model whose weights stay
  // cached (cache_residency.h); otherwise out of every cache level.
  bool weights_cached = false;
  // Called after each signature: (done, total, signature). Libraries never print.
  std::function<void(int, int, const std::string&)> progress;
};

// Times `n` on arguments of types `inputs` as it runs inside a model: only
// its own steps, without the layout reorders at the one-node graph's
// boundary; a computing operator with rank-4 inputs in NHWC (what
// convolutions write) and in row-major (what products write), the faster
// counting. The entry's signature, op, kernel (the plan's steps, "view"
// when it runs none), median and min milliseconds and samples are set;
// occurrences is 1.
Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> inputs,
                                     const ProfileOptions& options);

// Times what `n` adds to a kernel of `anchor` (conv2d, matmul or gemm)
// when it reads that kernel's result as argument `chain` and the runtime
// runs it there as a post-op (runtime/cpu/fusion.h): a small anchor
// computing the chain's type is timed alone and followed by `n`, and the
// difference is the cost (never negative). A node the runtime does not fuse
// costs its own steps; its kernel then reads "not fused: ...". The entry's
// signature is post_op_signature(anchor, n, inputs, chain).
Expected<rt::CostEntry> profile_post_op(Op anchor, const Node& n,
                                        std::span<const TensorType> inputs, int chain,
                                        const ProfileOptions& options);

// Times each distinct signature of `g` (sources skipped, occurrences
// counted), and each node the plan fuses into a convolution or product as
// that post-op (profile_post_op); the table's device is
// device_description(options.threads).
Expected<rt::CostTable> profile_model(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options);

// The machine, library, method and kernels a CPU measurement belongs to,
// e.g. "cpu: AMD EPYC 7B13, 2 threads, oneDNN 3.2.0, avx2, constants cold,
// runtime 3f0c9a1e52b7" (the model name from /proc/cpuinfo; `threads` 0
// means all cores, as the executor counts them; "constants cold": each
// timed run reads its weights from memory, so tables measured with cached
// weights are not mixed in; "runtime": runtime_revision(), so choices and
// costs of another build of the kernels are set aside, as their own file
// where the path is the default one).
std::string device_description(int threads);

}  // namespace tso::cpu
