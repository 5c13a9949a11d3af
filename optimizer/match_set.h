// The matches of a graph as the search uses them: each with whether its
// target builds at the bound shapes and the changes of cost and structural
// hash its rewrite makes. A child graph (its parent with one rewrite
// applied) gets its matches from the parent's: a match that touches no
// changed node is carried over, renumbered, with its scores, and only roots
// within a rule's reach of a changed node are matched again. The result is
// the same list, in the same canonical order, as matching the child from
// scratch; it costs work near the rewrite instead of work over the graph.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/graph.h"
#include "optimizer/cost_model.h"
#include "optimizer/graph_index.h"
#include "optimizer/matcher.h"
#include "optimizer/pattern.h"

namespace tso::opt {

struct ScoredMatch {
  Match match;
  bool valid = false;       // the target builds at the bound shapes (rewriter.h)
  // The scores depend on the matched region only (not so for a hash delta
  // that renames graph outputs, or a cost delta that involves post-ops):
  // when false, a carried match is scored again.
  bool local = true;
  double cost_delta = 0;    // predicted cost after the rewrite minus before
  uint64_t hash_delta = 0;  // graph hash after the rewrite minus before
};

// A graph with what matching and scoring read.
struct MatchContext {
  const Graph& graph;
  const GraphIndex& index;
  const TensorIds& ids;
  const CostModel& model;
};

// Every match of `rules` in the graph, scored, in canonical order (rule,
// then matched nodes, then bound tensors).
std::vector<ScoredMatch> all_matches(const MatchContext& g, const RuleIndex& rules);

// The matches of `child`, made from the graph by one rewrite that
// renumbered node p of `parent` to new_index[p] (-1: removed or dropped),
// given `parent_matches` = all_matches(parent). Equal to all_matches(child).
std::vector<ScoredMatch> carry_matches(const MatchContext& parent,
                                       std::span<const ScoredMatch> parent_matches,
                                       const MatchContext& child, std::span<const int> new_index,
                                       const RuleIndex& rules);

// The nodes of `child` whose matches may differ from the parent's: new
// nodes, and nodes whose arguments, users, graph-output role or weight-only
// flag changed. Per child node, 1 when changed.
std::vector<char> changed_nodes(const MatchContext& parent, const MatchContext& child,
                                std::span<const int> new_index);

}  // namespace tso::opt
