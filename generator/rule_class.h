// Internal to generator/: the renaming class of a written rule, for the
// rules the generator derives after its renaming stage (lifted copies). Two
// originals the renaming stage kept apart can lift to one copy, up to
// variables renamed, nodes in any order, arguments of commutative operators
// in any order, output pairs in any order and the sides swapped (the
// generator's notion of one rule, candidates.h `renaming_class`).
// structure_key (substitutions/rules.h) is finer: it keeps node, argument
// and side order.
#pragma once

#include <string>

#include "generator/op_set.h"
#include "substitutions/rules.h"

namespace tso::gen {

// A text equal for two rules of `set` exactly when they are one renaming
// class as above. Variables rename into each other when both are in the
// rank clause or both are outside it at one example rank: a copy's clause,
// not the op set's classes, says what a variable binds. Conditions and
// shape-expression attributes follow from the rest and do not count; the
// rank clause and parameters (by name; a lifted copy names them by kind)
// do. Nodes whose subgraphs print alike are told apart by count, not by
// who reads them, which is exact for the generator's rules (no two nodes of
// a side compute the same value).
std::string renaming_class_key(const OpSet& set, const Rule& rule);

}  // namespace tso::gen
