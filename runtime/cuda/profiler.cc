#include "runtime/cuda/profiler.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <map>

#include "core/signature.h"
#include "core/signature_graph.h"
#include "runtime/common/revision.h"
#include "runtime/cuda/dispatch.h"
#include "runtime/cuda/executor.h"

namespace tso::cuda {
namespace {

// cuDNN's and cuBLASLt's major * 10000 + minor * 100 + patch as "9.19.0".
std::string library_version(size_t v) {
  if (v == 0) return "none";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

// CUDA's major * 1000 + minor * 10 as "13.0".
std::string cuda_version(int v) {
  if (v == 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

std::string device_description(const GpuStatus& gpu) {
  return describe(gpu) + ", CUDA " + cuda_version(gpu.runtime_version) + ", driver " +
         cuda_version(gpu.driver_version) + ", cuDNN " + library_version(cudnnGetVersion()) +
         ", cuBLASLt " + library_version(cublasLtGetVersion()) + ", runtime " +
         runtime_revision();
}

Expected<Graph> single_node_graph(const Graph& g, int index) {
  std::vector<TensorType> inputs;
  for (TensorRef a : g.node(index).args) inputs.push_back(g.type(a));
  return signature_graph(g.node(index), inputs, std::vector<bool>(inputs.size(), false), 0);
}

Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> inputs,
                                     const ProfileOptions& options) {
  rt::CostEntry e;
  e.signature = op_signature(n, inputs);
  e.op = std::string(op_name(n.op));
  e.occurrences = 1;
  Expected<Graph> one =
      signature_graph(n, inputs, std::vector<bool>(inputs.size(), false), options.seed);
  if (!one) return Error{e.signature + ": " + one.error().message};
  ExecutorOptions eo;
  eo.tf32 = options.tf32;
  eo.sources.random_seed = options.seed;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*one, eo);
  if (!ex) return Error{e.signature + ": " + ex.error().message};
  const bool runs = !(*ex)->plan().steps.empty();
  e.kernel = std::string(kernel_name(runs ? (*ex)->plan().steps[0].kernel : Kernel::kView));
  if (!runs) return e;
  Expected<std::vector<float>> t = (*ex)->time_runs(options.iters, options.warmup);
  if (!t) return Error{e.signature + ": " + t.error().message};
  e.median_ms = median(*t);
  e.min_ms = *std::min_element(t->begin(), t->end());
  e.samples = options.iters;
  return e;
}

Expected<rt::CostTable> profile_graph(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options) {
  GpuStatus gpu = gpu_status();
  if (!gpu.usable) return Error{describe(gpu)};
  std::map<std::string, int> first_node, occurrences;
  for (int i = 0; i < g.size(); ++i) {
    if (is_source(g.node(i).op)) continue;
    Expected<Kernel> k = kernel_for_node(g, i);
    if (!k) return k.error();
    const std::string sig = op_signature(g, i);
    first_node.emplace(sig, i);
    ++occurrences[sig];
  }
  rt::CostTable table;
  table.device = device_description(gpu);
  table.tf32 = options.tf32;
  table.model = model_name;
  int done = 0;
  for (const auto& [sig, node] : first_node) {
    std::vector<TensorType> inputs;
    for (TensorRef a : g.node(node).args) inputs.push_back(g.type(a));
    Expected<rt::CostEntry> e = profile_node(g.node(node), inputs, options);
    if (!e) return Error{describe_node(g, node) + ": " + e.error().message};
    e->occurrences = occurrences[sig];
    table.entries.push_back(std::move(*e));
    if (options.progress) options.progress(++done, static_cast<int>(first_node.size()), sig);
  }
  return table;
}

}  // namespace tso::cuda
