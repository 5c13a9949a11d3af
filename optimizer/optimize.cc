#include "optimizer/optimize.h"

#include <cmath>
#include <cstdio>

namespace tso::opt {
namespace {

// Whether confirming the costs changed a prediction by more than 5%.
bool moved(double before, double after) { return std::abs(after - before) > 0.05 * before; }

}  // namespace

Expected<OptimizeResult> optimize(const Graph& g, const RuleIndex& rules, const CostModel& model,
                                  const OptimizeOptions& options) {
  OptimizeResult r;
  r.operators_before = g.num_operators();
  r.search = search(g, rules, model, options.search);
  const GraphIndex input_index(g);
  const double min_gain = options.search.min_gain;
  // The input's and the result's predictions as the costs stand, confirmed
  // ones included; an unchanged result gains nothing.
  double input_cost = graph_cost(g, input_index, model);
  double best_cost = 0;
  auto result_gains = [&] {
    return !r.search.applied.empty() && gains_enough(best_cost, input_cost, min_gain);
  };
  {
    const GraphIndex best_index(r.search.best);
    best_cost = graph_cost(r.search.best, best_index, model);
    r.remeasured = model.confirm(g, input_index) + model.confirm(r.search.best, best_index);
    const double input_confirmed = graph_cost(g, input_index, model);
    const double best_confirmed = graph_cost(r.search.best, best_index, model);
    const bool moved_either =
        moved(input_cost, input_confirmed) || moved(best_cost, best_confirmed);
    input_cost = input_confirmed;
    best_cost = best_confirmed;
    if (r.remeasured > 0 && (moved_either || !result_gains())) {
      r.first_search_seconds = r.search.seconds;
      r.searched_again = true;
      r.search = search(g, rules, model, options.search);
      const GraphIndex again_index(r.search.best);
      r.remeasured += model.confirm(r.search.best, again_index);
      best_cost = graph_cost(r.search.best, again_index, model);
    }
  }
  if (!result_gains()) {
    r.discarded_rewrites = static_cast<int>(r.search.applied.size());
    r.discarded_cost = best_cost;
    r.search.best = g;
    r.search.applied.clear();
    r.search.best_cost = r.search.initial_cost;
  }
  r.cost_before = input_cost;
  Expected<Graph> folded = fold_weights(r.search.best, &r.fold);
  if (!folded) return folded.error();
  r.graph = std::move(*folded);
  r.operators_after = r.graph.num_operators();
  r.cost_after = graph_cost(r.graph, GraphIndex(r.graph), model);
  if (r.search.applied.empty() && r.fold.folded == 0 && r.graph == g) return r;
  Expected<CheckResult> c = compare_graphs(g, r.graph, options.check);
  if (!c) return Error{"numerical check: " + c.error().message};
  r.checked = true;
  r.check = *c;
  if (c->max_relative_error <= options.check.tolerance) return r;
  CheckOptions f64 = options.check;
  f64.f64 = true;
  Expected<CheckResult> d = compare_graphs(g, r.graph, f64);
  if (!d) return Error{"numerical check in f64: " + d.error().message};
  r.check.f64_max_relative_error = d->max_relative_error;
  r.check.f64_worst_output = d->worst_output;
  if (d->max_relative_error <= kF64Tolerance) return r;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "max relative error %.3g on output '%s' exceeds %.3g, and %.3g on output "
                "'%s' in f64 exceeds %.3g",
                c->max_relative_error, c->worst_output.c_str(), options.check.tolerance,
                d->max_relative_error, d->worst_output.c_str(), kF64Tolerance);
  // The rewrites that made it, so that the failure can be traced to a rule.
  std::string rewrites;
  for (const AppliedRewrite& a : r.search.applied) {
    std::string nodes;
    for (const std::string& n : a.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    rewrites += "\n  " + a.rule + " at " + nodes;
  }
  return Error{std::string("numerical check failed: the optimized graph differs from the "
                           "input: ") +
               buf + (rewrites.empty() ? "" : "; its rewrites:" + rewrites)};
}

}  // namespace tso::opt
