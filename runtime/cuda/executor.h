// The CUDA executor: compiles a graph once into a plan (plan.h), uploads
// weights and constants once, prepares every step (cuDNN descriptors and
// measured algorithms, cuBLASLt heuristics), captures the whole run in a
// CUDA graph, and replays it. Plain C++ header (no CUDA types).
//
// Errors, never crashes: no usable GPU, an opaque node, out of device memory
// or any failing CUDA, cuDNN or cuBLAS call is an Error that names the call
// and, where one is at fault, the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cuda/plan.h"
#include "runtime/cuda/sources.h"

namespace tso::cuda {

struct ExecutorOptions {
  bool tf32 = true;         // TF32 tensor cores for convolutions and matrix products
  bool cuda_graph = true;   // capture the run once and replay it
  int64_t workspace_limit = int64_t{256} << 20;  // bytes, for cuDNN and cuBLASLt
  PlanOptions plan;
  SourceOptions sources;
};

struct ExecutorStats {
  int64_t arena_bytes = 0;      // intermediate tensors (the plan's peak)
  int64_t static_bytes = 0;     // inputs, weights, constants
  int64_t workspace_bytes = 0;  // shared cuDNN / cuBLASLt workspace
  int steps = 0;                // nodes that launch work
  int views = 0;                // tensors that own no memory
  int conv_algorithms_measured = 0;
  int64_t peak_bytes() const { return arena_bytes + static_bytes + workspace_bytes; }
};

class Executor {
 public:
  static Expected<std::unique_ptr<Executor>> create(const Graph& g,
                                                    const ExecutorOptions& options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Copies a graph input (by name) to the device; the byte count must match
  // its type.
  Status set_input(const std::string& name, std::span<const std::byte> bytes);
  Status set_input(const std::string& name, std::span<const float> values);
  // Runs the graph once and waits for it.
  Status run();
  // Output `index` (graph output order) copied to the host.
  Expected<std::vector<std::byte>> output_bytes(int index) const;
  Expected<std::vector<float>> output(int index) const;

  // Times `iters` runs (after `warmup` untimed ones) with CUDA events, one
  // event pair per run; returns each run's milliseconds.
  Expected<std::vector<float>> time_runs(int iters, int warmup);

  const Plan& plan() const;
  ExecutorStats stats() const;

  struct Impl;

 private:
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Median of `values` (the mean of the two middle ones for an even count).
double median(std::vector<float> values);

}  // namespace tso::cuda
