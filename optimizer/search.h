// TASO's cost-based backtracking search. A priority queue of graphs ordered
// by predicted cost; expanding a graph applies every match of every rule to
// it, and a rewritten graph joins the queue when its cost is below alpha
// times the best cost found so far and its structural hash is new. Cost and
// hash of a rewritten graph are computed from the rewrite alone (the nodes
// it removes and adds); a graph is built only when it is expanded, from its
// parent, which is kept in a small cache (or rebuilt from the root). When
// the queue empties or the search stalls, a bounded lookahead from the best
// graph looks for a cheaper graph behind a costlier one (LookaheadOptions);
// the search goes on from what it finds, and stops otherwise, or when a
// budget is spent.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "optimizer/cost_model.h"
#include "optimizer/pattern.h"
#include "optimizer/rewrite_site.h"

namespace tso::opt {

enum class StopReason : uint8_t {
  kExhausted,  // the queue emptied and the lookahead found nothing
  kBudget,     // the expansion budget was spent
  kTimeLimit,  // the wall-time limit passed
  kStalled,    // `stall_expansions` expansions in a row found no cheaper graph, nor the lookahead
};
// "exhausted", "budget", "time-limit", "stalled"
const char* stop_reason_name(StopReason r);

struct SearchProgress {
  int64_t expansions = 0;
  int64_t queued = 0;
  double best_cost = 0;
  double seconds = 0;
};

// The lookahead past plateaus. A composition of rewrites can be cheaper
// although its first rewrite is costlier than alpha allows (a kernel
// enlarged before it merges). When the best-first search has nothing left
// (queue empty or stalled), a small best-first search starts from the best
// graph's rewrites that cost at most `bound` times the best, follows only
// rewrites that touch what the path changed (a rewrite independent of the
// path commutes with it, so the main search has it already), and ends at the
// first graph cheaper than the best, which joins the queue. Off when `budget`
// is 0 or `bound` <= alpha.
struct LookaheadOptions {
  // Every graph on a lookahead path costs less than `bound` times the best.
  double bound = 1.3;
  // Rewrites after the first, costlier one: 1 finds pairs, 2 triples.
  int depth = 2;
  // Graphs all lookaheads of one search may expand together.
  int64_t budget = 50;
};

struct SearchOptions {
  double alpha = 1.05;
  // The best graph is the result only when it costs less than the input by
  // more than this fraction of the input's cost; else the input comes back
  // unchanged. A smaller gain is below what the costs resolve (a measured
  // signature moves by a few percent between measurements, a speed check
  // resolves about 1% end to end), and a graph changed for it is a graph
  // to time and write for nothing (Inception-v3: one merge predicted 0.01 us
  // faster; optimizer/README.md, "Gains below resolution").
  double min_gain = 0.001;
  int64_t max_expansions = 1000;
  double time_limit_s = 60;  // of searching: time the cost model spends measuring is not counted
  // The search stops when this many expansions in a row found no graph
  // cheaper than the best so far (0: never). On the shared models the last
  // improvement came at expansion 17 to 140 of 1000, and this limit keeps
  // every best graph (optimizer/README.md, "Stopping").
  int64_t stall_expansions = 100;
  // Expanded graphs kept to build their children from; a miss rebuilds a
  // chain of rewrites from a cached ancestor (NASNet: 16 graphs, 7.5
  // rebuilds per expansion, 20 s for 1000 expansions; 128 graphs, 2.6 s).
  int cached_graphs = 128;
  // Match lists of expanded graphs kept to carry to their children
  // (match_set.h); a child whose parent's list is gone gets its nearest
  // cached ancestor's (the input graph's is always kept), carried over more
  // changes. NASNet with reversed rules: 256 lists, 7.9 s for 1000
  // expansions (the late expansions carry from far ancestors); 1024, 4.7 s.
  int cached_matches = 1024;
  // Called every `progress_every` expansions, and once at the end.
  std::function<void(const SearchProgress&)> progress;
  int64_t progress_every = 100;
  LookaheadOptions lookahead;
};

// One rewrite on the path from the input graph to the best graph.
struct AppliedRewrite {
  std::string rule;
  std::vector<std::string> nodes;   // names of the nodes it replaced
  bool region_rule = false;         // decided by the region check (exact or partial)
  int correction_boxes = 0;         // a partial rule's corrected boxes
  int64_t correction_elements = 0;  // and the output elements they recompute
  // The site: the nodes it removed from the graph before it and those it
  // added to the graph after it, with their costs (optimizer/rewrite_site.h).
  std::vector<SiteNode> before{}, after{};
};

// The best graph's cost at a moment of the search (SearchResult::best_over_time).
struct BestCostPoint {
  double seconds = 0;            // since the search began, measuring included
  double measuring_seconds = 0;  // of which the cost model spent measuring
  int64_t expansions = 0;
  double best_cost = 0;
};

// A region rule (exact or partial) the search could apply: in how many
// expanded graphs it matched, and the best predicted cost change it offered
// there (negative: cheaper), its correction included.
struct RegionCandidate {
  int64_t matches = 0;
  double best_delta = 0;
};

struct SearchResult {
  Graph best;
  double initial_cost = 0;
  double best_cost = 0;
  StopReason stop = StopReason::kExhausted;
  int64_t expansions = 0;
  int64_t candidates = 0;               // rewritten graphs within alpha that joined the queue
  int64_t duplicates = 0;               // rewritten graphs dropped as already seen
  int64_t rejected = 0;                 // matches whose target was invalid at the bound shapes
  int64_t lookaheads = 0;               // lookaheads run (each at a plateau)
  int64_t lookahead_found = 0;          // of them, those that found a cheaper graph
  int64_t lookahead_expansions = 0;     // graphs they expanded, all together
  double seconds = 0;                   // wall time, measuring included
  double measuring_seconds = 0;         // of which the cost model spent measuring (not limited)
  std::vector<AppliedRewrite> applied;  // in order
  // The cost of the best graph found when its gain was below
  // SearchOptions::min_gain and the input came back instead; 0 otherwise.
  double below_min_gain_cost = 0;
  // The search's progress: the input graph's cost at 0 s, then a point each
  // time an expanded graph is cheaper than the best before it.
  std::vector<BestCostPoint> best_over_time;
  std::map<std::string, RegionCandidate> region_candidates;  // by rule name
};

// Whether a graph costing `cost` gains more than `min_gain` (a fraction) of
// `input_cost`, as SearchOptions::min_gain asks of a result.
inline bool gains_enough(double cost, double input_cost, double min_gain) {
  return cost < input_cost * (1 - min_gain);
}

// `max_expansions` >= 1, `alpha` >= 1, `lookahead.depth` >= 1 and
// `lookahead.budget` >= 0 are the caller's to check.
SearchResult search(const Graph& g, const RuleIndex& rules, const CostModel& model,
                    const SearchOptions& options = {});

}  // namespace tso::opt
