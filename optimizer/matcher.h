// Finding where compiled rules apply in a graph. Matching reads the graph and
// its index and never changes them; each match is handed to a callback.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "core/graph.h"
#include "optimizer/graph_index.h"
#include "optimizer/pattern.h"

namespace tso::opt {

// One occurrence of a rule's source side.
struct Match {
  const CompiledRule* rule = nullptr;
  std::vector<int> nodes;         // per source node, the graph node bound to it
  std::vector<TensorRef> vars;    // per rule variable (Rule::inputs order)
  std::vector<AttrValue> params;  // per parameter (Rule::params order)
};

using MatchCallback = std::function<void(const Match&)>;

// Every match of every rule of `rules` whose root binds one of `roots`
// (graph node indices) and whose reach (pattern.h) is at least `min_reach`;
// matches are reported in a deterministic order.
// A match binds distinct graph nodes to the source nodes, with equal
// operators, arities and attributes (parameters bind consistently, shape
// expressions and `where` conditions evaluate true), variables to tensors
// of their example type's rank (of the rank clause's range for the
// clause's variables: the ranks the rule is proved at), commutative operators
// in either argument order; a result of the match that is not a source
// output has no users outside the match, no variable binds a result of the
// match or a tensor computed from one (the rewrite would be a cycle), and a
// pattern node read by several others is the same graph node for each.
void for_each_match(const Graph& g, const GraphIndex& index, const RuleIndex& rules,
                    std::span<const int> roots, const MatchCallback& callback,
                    int min_reach = 0);
// The same over every node of `g`.
void for_each_match(const Graph& g, const GraphIndex& index, const RuleIndex& rules,
                    const MatchCallback& callback);

// A shape expression evaluated against the types the match's variables bound
// and the values of its parameters.
Expected<int64_t> eval_shape_expr(const ShapeExpr& e, const Rule& rule,
                                  std::span<const TensorType> var_types,
                                  std::span<const AttrValue> params);
// The concrete value of a pattern attribute under a match (params bound,
// shape expressions evaluated).
Expected<AttrValue> pattern_attr_value(const PatternAttr& a, const Rule& rule,
                                       std::span<const TensorType> var_types,
                                       std::span<const AttrValue> params);

}  // namespace tso::opt
