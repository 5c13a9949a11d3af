// Seeded variants of a rule for the rule identity oracle
// (graph_identity_oracle_test.cc): the same rule written another way, and
// near misses that differ from it in one place. The variants are in-memory
// rules only: near misses need not be valid rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "substitutions/rules.h"
#include "tests/rule_iso.h"

namespace tso::testing {

// Variables and parameters renamed one-to-one to fresh names and declared in
// another order.
Rule renamed(const Rule& r, uint64_t seed);

// The same rule by the generator's notion: variables renamed within their
// classes, each side's nodes in another topological order, output pairs in
// another order, and (for odd seeds) source and target swapped.
Rule regrouped(const Rule& r, const RenamingClasses& classes, uint64_t seed);

enum class RuleNearMiss {
  kAttribute,       // one attribute value of one node changed
  kSwapArgs,        // two different arguments of one node swapped
  kMoveEdge,        // one argument reads another variable or earlier result
  kMergeVariables,  // one variable's uses read another variable instead
};
inline constexpr RuleNearMiss kRuleNearMisses[] = {RuleNearMiss::kAttribute,
                                                   RuleNearMiss::kSwapArgs, RuleNearMiss::kMoveEdge,
                                                   RuleNearMiss::kMergeVariables};
std::string_view near_miss_name(RuleNearMiss kind);

// nullopt when `r` has no place for this kind of change.
std::optional<Rule> near_miss(const Rule& r, RuleNearMiss kind, uint64_t seed);

}  // namespace tso::testing
