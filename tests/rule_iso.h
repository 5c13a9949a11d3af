// The identity of rules decided by Boost.Graph's VF2 isomorphism
// (labelled_graph.h), for graph_identity_oracle_test.cc: the two notions of
// "the same rule" the code relies on, each written as labelled graphs.
#pragma once

#include <map>
#include <string>

#include "generator/op_set.h"
#include "substitutions/rules.h"
#include "tests/labelled_graph.h"

namespace tso::testing {

// structure_key's contract (substitutions/rules.h): the same source, target
// and conditions, node for node in statement order, up to a one-to-one
// renaming of variables and of parameters; provenance, status, example types
// and values, declaration order and corrections do not count.
bool same_up_to_renaming(const Rule& a, const Rule& b);

// The generator's renaming classes of one op set: variables of one kind and
// type may be renamed into each other, and plain add and mul take their
// arguments in any order (generator/README.md, "How it works").
struct RenamingClasses {
  std::map<std::string, int> of_var;  // variable name -> class
  bool add_commutes = false;          // the set's add is the plain one, not the bias add
};
RenamingClasses renaming_classes(const gen::OpSet& set);

// The generator's notion (generator/candidates.h, `renaming_class`): one rule
// is the other with variables renamed within their classes, nodes in any
// order, arguments of commutative operators in any order, output pairs in
// any order and the sides possibly swapped. Derived attributes (shape
// expressions) and conditions follow from the rest and are not compared.
bool same_generated_rule(const Rule& a, const Rule& b, const RenamingClasses& classes);

// The labelled graphs both decide on, for comparing many rules: one table of
// labels for all the rules encoded, so any two of them can be compared with
// vf2_isomorphic (same_generated_rule also tries `b` with its sides swapped).
class RuleGraphs {
 public:
  RuleGraphs() = default;                                                      // structure_key's
  explicit RuleGraphs(const RenamingClasses& classes) : classes_(&classes) {}  // the generator's
  LabelledGraph encode(const Rule& r, bool swap_sides = false);

 private:
  const RenamingClasses* classes_ = nullptr;
  Labels labels_;
  std::vector<AttrValue> values_;
};

}  // namespace tso::testing
