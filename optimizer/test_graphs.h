// Graphs for the optimizer's tests: a graph in the text format, parsed, or
// with seeded data for every weight, as folding and the numerical check
// need values.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

#include "core/testing/stored_weights.h"
#include "core/text_format.h"

namespace tso::opt::testing {

// `text` parsed (a failure is a test failure and an empty graph).
inline Graph parse(std::string_view text) {
  Expected<Graph> g = parse_graph(text, "test.tso");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

// `text` parsed, every weight filled with values uniform in [lo, hi) from
// `seed`.
inline Graph with_weights(std::string_view text, float lo, float hi, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  return tso::testing::with_stored(text, [&](const Node& n) {
    std::vector<float> v(n.outs[0].shape.numel());
    for (float& x : v) x = dist(rng);
    return tso::testing::float_bytes(v);
  });
}

}  // namespace tso::opt::testing
