// What `tso run MODEL --device cuda` does: plan and prepare the graph on the
// GPU, replay it many times, and report the median latency (CUDA events, one
// pair per replay, after warm-up) and the device memory the run holds.
// Plain C++ header; cli/run.cc calls it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cuda/executor.h"

namespace tso::cuda {

struct RunOptions {
  int iters = 200;
  int warmup = 20;
  bool tf32 = true;
  bool cuda_graph = true;
  // Weights without stored data, and graph inputs not given in `inputs`,
  // get seeded random values.
  uint64_t seed = 1;
  // Values of the graph's input nodes (Op::Input, in input-node order); empty
  // for random inputs.
  std::vector<WeightData> inputs;
};

struct RunReport {
  std::string device;  // describe(gpu_status())
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int iters = 0;
  bool tf32 = true;
  bool cuda_graph = true;
  ExecutorStats stats;
  std::vector<WeightData> outputs;  // of the first run, in graph output order
};

Expected<RunReport> run_model(const Graph& g, const RunOptions& options);

// The lines `tso run` prints, e.g.
//   device       NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90
//   latency      median 0.912 ms (min 0.905, max 0.951) over 200 replays, CUDA graph, TF32 on
//   memory       peak 210.3 MiB: weights and inputs 97.5 MiB, arena 12.3 MiB, workspace 100.5 MiB
//   plan         163 steps, 54 views, 53 convolution algorithms measured
std::string format_run_report(const RunReport& r);

}  // namespace tso::cuda
