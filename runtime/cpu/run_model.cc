#include "runtime/cpu/run_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "core/stats.h"
#include "runtime/common/memory.h"
#include "runtime/cpu/constant_store.h"

namespace tso::cpu {

Expected<RunReport> run_model(Graph g, const RunOptions& options) {
  RunReport r;
  r.library = Executor::library_info();
  ExecutorOptions eo;
  eo.threads = options.threads;
  eo.choices_file = options.choices_file;
  const auto t0 = std::chrono::steady_clock::now();
  Expected<std::unique_ptr<Executor>> ex = Executor::create_releasing_weights(g, eo);
  if (!ex) return ex.error();
  r.plan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Executor& e = **ex;
  size_t k = 0;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    if (k >= options.inputs.size()) return Error{"no value given for input '" + n.name + "'"};
    TSO_RETURN_IF_ERROR(e.set_input(n.name, options.inputs[k++].bytes));
  }
  TSO_RETURN_IF_ERROR(e.run());
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    Expected<std::vector<std::byte>> bytes = e.output_bytes(static_cast<int>(o));
    if (!bytes) return bytes.error();
    r.outputs.push_back({g.type(g.outputs()[o].ref), std::move(*bytes)});
  }
  Expected<std::vector<double>> ms = e.time_runs(options.iters, options.warmup);
  if (!ms) return ms.error();
  r.iters = options.iters;
  if (!ms->empty()) {
    r.median_ms = median(*ms);
    r.min_ms = *std::min_element(ms->begin(), ms->end());
    r.max_ms = *std::max_element(ms->begin(), ms->end());
  }
  if (options.profile_iters > 0) {
    Expected<std::vector<StepTime>> steps = e.profile_steps(options.profile_iters);
    if (!steps) return steps.error();
    r.steps = std::move(*steps);
    for (StepTime& s : r.steps) s.ms /= options.profile_iters;
    std::stable_sort(r.steps.begin(), r.steps.end(),
                     [](const StepTime& a, const StepTime& b) { return a.ms > b.ms; });
  }
  r.stats = e.stats();
  return r;
}

namespace {

// Seeded normal inputs for every f32 graph input (other dtypes zero).
Status feed_random(const Graph& g, Executor& e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    const TensorType& t = n.outs[0];
    std::vector<std::byte> bytes(byte_size(t));
    if (t.dtype == DType::kF32) {
      float* p = reinterpret_cast<float*>(bytes.data());
      for (int64_t k = 0; k < t.shape.numel(); ++k) p[k] = dist(rng);
    }
    TSO_RETURN_IF_ERROR(e.set_input(n.name, bytes));
  }
  return {};
}

}  // namespace

Expected<WeightResidency> measure_weight_residency(const Graph& g, int threads,
                                                   const std::string& choices_file) {
  ExecutorOptions eo;
  eo.threads = threads;
  eo.choices_file = choices_file;
  Expected<std::unique_ptr<Executor>> e = Executor::create(g, eo);
  if (!e) return e.error();
  TSO_RETURN_IF_ERROR(feed_random(g, **e, 1));
  WeightResidency r;
  r.warm_ms = r.evicted_ms = 1e300;
  constexpr int kRounds = 3, kRuns = 3;
  for (int round = 0; round < kRounds; ++round) {
    Expected<std::vector<double>> warm = (*e)->time_runs(kRuns, 1);
    if (!warm) return warm.error();
    r.warm_ms = std::min(r.warm_ms, *std::min_element(warm->begin(), warm->end()));
    for (int k = 0; k < kRuns; ++k) {
      (*e)->evict_constants();
      Expected<std::vector<double>> cold = (*e)->time_runs(1, 0);
      if (!cold) return cold.error();
      r.evicted_ms = std::min(r.evicted_ms, cold->at(0));
    }
  }
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == Op::Weight) r.weight_bytes += byte_size(g.node(i).outs[0]);
  return r;
}

int timed_first(int round) { return round % 2; }

Expected<Comparison> compare_graphs(const Graph& a, const Graph& b, const CompareOptions& options) {
  ExecutorOptions eo;
  eo.threads = options.threads;
  eo.choices_file = options.choices_file;
  eo.constants = std::make_shared<ConstantStore>();
  Expected<std::unique_ptr<Executor>> ea = Executor::create(a, eo);
  if (!ea) return ea.error();
  Expected<std::unique_ptr<Executor>> eb = Executor::create(b, eo);
  if (!eb) return eb.error();
  TSO_RETURN_IF_ERROR(feed_random(a, **ea, options.seed));
  TSO_RETURN_IF_ERROR(feed_random(b, **eb, options.seed));
  Comparison c;
  c.a_min_ms = c.b_min_ms = 1e300;
  c.rounds = options.rounds;
  c.runs = options.runs;
  for (int round = 0; round < options.rounds; ++round)
    for (int j = 0; j < 2; ++j) {
      const int k = j == 0 ? timed_first(round) : 1 - timed_first(round);
      Expected<std::vector<double>> ms = (k == 0 ? *ea : *eb)->time_runs(options.runs, 2);
      if (!ms) return ms.error();
      const double round_min = *std::min_element(ms->begin(), ms->end());
      double& best = k == 0 ? c.a_min_ms : c.b_min_ms;
      best = std::min(best, round_min);
      (k == 0 ? c.a_round_min_ms : c.b_round_min_ms).push_back(round_min);
      (k == 0 ? c.a_round_median_ms : c.b_round_median_ms).push_back(median(*ms));
    }
  c.a_median_ms = median(c.a_round_median_ms);
  c.b_median_ms = median(c.b_round_median_ms);
  return c;
}

