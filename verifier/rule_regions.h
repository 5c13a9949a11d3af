// A rule decided by the region check of partial equivalence, at its example
// types: the path of rules whose target is a mutant of their source (the
// generator's partial-equivalence families, generator/mutants.h), where Z3
// has no specification to work with.
#pragma once

#include "core/error.h"
#include "substitutions/rules.h"
#include "verifier/regions.h"

namespace tso::verifier {

// `rule` with its status decided by decide_regions at the example types:
// `exact boxes=N` when the target is right everywhere, else `partial
// boxes=N` with the correction derived there (correction.h) and written as
// the rule's correction block. Fails when a side is not in the region
// check's operator set or the correction cannot be derived. The chance that
// a wrong box passed goes to `false_equal_bound` when given.
Expected<Rule> decide_rule(const Rule& rule, const RegionOptions& options = {},
                           double* false_equal_bound = nullptr);

}  // namespace tso::verifier
