// `tso profile`: times every operator signature (core/signature.h) of a graph
// on the GPU with the kernels the plan runs, and returns the cost table
// (runtime/common/cost_table.h) the optimizer's measured cost model reads. Each distinct
// signature is run as a one-node graph (its arguments as graph inputs, filled
// with seeded random values), planned and prepared like any graph, captured
// in a CUDA graph and replayed; the entry is the median replay time. Views
// (reshape and friends, contiguous splits) launch nothing and cost 0.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/common/cost_table.h"
#include "runtime/cuda/device.h"

namespace tso::cuda {

struct ProfileOptions {
  int iters = 100;
  int warmup = 10;
  bool tf32 = true;
  uint64_t seed = 1;
  // Called after each signature: (done, total, signature). Libraries never print.
  std::function<void(int, int, const std::string&)> progress;
};

Expected<rt::CostTable> profile_graph(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options);

// Times one signature: `n` on arguments of types `inputs`, all graph inputs
// filled with seeded random values (what `tso optimize --device cuda` asks
// for on demand, including nodes the search invents). A view costs 0.
Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> inputs,
                                     const ProfileOptions& options);

// The GPU, libraries and kernels a GPU measurement belongs to, e.g. "NVIDIA
// H100 80GB HBM3, 79.1 GiB, sm_90, CUDA 13.0, driver 13.0, cuDNN 9.19.0,
// cuBLASLt 13.1.0, runtime 3f0c9a1e52b7" (describe(gpu), the CUDA runtime
// linked in and the driver ("driver none" without one), the cuDNN and
// cuBLASLt libraries loaded ("cuBLASLt none" where it cannot be opened), and
// runtime_revision()): costs measured with other libraries or by another
// build of tso's kernels are another device.
std::string device_description(const GpuStatus& gpu);

// The one-node graph that times node `index` of `g`: its arguments become
// inputs in0, in1, ...; its outputs out0, out1, ... Plain C++ (tested
// without a GPU).
Expected<Graph> single_node_graph(const Graph& g, int index);

}  // namespace tso::cuda
