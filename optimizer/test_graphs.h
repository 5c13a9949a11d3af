// Graphs for the optimizer's tests: a graph in the text format, parsed, or
// with seeded data for every weight, as folding and the numerical check
// need values.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

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
  Expected<Graph> p = parse_graph(text, "test.tso");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  if (!p) return Graph{};
  GraphBuilder b(p->name());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (const Node& n : p->nodes()) {
    Node copy = n;
    if (n.op == Op::Weight) {
      auto w = std::make_shared<WeightData>();
      w->type = n.outs[0];
      std::vector<float> v(n.outs[0].shape.numel());
      for (float& x : v) x = dist(rng);
      w->bytes.resize(v.size() * sizeof(float));
      std::memcpy(w->bytes.data(), v.data(), w->bytes.size());
      copy.data = std::move(w);
    }
    b.add_node(std::move(copy));
  }
  for (const GraphOutput& o : p->outputs()) b.output(o.name, o.ref);
  Expected<Graph> g = b.finish();
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

}  // namespace tso::opt::testing
