#include "optimizer/optimize.h"

#include <cmath>
#include <cstdio>

namespace tso::opt {
namespace {

// Whether confirming the costs changed a prediction by more than 5%.
bool moved(double before, double after) { return std::abs(after - before) > 0.05 * before; }

// Whether the search's best graph costs less than the input by the costs as
// they stand (confirmed ones included), by more than `min_gain` of the
// input's cost as the search requires; an unchanged graph is not cheaper.
bool cheaper(const SearchResult& s, const Graph& input, const GraphIndex& input_index,
             const CostModel& model, double min_gain) {
  return !s.applied.empty() && graph_cost(s.best, GraphIndex(s.best), model) <
                                   graph_cost(input, input_index, model) * (1 - min_gain);
}

}  // namespace

Expected<OptimizeResult> optimize(const Graph& g, const RuleIndex& rules, const CostModel& model,
                                  const OptimizeOptions& options) {
  OptimizeResult r;
  r.operators_before = g.num_operators();
  r.search = search(g, rules, model, options.search);
  const GraphIndex input_index(g);
  {
    const GraphIndex best_index(r.search.best);
    const double input_cost = graph_cost(g, input_index, model);
    const double best_cost = graph_cost(r.search.best, best_index, model);
    r.remeasured = model.confirm(g, input_index) + model.confirm(r.search.best, best_index);
    if (r.remeasured > 0 && (moved(input_cost, graph_cost(g, input_index, model)) ||
                             moved(best_cost, graph_cost(r.search.best, best_index, model)) ||
                             !cheaper(r.search, g, input_index, model, options.search.min_gain))) {
      r.first_search_seconds = r.search.seconds;
      r.searched_again = true;
      r.search = search(g, rules, model, options.search);
      r.remeasured += model.confirm(r.search.best, GraphIndex(r.search.best));
    }
  }
  if (!cheaper(r.search, g, input_index, model, options.search.min_gain)) {
    r.discarded_rewrites = static_cast<int>(r.search.applied.size());
    r.discarded_cost = graph_cost(r.search.best, GraphIndex(r.search.best), model);
    r.search.best = g;
    r.search.applied.clear();
    r.search.best_cost = r.search.initial_cost;
  }
  r.cost_before = graph_cost(g, input_index, model);
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
                             "input: ") +
                 buf};
  }
  return r;
}

}  // namespace tso::opt
