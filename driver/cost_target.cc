#include "driver/cost_target.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/stats.h"
#include "driver/cpu_costs.h"
#include "optimizer/defaults.h"
#include "optimizer/graph_index.h"
#include "runtime/cpu/run_model.h"
#ifdef TSO_HAVE_CUDA_RUNTIME
#include "runtime/cuda/device.h"
#include "runtime/cuda/profiler.h"
#include "runtime/cuda/run_model.h"
#endif

namespace tso::driver {
namespace {

Expected<std::unique_ptr<opt::AnalyticCost>> analytic(const std::string& path) {
  Expected<opt::Device> d = opt::load_device(path);
  if (!d) return d.error();
  return std::make_unique<opt::AnalyticCost>(std::move(*d));
}

bool gpu_visible() {
#ifdef TSO_HAVE_CUDA_RUNTIME
  return cuda::gpu_status().usable;
#else
  return false;
#endif
}

#ifdef TSO_HAVE_CUDA_RUNTIME
// The on-demand cache of GPU costs, like the CPU one: the device string is
// the GPU's with its libraries and tso's kernels, and TF32 on as tso run
// uses it.
Expected<std::unique_ptr<opt::CachedCost>> open_cuda_cost_cache(const std::string& file,
                                                                const opt::CostModel* fallback) {
  const cuda::GpuStatus gpu = cuda::gpu_status();
  if (!gpu.usable) return Error{"--device cuda: " + cuda::describe(gpu)};
  const std::string device = cuda::device_description(gpu) + ", TF32 on";
  cuda::ProfileOptions o;
  o.iters = 50;
  o.warmup = 5;
  return opt::CachedCost::open(
      cost_cache_path(file, device), device,
      [o](const Node& n, std::span<const TensorType> in, bool) {
        return cuda::profile_node(n, in, o);
      },
      nullptr, fallback);
}

// Alternating rounds of tso run --device cuda on the two graphs, summed up
// as the CPU runtime's comparison is: each graph's minimum over the rounds
// and median of the rounds' medians.
Expected<cpu::Comparison> compare_on_gpu(const Graph& a, const Graph& b, int rounds) {
  cuda::RunOptions o;
  o.iters = 50;
  o.warmup = 10;
  double best_a = 1e300, best_b = 1e300;
  cpu::Comparison c;
  for (int r = 0; r < rounds; ++r) {
    Expected<cuda::RunReport> x = cuda::run_model(a, o);
    if (!x) return x.error();
    Expected<cuda::RunReport> y = cuda::run_model(b, o);
    if (!y) return y.error();
    best_a = std::min(best_a, x->min_ms);
    best_b = std::min(best_b, y->min_ms);
    c.a_round_median_ms.push_back(x->median_ms);
    c.b_round_median_ms.push_back(y->median_ms);
    c.a_round_min_ms.push_back(x->min_ms);
    c.b_round_min_ms.push_back(y->min_ms);
  }
  c.a_min_ms = best_a;
  c.b_min_ms = best_b;
  c.a_median_ms = median(c.a_round_median_ms);
  c.b_median_ms = median(c.b_round_median_ms);
  c.rounds = rounds;
  c.runs = o.iters;
  return c;
}
#endif

// "5 pairs of executors", or "10 pairs of executors (the first 15 rounds too
// close to call)".
std::string pairs_text(const opt::SpeedCheck& s, const std::string& of) {
  const std::string pairs = std::to_string(s.stages * opt::kCheckPairs) + " pairs of " + of;
  if (s.stages == 1) return pairs;
  return pairs + " (the first " + std::to_string(s.rounds / s.stages) +
         " rounds too close to call)";
}

}  // namespace

Expected<std::unique_ptr<CostTarget>> open_cost_target(const CostTargetFlags& f) {
  auto t = std::make_unique<CostTarget>();
  std::string device = f.device;
  if (device.empty() && f.cost.empty()) device = gpu_visible() ? "cuda" : "cpu";
  if (!f.cost.empty()) {
    // A table: the analytic fallback is --device's file when given, else
    // the one of the machine the table was measured on.
    Expected<rt::CostTable> table = rt::read_cost_table(f.cost);
    if (!table) return Error{"--cost: " + table.error().message};
    const bool gpu_table = table->device.rfind("NVIDIA", 0) == 0;
    const std::string fallback = !device.empty() && device != "cpu" && device != "cuda" ? device
                                 : gpu_table ? opt::default_device_path()
                                             : opt::cpu_device_path();
    Expected<std::unique_ptr<opt::AnalyticCost>> a = analytic(fallback);
    if (!a) return a.error();
    t->analytic = std::move(*a);
    t->table = std::make_unique<opt::MeasuredCost>(*table, f.cost, t->analytic.get());
    t->model = t->table.get();
    t->name = f.cost;
    // Measured here, if perhaps by another build of the runtime: the
    // result is timed end to end on this one.
    const std::string here = cpu_cost_device();
    if (table->device == here || rt::differ_in_runtime_only(table->device, here)) {
      t->runtime = TargetRuntime::kCpu;
    } else {
      t->no_runtime =
          "the table was measured on '" + table->device + "', not on a runtime of this tso here";
    }
    return t;
  }
  // A runtime at hand: costs measured on demand into its cache, falling
  // back to `fallback`'s analytic model.
  using OpenCache =
      Expected<std::unique_ptr<opt::CachedCost>> (*)(const std::string&, const opt::CostModel*);
  auto measured = [&](const std::string& fallback, OpenCache open,
                      TargetRuntime runtime) -> Expected<std::unique_ptr<CostTarget>> {
    Expected<std::unique_ptr<opt::AnalyticCost>> a = analytic(fallback);
    if (!a) return a.error();
    t->analytic = std::move(*a);
    Expected<std::unique_ptr<opt::CachedCost>> c = open(f.cost_cache, t->analytic.get());
    if (!c) return c.error();
    t->cache = std::move(*c);
    t->model = t->cache.get();
    t->name = device;
    t->runtime = runtime;
    return std::move(t);
  };
  if (device == "cpu")
    return measured(opt::cpu_device_path(), open_cpu_cost_cache, TargetRuntime::kCpu);
  if (device == "cuda") {
#ifdef TSO_HAVE_CUDA_RUNTIME
    return measured(opt::default_device_path(), open_cuda_cost_cache, TargetRuntime::kCuda);
#else
    return Error{"--device cuda: this tso was built without the CUDA runtime"};
#endif
  }
  Expected<std::unique_ptr<opt::AnalyticCost>> a = analytic(device);
  if (!a) return a.error();
  t->analytic = std::move(*a);
  t->model = t->analytic.get();
  t->name = device;
  t->no_runtime = "the target is the device file " + device + ", which no runtime here runs";
  return t;
}

opt::SpeedCheck speed_figures(const cpu::Comparison& c, int stages) {
  opt::SpeedCheck s;
  s.ran = true;
  s.stages = stages;
  s.input_ms = c.a_min_ms;
  s.optimized_ms = c.b_min_ms;
  s.input_median_ms = c.a_median_ms;
  s.optimized_median_ms = c.b_median_ms;
  s.rounds = static_cast<int>(c.a_round_min_ms.size());
  for (int r = 0; r < s.rounds; ++r) s.rounds_faster += c.b_round_min_ms[r] < c.a_round_min_ms[r];
  s.kept_input = !opt::optimized_wins(s);
  return s;
}

bool time_weights_cached(const cpu::WeightResidency& r,
                         const std::function<double(bool cached)>& operators_ms) {
  if (!r.cached()) return false;
  const double cached_ms = operators_ms(true), from_memory_ms = operators_ms(false);
  return std::abs(cached_ms - r.warm_ms) <= std::abs(from_memory_ms - r.warm_ms);
}

void set_weight_residency(CostTarget& target, const Graph& g) {
  if (target.runtime != TargetRuntime::kCpu || !target.cache) return;
  Expected<cpu::WeightResidency> r = cpu::measure_weight_residency(g, 0, plan_choices_path(0));
  char why[300];
  if (!r) {
    std::snprintf(why, sizeof why, "weights from memory (the model does not run here: %.120s)",
                  r.error().message.c_str());
    target.cache->set_weights_cached(false, why);
    return;
  }
  const opt::GraphIndex index(g);
  std::string sums;
  const bool cached = time_weights_cached(*r, [&](bool cached) {
    target.cache->set_weights_cached(cached, "");
    const double ms = opt::graph_cost(g, index, *target.cache) / 1e3;
    char part[80];
    std::snprintf(part, sizeof part, "%s%.3f ms %s",
                  sums.empty() ? "; its operators sum to " : ", ", ms,
                  cached ? "timed with them cached" : "from memory");
    sums += part;
    return ms;
  });
  std::snprintf(why, sizeof why,
                "weights %s: %.1f MB, the model %.3f ms run after run, %.3f ms with them "
                "evicted%s",
                cached ? "cached" : "from memory", r->weight_bytes / 1e6, r->warm_ms, r->evicted_ms,
                sums.c_str());
  target.cache->set_weights_cached(cached, why);
}

opt::SpeedCheck check_speed(const CostTarget& target, const Graph& input,
                            const opt::OptimizeResult& r,
                            const std::function<void(const std::string&)>& progress) {
  opt::SpeedCheck s;
  // Nothing to time, and nothing gained by writing the graph back: the
  // user's file is written (cli/optimize.cc), as when the input is kept.
  if (r.search.applied.empty() && r.fold.folded == 0) {
    s.note = "the graph is unchanged";
    s.kept_input = true;
    return s;
  }
  if (target.runtime == TargetRuntime::kNone) {
    s.note = target.no_runtime;
    return s;
  }
  if (progress) progress("speed: timing the input and the optimized graph");
  if (target.runtime == TargetRuntime::kCuda) {
#ifdef TSO_HAVE_CUDA_RUNTIME
    Expected<opt::SpeedCheck> c = time_in_stages(input, r.graph, compare_on_gpu);
    if (!c) {
      s.note = "the GPU runtime cannot run it: " + c.error().message;
      return s;
    }
    s = *c;
    s.note = "tso's GPU runtime, minimum of " + std::to_string(s.rounds) +
             " alternating rounds of 50 replays (median of their medians) in " +
             pairs_text(s, "plans");
#endif
  } else {
    cpu::CompareOptions o;
    o.choices_file = plan_choices_path(0);
    Expected<opt::SpeedCheck> c =
        time_in_stages(input, r.graph, [&](const Graph& a, const Graph& b, int rounds) {
          o.rounds = rounds;
          return cpu::compare_graphs(a, b, o);
        });
    if (!c) {
      s.note = "the CPU runtime cannot run it: " + c.error().message;
      return s;
    }
    s = *c;
    s.note = "tso's CPU runtime, minimum of " + std::to_string(s.rounds) +
             " alternating rounds of " + std::to_string(o.runs) + " runs in " +
             pairs_text(s, "executors");
  }
  return s;
}

Expected<opt::SpeedCheck> time_in_stages(const Graph& input, const Graph& optimized,
                                         const CompareRounds& compare, int rounds,
                                         cpu::Comparison* comparison) {
  Expected<cpu::Comparison> c = compare_in_pairs(input, optimized, compare, rounds);
  if (!c) return c.error();
  opt::SpeedCheck s = speed_figures(*c);
  if (opt::worth_a_second_stage(s)) {
    Expected<cpu::Comparison> more = compare_in_pairs(input, optimized, compare, rounds);
    if (!more) return more.error();
    *c = cpu::joined(*c, *more);
    s = speed_figures(*c, 2);
  }
  if (comparison) *comparison = *c;
  return s;
}

Expected<cpu::Comparison> compare_in_pairs(const Graph& input, const Graph& optimized,
                                           const CompareRounds& compare, int rounds) {
  cpu::Comparison all;
  for (int k = 0; k < opt::kCheckPairs; ++k) {
    const bool optimized_first = k % 2 == 1;
    Expected<cpu::Comparison> c =
        optimized_first ? compare(optimized, input, rounds) : compare(input, optimized, rounds);
    if (!c) return c.error();
    const cpu::Comparison pair = optimized_first ? cpu::swapped(*c) : *c;
    all = k == 0 ? pair : cpu::joined(all, pair);
  }
  return all;
}

}  // namespace tso::driver
