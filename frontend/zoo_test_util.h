// Internal to frontend/'s tests: what the zoo models' tests share.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/graph.h"

namespace tso::testing {

// The stored values of the weight node `name` of `g` (a test failure, and
// empty data, when there is none).
inline const WeightData& weight_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.op == Op::Weight && n.name == name) return *n.data;
  ADD_FAILURE() << "no weight " << name;
  static const WeightData kNone;
  return kNone;
}

}  // namespace tso::testing
