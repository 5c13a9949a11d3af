#include "runtime/cuda/run_model.h"

#include <algorithm>
#include <cstdio>

#include "runtime/cuda/device.h"

namespace tso::cuda {
namespace {

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  return buf;
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

Expected<RunReport> run_model(const Graph& g, const RunOptions& options) {
  if (options.iters < 1) return Error{"--iters must be at least 1"};
  ExecutorOptions eo;
  eo.tf32 = options.tf32;
  eo.cuda_graph = options.cuda_graph;
  eo.sources.random_seed = options.seed;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, eo);
  if (!ex) return ex.error();
  if (!options.inputs.empty()) {
    size_t k = 0;
    for (int i : g.input_nodes()) {
      if (g.node(i).op != Op::Input) continue;
      if (k == options.inputs.size())
        return Error{"got " + std::to_string(k) + " input values, the graph has more inputs"};
      TSO_RETURN_IF_ERROR((*ex)->set_input(g.node(i).name, options.inputs[k++].bytes));
    }
  }
  TSO_RETURN_IF_ERROR((*ex)->run());
  std::vector<WeightData> outputs;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    Expected<std::vector<std::byte>> bytes = (*ex)->output_bytes(static_cast<int>(o));
    if (!bytes) return bytes.error();
    outputs.push_back({g.type(g.outputs()[o].ref), std::move(*bytes)});
  }
  Expected<std::vector<float>> times = (*ex)->time_runs(options.iters, options.warmup);
  if (!times) return times.error();
  RunReport r;
  r.device = describe(gpu_status());
  r.median_ms = median(*times);
  r.min_ms = *std::min_element(times->begin(), times->end());
  r.max_ms = *std::max_element(times->begin(), times->end());
  r.iters = options.iters;
  r.tf32 = options.tf32;
  r.cuda_graph = options.cuda_graph;
  r.stats = (*ex)->stats();
  r.outputs = std::move(outputs);
  return r;
}

std::string format_run_report(const RunReport& r) {
  const ExecutorStats& s = r.stats;
  std::string out;
  out += "device       " + r.device + "\n";
  out += "latency      median " + ms(r.median_ms) + " ms (min " + ms(r.min_ms) + ", max " +
         ms(r.max_ms) + ") over " + std::to_string(r.iters) + " replays, " +
         (r.cuda_graph ? "CUDA graph" : "stream launches") + ", TF32 " + (r.tf32 ? "on" : "off") +
         "\n";
  out += "memory       peak " + mib(s.peak_bytes()) + ": weights and inputs " +
         mib(s.static_bytes) + ", arena " + mib(s.arena_bytes) + ", workspace " +
         mib(s.workspace_bytes) + "\n";
  out += "plan         " + std::to_string(s.steps) + " steps, " + std::to_string(s.views) +
         " views, " + std::to_string(s.conv_algorithms_measured) +
         " convolution algorithms measured\n";
  return out;
}

}  // namespace tso::cuda
