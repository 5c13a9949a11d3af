#include "runtime/cuda/profiler.h"

#include <map>

#include "core/signature.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/dispatch.h"
#include "runtime/cuda/executor.h"

namespace tso::cuda {

Expected<Graph> single_node_graph(const Graph& g, int index) {
  const Node& n = g.node(index);
  GraphBuilder b("profile");
  Node copy = n;
  copy.args.clear();
  for (size_t i = 0; i < n.args.size(); ++i)
    copy.args.push_back(b.input("in" + std::to_string(i), g.type(n.args[i])));
  const TensorRef first = b.add_node(std::move(copy));
  for (int o = 0; o < static_cast<int>(n.outs.size()); ++o)
    b.output("out" + std::to_string(o), {first.node, o});
  return b.finish();
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
  table.device = describe(gpu);
  table.tf32 = options.tf32;
  table.model = model_name;
  ExecutorOptions eo;
  eo.tf32 = options.tf32;
  eo.sources.random_seed = options.seed;
  int done = 0;
  for (const auto& [sig, node] : first_node) {
    Expected<Graph> one = single_node_graph(g, node);
    if (!one) return Error{describe_node(g, node) + ": " + one.error().message};
    Expected<std::unique_ptr<Executor>> ex = Executor::create(*one, eo);
    if (!ex) return Error{describe_node(g, node) + ": " + ex.error().message};
    rt::CostEntry e;
    e.signature = sig;
    e.op = std::string(op_name(g.node(node).op));
    const bool runs = !(*ex)->plan().steps.empty();
    e.kernel = std::string(kernel_name(runs ? (*ex)->plan().steps[0].kernel : Kernel::kView));
    e.occurrences = occurrences[sig];
    if (runs) {
      Expected<std::vector<float>> t = (*ex)->time_runs(options.iters, options.warmup);
      if (!t) return Error{describe_node(g, node) + ": " + t.error().message};
      e.median_ms = median(*t);
      e.min_ms = *std::min_element(t->begin(), t->end());
      e.samples = options.iters;
    }
    table.entries.push_back(std::move(e));
    if (options.progress) options.progress(++done, static_cast<int>(first_node.size()), sig);
  }
  return table;
}

}  // namespace tso::cuda
