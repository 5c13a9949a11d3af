// The identity of graphs and rules checked against an independent oracle,
// Boost.Graph's VF2 isomorphism (graph_iso.h): core's structural
// `==` and hash and the search's graph hash on seeded random graphs, their
// reorderings and their near misses. A failure prints the seed, the kind of
// pair and both graphs; the seeds are fixed, so rerunning the test
// reproduces it.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>

#include "core/testing/random_graph.h"
#include "core/text_format.h"
#include "optimizer/graph_index.h"
#include "optimizer/rewriter.h"
#include "tests/graph_iso.h"
#include "tests/graph_variants.h"

namespace tso {
namespace {

using testing::isomorphic;
using testing::isomorphic_up_to_sharing;

Graph parse_ok(std::string_view text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(g).value();
}

uint64_t search_hash(const Graph& g) { return opt::graph_hash(g, opt::TensorIds(g)); }

// The oracle itself tells apart what the contract of core/graph.h does.
TEST(GraphIdentityOracle, OracleOnHandWrittenGraphs) {
  Graph g = parse_ok(R"(graph g {
  input x: f32[2,2]
  input y: f32[2,2]
  %0: f32[2,2] = relu(x)
  %1: f32[2,2] = sub(%0, y)
  %2: f32[2,2] = tanh(y)
  output a = %1
  output b = %2
})");
  // Independent nodes in another order, another graph and node naming.
  Graph reordered = parse_ok(R"(graph h {
  input y: f32[2,2]
  %t: f32[2,2] = tanh(y)
  input x: f32[2,2]
  %r: f32[2,2] = relu(x)
  %s: f32[2,2] = sub(%r, y)
  output a = %s
  output b = %t
})");
  EXPECT_TRUE(isomorphic(g, reordered));
  EXPECT_TRUE(g == reordered);
  const char* different[] = {
      // Arguments swapped: positions count (sub, and add alike).
      "graph g {\n input x: f32[2,2]\n input y: f32[2,2]\n %0: f32[2,2] = relu(x)\n"
      " %1: f32[2,2] = sub(y, %0)\n %2: f32[2,2] = tanh(y)\n output a = %1\n output b = %2\n}",
      // Outputs swapped.
      "graph g {\n input x: f32[2,2]\n input y: f32[2,2]\n %0: f32[2,2] = relu(x)\n"
      " %1: f32[2,2] = sub(%0, y)\n %2: f32[2,2] = tanh(y)\n output a = %2\n output b = %1\n}",
      // An input renamed.
      "graph g {\n input x: f32[2,2]\n input z: f32[2,2]\n %0: f32[2,2] = relu(x)\n"
      " %1: f32[2,2] = sub(%0, z)\n %2: f32[2,2] = tanh(z)\n output a = %1\n output b = %2\n}",
      // An operator replaced.
      "graph g {\n input x: f32[2,2]\n input y: f32[2,2]\n %0: f32[2,2] = sigmoid(x)\n"
      " %1: f32[2,2] = sub(%0, y)\n %2: f32[2,2] = tanh(y)\n output a = %1\n output b = %2\n}"};
  for (const char* text : different) {
    Graph h = parse_ok(text);
    EXPECT_FALSE(isomorphic(g, h)) << text;
    EXPECT_FALSE(isomorphic_up_to_sharing(g, h)) << text;
    EXPECT_FALSE(g == h) << text;
  }
}