Comparison joined(const Comparison& x, const Comparison& y) {
  Comparison c = x;
  auto append = [](std::vector<double>* to, const std::vector<double>& from) {
    to->insert(to->end(), from.begin(), from.end());
  };
  append(&c.a_round_min_ms, y.a_round_min_ms);
  append(&c.b_round_min_ms, y.b_round_min_ms);
  append(&c.a_round_median_ms, y.a_round_median_ms);
  append(&c.b_round_median_ms, y.b_round_median_ms);
  c.a_min_ms = std::min(x.a_min_ms, y.a_min_ms);
  c.b_min_ms = std::min(x.b_min_ms, y.b_min_ms);
  c.a_median_ms = median(c.a_round_median_ms);
  c.b_median_ms = median(c.b_round_median_ms);
  c.rounds = x.rounds + y.rounds;
  return c;
}

Comparison swapped(const Comparison& c) {
  Comparison s = c;
  std::swap(s.a_min_ms, s.b_min_ms);
  std::swap(s.a_median_ms, s.b_median_ms);
  std::swap(s.a_round_min_ms, s.b_round_min_ms);
  std::swap(s.a_round_median_ms, s.b_round_median_ms);
  return s;
}

std::string format_run_report(const RunReport& r) {
  const ExecutorStats& s = r.stats;
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf, "device       cpu, %d threads, %s\n", s.threads,
                r.library.c_str());
  out += buf;
  std::snprintf(buf, sizeof buf, "latency      median %.3f ms (min %.3f, max %.3f) over %d runs\n",
                r.median_ms, r.min_ms, r.max_ms, r.iters);
  out += buf;
  out += "memory       peak " + rt::format_bytes(s.peak_bytes()) +
         ": weights, inputs and constants " + rt::format_bytes(s.static_bytes) + ", arena " +
         rt::format_bytes(s.arena_bytes) + ", scratchpad " + rt::format_bytes(s.scratchpad_bytes) +
         "\n";
  std::snprintf(
      buf, sizeof buf,
      "plan         %d steps, %d fused nodes, %d reorders, %d views; planned in %.0f ms\n", s.steps,
      s.fused_nodes, s.reorders, s.views, r.plan_ms);
  out += buf;
  if (r.steps.empty()) return out;
  double total = 0;
  for (const StepTime& t : r.steps) total += t.ms;
  auto share = [&](double ms) { return total > 0 ? 100 * ms / total : 0.0; };
  // GFLOP/s of `flops` done in `ms` (FLOPs per ms / 1e6).
  auto rate = [](int64_t flops, double ms) { return ms > 0 ? double(flops) / ms / 1e6 : 0.0; };
  out += "steps        (slowest first; ms per run, share, GFLOP/s)\n";
  for (const StepTime& t : r.steps) {
    char gflops[32] = "-";
    if (t.flops > 0) std::snprintf(gflops, sizeof gflops, "%.0f", rate(t.flops, t.ms));
    // The nodes of a long chain or group outrun any fixed buffer.
    std::snprintf(buf, sizeof buf, "  %8.3f  %5.1f%%  %6s  ", t.ms, share(t.ms), gflops);
    out += buf + t.what + "  " + t.nodes + "\n";
  }
  double product_ms = 0;
  int64_t product_flops = 0;
  int products = 0;
  for (const StepTime& t : r.steps)
    if (t.product) {
      product_ms += t.ms;
      product_flops += t.flops;
      ++products;
    }
  std::snprintf(buf, sizeof buf,
                "products     %.3f ms per run (%.1f%%), %.3f GFLOP at %.0f GFLOP/s: %d steps "
                "computing conv2d, matmul or gemm\n",
                product_ms, share(product_ms), product_flops / 1e9, rate(product_flops, product_ms),
                products);
  out += buf;
  std::snprintf(buf, sizeof buf, "other steps  %.3f ms per run (%.1f%%): %d steps\n",
                total - product_ms, share(total - product_ms),
                static_cast<int>(r.steps.size()) - products);
  out += buf;
  return out;
}

}  // namespace tso::cpu
