// The optimizer's pipeline, as `tso optimize` runs it: search with the rules
// and the cost model, confirm the costs the input's and the result's
// predictions rest on (measured ones are measured again; when that moves
// either prediction by more than 5%, or leaves the result no cheaper than the
// input, search again, and keep the input if it still is not), fold weight-only
// subgraphs into weights, then check the result against the input graph on
// random inputs; a result over the tolerance is an error, so nothing wrong
// is ever handed back. A result over it in f32 is checked again in f64 on the
// same inputs and passes only within kF64Tolerance there: random weights make
// some outputs ill-conditioned (RetinaNet's sigmoid scores of logits that
// cancel from terms of 1e4 move by 3e-4 when a convolution's sum is ordered
// otherwise), and f64 tells such rounding from a rewrite that is wrong.
#pragma once

#include <string>

#include "core/error.h"
#include "core/graph.h"
#include "optimizer/cost_model.h"
#include "optimizer/fold.h"
#include "optimizer/numeric_check.h"
#include "optimizer/pattern.h"
#include "optimizer/search.h"

namespace tso::opt {

struct OptimizeOptions {
  SearchOptions search;
  CheckOptions check;
};

struct OptimizeResult {
  Graph graph;  // optimized and folded
  SearchResult search;
  FoldStats fold;
  bool checked = false;  // false only when nothing changed
  CheckResult check;
  int operators_before = 0, operators_after = 0;
  double cost_before = 0, cost_after = 0;  // predicted microseconds
  // Costs measured a second time before the prediction (CostModel::confirm),
  // and whether they moved the prediction of the input or the search's
  // graph enough that the search ran again on them; then
  // first_search_seconds is the first search's time.
  int remeasured = 0;
  bool searched_again = false;
  double first_search_seconds = 0;
  // A search result that the confirmed costs predict no cheaper than the
  // input is discarded: `search` then holds the input, unchanged, and these
  // say how many rewrites were dropped and what their graph was predicted
  // to cost.
  int discarded_rewrites = 0;
  double discarded_cost = 0;
};

Expected<OptimizeResult> optimize(const Graph& g, const RuleIndex& rules, const CostModel& model,
                                  const OptimizeOptions& options = {});

}  // namespace tso::opt
