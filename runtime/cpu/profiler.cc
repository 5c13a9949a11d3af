#include "runtime/cpu/profiler.h"

#include <omp.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include "core/signature.h"
#include "core/signature_graph.h"
#include "runtime/cpu/executor.h"

namespace tso::cpu {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (!name.empty()) return name;
  }
  return "unknown CPU";
}

}  // namespace

Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> inputs,
                                     const ProfileOptions& options) {
  rt::CostEntry e;
  e.signature = op_signature(n, inputs);
  e.op = std::string(op_name(n.op));
  e.occurrences = 1;
  Expected<Graph> g = signature_graph(n, inputs, weight_args(n, inputs), options.seed);
  if (!g) return Error{e.signature + ": " + g.error().message};
  ExecutorOptions eo;
  eo.threads = options.threads;
  // Data movement reads what its producer wrote, often row-major (after a
  // pooling or a product); computing operators read a convolution's NHWC.
  eo.channels_last_inputs = op_info(n.op).kind != OpKind::Shape;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*g, eo);
  if (!ex) return Error{e.signature + ": " + ex.error().message};
  Executor& x = **ex;
  if (x.stats().steps == 0) {
    e.kernel = "view";
    return e;
  }
  for (int i : g->input_nodes()) {
    const Node& in = g->node(i);
    if (in.op != Op::Input) continue;
    std::vector<std::byte> bytes = random_tensor_bytes(in.outs[0], options.seed + 1000 + i);
    if (Status s = x.set_input(in.name, bytes); !s.ok())
      return Error{e.signature + ": " + s.error().message};
  }
  Expected<std::vector<StepTime>> steps = x.profile_steps(1);
  if (!steps) return Error{e.signature + ": " + steps.error().message};
  for (const StepTime& s : *steps) e.kernel += (e.kernel.empty() ? "" : " + ") + s.what;
  // The operator's own steps only: the reorders at the one-node graph's
  // boundary (into the convolution's layout, back to row-major) are not part
  // of its cost in a model, where producers already write the layout their
  // consumers read.
  Expected<std::vector<double>> warm = x.time_runs(0, options.warmup);
  if (!warm) return Error{e.signature + ": " + warm.error().message};
  std::vector<double> t;
  for (int it = 0; it < options.iters; ++it) {
    Expected<std::vector<StepTime>> run = x.profile_steps(1);
    if (!run) return Error{e.signature + ": " + run.error().message};
    double ms = 0;
    for (const StepTime& s : *run)
      if (s.nodes != "layout change") ms += s.ms;
    t.push_back(ms);
  }
  e.median_ms = median_of(t);
  e.min_ms = *std::min_element(t.begin(), t.end());
  e.samples = static_cast<int>(t.size());
  return e;
}

Expected<rt::CostTable> profile_model(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options) {
  std::map<std::string, int> first_node, occurrences;
  for (int i = 0; i < g.size(); ++i) {
    if (is_source(g.node(i).op)) continue;
    const std::string sig = op_signature(g, i);
    first_node.emplace(sig, i);
    ++occurrences[sig];
  }
  rt::CostTable table;
  table.device = device_description(options.threads);
  table.tf32 = false;
  table.model = model_name;
  int done = 0;
  for (const auto& [sig, node] : first_node) {
    const Node& n = g.node(node);
    std::vector<TensorType> inputs;
    for (TensorRef a : n.args) inputs.push_back(g.type(a));
    Expected<rt::CostEntry> e = profile_node(n, inputs, options);
    if (!e) return Error{describe_node(g, node) + ": " + e.error().message};
    e->occurrences = occurrences[sig];
    table.entries.push_back(std::move(*e));
    if (options.progress) options.progress(++done, static_cast<int>(first_node.size()), sig);
  }
  return table;
}

std::string device_description(int threads) {
  const int t = threads > 0 ? threads : omp_get_num_procs();
  return "cpu: " + cpu_model_name() + ", " + std::to_string(t) + " thread" + (t == 1 ? "" : "s") +
         ", " + Executor::library_info();
}

}  // namespace tso::cpu
