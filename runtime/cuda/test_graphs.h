// Graphs in the canonical text format for the CUDA runtime's tests.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "core/text_format.h"

namespace tso::cuda::testing {

inline Graph parse(std::string_view text) {
  Expected<Graph> g = parse_graph(text, "<test>");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? std::move(*g) : Graph{};
}

// The node whose first result is named `name` (e.g. "%c").
inline int node_named(const Graph& g, std::string_view name) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name == name) return i;
  ADD_FAILURE() << "no node " << name;
  return -1;
}

}  // namespace tso::cuda::testing
