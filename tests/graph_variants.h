// Seeded variants of a graph for the graph-identity oracle
// (graph_identity_oracle_test.cc): the same graph written another way, and
// near misses that differ from it in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/attrs.h"
#include "core/graph.h"
#include "core/testing/rng.h"

namespace tso::testing {

// The same graph by the contract of core/graph.h: its nodes in another
// topological order, operator nodes and the graph renamed, weight data
// dropped.
Graph reordered(const Graph& g, uint64_t seed);

enum class NearMiss {
  kAttribute,    // one attribute of one operator changed
  kSwapArgs,     // two different arguments of one operator swapped
  kMoveEdge,     // one argument reads another tensor of the same type
  kRenameInput,  // one graph input or weight renamed
};
inline constexpr NearMiss kNearMisses[] = {NearMiss::kAttribute, NearMiss::kSwapArgs,
                                           NearMiss::kMoveEdge, NearMiss::kRenameInput};
std::string_view near_miss_name(NearMiss kind);

// `g` changed in one place; each operator's types are inferred again, so the
// result is a valid graph. nullopt when `g` has no place for this kind of
// change, or the change chosen breaks shape inference.
std::optional<Graph> near_miss(const Graph& g, NearMiss kind, uint64_t seed);

// Another value of the same type: an integer 0 and 1 swapped, others one up;
// one element of a list one up; a float a quarter up (or 0.5 for an
// infinity); the next activation; the next padding mode or one explicit pad
// toggled; a string one character longer.
AttrValue changed_value(const AttrValue& v, Rng& rng);

}  // namespace tso::testing
