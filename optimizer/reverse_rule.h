// The reverse direction of a rule. A verified rule is an equivalence (the
// verifier proves source = target under both sides' shape validity, the
// `where` conditions and equal output types, all symmetric), so its target
// may be matched and replaced by its source: the generator writes the side
// with more operators as the source, and merges (two convs on one input ->
// one conv on concatenated weights) are often the reverse of what it wrote.
#pragma once

#include "core/error.h"
#include "substitutions/rules.h"

namespace tso::opt {

// The rule with source and target swapped, named "NAME (reverse)". Fails,
// saying why, for a rule declared `oneway`, and when the target cannot stand
// as a pattern for the source: an
// output of the target is a bare variable, or the target's operators do not
// bind every variable the rule mentions (as an argument, in a shape
// expression of either side or in a `where` condition) or every parameter
// the source uses.
Expected<Rule> reverse_rule(const Rule& rule);

}  // namespace tso::opt
