#include "runtime/cpu/run_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/common/memory.h"

namespace tso::cpu {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Expected<RunReport> run_model(const Graph& g, const RunOptions& options) {
  RunReport r;
  r.library = Executor::library_info();
  ExecutorOptions eo;
  eo.threads = options.threads;
  const auto t0 = std::chrono::steady_clock::now();
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, eo);
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
  if (!r.steps.empty()) {
    double total = 0;
    for (const StepTime& t : r.steps) total += t.ms;
    out += "steps        (slowest first; ms per run, share)\n";
    for (const StepTime& t : r.steps) {
      std::snprintf(buf, sizeof buf, "  %8.3f  %5.1f%%  %s  %s\n", t.ms,
                    total > 0 ? 100 * t.ms / total : 0, t.what.c_str(), t.nodes.c_str());
      out += buf;
    }
  }
  return out;
}

}  // namespace tso::cpu
