#include "optimizer/optimize.h"

#include <cstdio>

namespace tso::opt {

Expected<OptimizeResult> optimize(const Graph& g, const RuleIndex& rules, const CostModel& model,
                                  const OptimizeOptions& options) {
  OptimizeResult r;
  r.operators_before = g.num_operators();
  r.search = search(g, rules, model, options.search);
  r.cost_before = r.search.initial_cost;
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
  if (!(c->max_relative_error <= options.check.tolerance)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "max relative error %.3g on output '%s' exceeds %.3g",
                  c->max_relative_error, c->worst_output.c_str(), options.check.tolerance);
    return Error{std::string("numerical check failed: the optimized graph differs from the "
                             "input: ") + buf};
  }
  return r;
}

}  // namespace tso::opt