// Two copies of relu(x); the tanh reads the first in one graph and the second
// in the other. Not isomorphic (in `one`, outputs a and b name different
// nodes; in `other` the same one), but core's `==` and hashes see each node
// as the expression it computes and cannot tell the copies apart: the two are
// equal by its contract, and the oracle's second mode says so.
TEST(GraphIdentityOracle, SharingOfEqualSubexpressionsIsNotSeen) {
  Graph one = parse_ok(R"(graph g {
  input x: f32[2]
  %0: f32[2] = relu(x)
  %1: f32[2] = relu(x)
  %2: f32[2] = tanh(%0)
  output a = %0
  output b = %1
  output c = %2
})");
  Graph other = parse_ok(R"(graph g {
  input x: f32[2]
  %0: f32[2] = relu(x)
  %1: f32[2] = relu(x)
  %2: f32[2] = tanh(%1)
  output a = %0
  output b = %0
  output c = %2
})");
  EXPECT_FALSE(isomorphic(one, other));
  EXPECT_TRUE(isomorphic_up_to_sharing(one, other));
  EXPECT_TRUE(one == other);
  EXPECT_EQ(structural_hash(one), structural_hash(other));
  // A duplicated subexpression is not a shared one.
  Graph shared = parse_ok(R"(graph g {
  input x: f32[2]
  %0: f32[2] = relu(x)
  %2: f32[2] = tanh(%0)
  output a = %0
  output b = %0
  output c = %2
})");
  EXPECT_FALSE(isomorphic_up_to_sharing(one, shared));
  EXPECT_FALSE(one == shared);
  EXPECT_NE(structural_hash(one), structural_hash(shared));
}

struct Tally {
  int pairs = 0, isomorphic = 0, sharing_only = 0, different = 0;
};

// The verdicts on one pair, and whether they agree with the oracle.
void check_pair(const Graph& a, const Graph& b, const std::string& what, Tally* tally) {
  const bool iso = isomorphic(a, b), shared = isomorphic_up_to_sharing(a, b);
  const bool eq = a == b, eq_back = b == a;
  const bool hash = structural_hash(a) == structural_hash(b);
  const bool search = search_hash(a) == search_hash(b);
  ++tally->pairs;
  ++(iso ? tally->isomorphic : shared ? tally->sharing_only : tally->different);
  // No disagreement is allowed: over this test's pairs a chance hash
  // collision has probability below 1e-14 (core/README.md, "Graph identity").
  bool agree =
      (!iso || shared) && eq == shared && eq_back == eq && hash == shared && search == shared;
  EXPECT_TRUE(agree) << what << ": vf2 isomorphic " << iso << ", up to sharing " << shared
                     << "; a == b " << eq << ", b == a " << eq_back << ", structural_hash equal "
                     << hash << ", search hash equal " << search << "\n"
                     << print(a) << print(b);
}

TEST(GraphIdentityOracle, RandomGraphsTheirReorderingsAndNearMisses) {
  constexpr uint64_t kGraphs = 1500;
  std::map<std::string, Tally> tally;
  for (uint64_t seed = 1; seed <= kGraphs; ++seed) {
    testing::RandomGraphOptions options;
    options.operators = 1 + static_cast<int>(seed % 12);
    Graph g = testing::random_graph(seed, options);
    const std::string where = "seed " + std::to_string(seed) + " (random_graph with " +
                              std::to_string(options.operators) + " operators), ";
    Graph same = testing::reordered(g, seed);
    check_pair(g, same, where + "reordered", &tally["reordered"]);
    for (testing::NearMiss kind : testing::kNearMisses) {
      std::string name(testing::near_miss_name(kind));
      if (std::optional<Graph> m = testing::near_miss(same, kind, seed))
        check_pair(g, *m, where + name, &tally[name]);
    }
    check_pair(g, testing::random_graph(seed + kGraphs, options), where + "unrelated",
               &tally["unrelated"]);
    if (::testing::Test::HasFailure()) break;  // one seed's report is enough
  }
  int pairs = 0;
  for (const auto& [kind, t] : tally) {
    std::cout << kind << ": " << t.pairs << " pairs, " << t.isomorphic << " isomorphic, "
              << t.sharing_only << " equal up to sharing only, " << t.different << " different\n";
    pairs += t.pairs;
  }
  std::cout << "total: " << pairs << " pairs\n";
  EXPECT_EQ(tally["reordered"].isomorphic, static_cast<int>(kGraphs));
  // The near misses are what they say: most differ (a few land on an equal
  // graph, e.g. an edge moved to an equal copy of its tensor).
  for (testing::NearMiss kind : testing::kNearMisses) {
    const Tally& t = tally[std::string(testing::near_miss_name(kind))];
    EXPECT_GT(t.pairs, static_cast<int>(kGraphs) / 2) << testing::near_miss_name(kind);
    EXPECT_GT(t.different, 9 * t.pairs / 10) << testing::near_miss_name(kind);
  }
}

}  // namespace
}  // namespace tso
