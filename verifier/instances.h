// The concrete rules a lifted rule stands for (generator/lift.h). A rule
// with a rank clause binds its clause's variables at every rank of the
// range, and a transpose permutation given by a parameter binds any
// permutation of its rank: Z3 gets one concrete rule per rank and, at that
// rank, per permutation of each such parameter (`inv(?p)` its inverse), and
// the rule is proved when every instance is. The axioms are rank-generic up
// to rank 4 (specs/00_helpers.smt2), which bounds the clauses worth proving.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "substitutions/rules.h"

namespace tso::verifier {

struct RuleInstance {
  std::string label;  // "rank 3, ?p=[1,2,0], ?a=0": which instance; empty for the rule itself
  Rule rule;          // no rank clause, no permutation parameter
  // The axis parameters' values in this instance (translate_rule's pins).
  // Where the example types can be moved to that axis, the parameter's
  // example is the pinned value too, so the rule instantiates at it; where
  // not, the example stays and only the proof pins the axis.
  std::map<std::string, int64_t> pins;
};

// The rule itself (one instance, empty label) when it has no rank clause,
// permutation parameter or axis parameter. At a rank r below a clause variable's
// example rank the variable keeps its last r extents; above it, extents of 2
// are put in front; an axis parameter's example keeps naming its axis
// counted from the end.
std::vector<RuleInstance> rule_instances(const Rule& rule);

}  // namespace tso::verifier
