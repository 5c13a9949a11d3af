// The identity of graphs and rules checked against an independent oracle,
// Boost.Graph's VF2 isomorphism (graph_iso.h, rule_iso.h): core's structural
// `==` and hash and the search's graph hash on seeded random graphs, their
// reorderings and their near misses; structure_key on the committed rules,
// their renamings and near misses; the generator's one rule per renaming
// class in the generated rule files. A failure prints the seed (or the
// rules) and the kind of pair; the seeds are fixed, so rerunning the test
// reproduces it.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/testing/random_graph.h"
#include "core/text_format.h"
#include "generator/op_set.h"
#include "optimizer/graph_index.h"
#include "optimizer/rewriter.h"
#include "substitutions/rules.h"
#include "tests/graph_iso.h"
#include "tests/graph_variants.h"
#include "tests/rule_iso.h"
#include "tests/rule_variants.h"

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

RuleSet load_rules(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Expected<RuleSet> set = parse_rules(text.str(), path);
  EXPECT_TRUE(set.ok()) << set.error().message;
  return set.ok() ? std::move(set).value() : RuleSet{};
}

void count(std::map<std::string, Tally>* tally, const std::string& kind, bool same) {
  Tally& t = (*tally)[kind];
  ++t.pairs;
  ++(same ? t.isomorphic : t.different);
}

void print_tally(const std::string& what, const std::map<std::string, Tally>& tally) {
  int pairs = 0;
  for (const auto& [kind, t] : tally) {
    std::cout << what << ", " << kind << ": " << t.pairs << " pairs, " << t.isomorphic
              << " the same, " << t.different << " different\n";
    pairs += t.pairs;
  }
  std::cout << what << ", total: " << pairs << " pairs\n";
}

const char* kKeyedFiles[] = {"substitutions/handwritten.rules", "substitutions/taso_n3.rules",
                             "substitutions/lifted_n3.rules",
                             "substitutions/bias_n4.rules", "substitutions/pet_mutants.rules"};

// structure_key gives two rules one key exactly when the oracle finds a
// renaming of variables and parameters between them.
TEST(RuleIdentityOracle, StructureKeyOnRenamingsAndNearMisses) {
  std::map<std::string, Tally> tally;
  uint64_t seed = 0;
  for (const char* file : kKeyedFiles) {
    for (const Rule& r : load_rules(file).rules) {
      ++seed;
      auto check = [&](const Rule& other, const std::string& kind) {
        const bool key = structure_key(r) == structure_key(other);
        const bool iso = testing::same_up_to_renaming(r, other);
        count(&tally, kind, iso);
        EXPECT_EQ(key, iso) << file << " rule " << r.name << ", " << kind << " (seed " << seed
                            << "): structure keys equal " << key << ", VF2 " << iso << "\n"
                            << print_rule(r) << print_rule(other);
      };
      Rule same = testing::renamed(r, seed);
      check(same, "renamed");
      EXPECT_TRUE(testing::same_up_to_renaming(r, same)) << r.name << " seed " << seed;
      for (testing::RuleNearMiss kind : testing::kRuleNearMisses)
        if (std::optional<Rule> m = testing::near_miss(same, kind, seed))
          check(*m, std::string(testing::near_miss_name(kind)));
      if (::testing::Test::HasFailure()) return;
    }
  }
  print_tally("structure_key", tally);
  EXPECT_EQ(tally["renamed"].different, 0);
  EXPECT_GT(tally["renamed"].pairs, 3000);
}

// Every pair of rules within each committed file: structure_key gives two
// of them one key exactly when the oracle calls them the same. Pairs whose
// graphs differ in labels or their neighbours' (testing::invariant) are
// different by the oracle without running VF2 (an isomorphism keeps them),
// so VF2 runs on the pairs of one invariant only, and other pairs must have
// different keys.
TEST(RuleIdentityOracle, StructureKeyWithinCommittedFiles) {
  for (const char* file : kKeyedFiles) {
    RuleSet set = load_rules(file);
    testing::RuleGraphs graphs;
    std::vector<testing::LabelledGraph> encoded;
    std::map<std::vector<std::vector<int>>, std::vector<int>> buckets;
    std::map<std::string, std::vector<std::vector<int>>> labels_of_key;
    int64_t vf2_pairs = 0, same = 0;
    for (size_t j = 0; j < set.rules.size(); ++j) {
      const Rule& r = set.rules[j];
      encoded.push_back(graphs.encode(r));
      std::vector<std::vector<int>> labels = testing::invariant(encoded.back());
      std::vector<int>& bucket = buckets[labels];
      for (int i : bucket) {
        const bool key = structure_key(set.rules[i]) == structure_key(r);
        const bool iso = testing::vf2_isomorphic(encoded[i], encoded[j]);
        ++vf2_pairs;
        same += iso;
        EXPECT_EQ(key, iso) << file << ": " << set.rules[i].name << " and " << r.name
                            << ": structure keys equal " << key << ", VF2 " << iso;
      }
      bucket.push_back(static_cast<int>(j));
      auto [seen, fresh] = labels_of_key.try_emplace(structure_key(r), labels);
      EXPECT_TRUE(fresh || seen->second == labels)
          << file << ": " << r.name << " shares its structure key with a rule the oracle "
          << "tells apart by its invariant alone";
    }
    const int64_t n = static_cast<int64_t>(set.rules.size());
    std::cout << file << ": " << n * (n - 1) / 2 << " pairs, " << vf2_pairs
              << " with equal invariants decided by VF2, " << same << " the same\n";
    if (std::string(file) == "substitutions/pet_mutants.rules") {
      EXPECT_EQ(same, 0);
    }
  }
}

// The generator keeps one rule per renaming class: no two rules of a
// generated file are the same by the oracle, while every rule is the same as
// itself renamed within classes, reordered and turned around. As above, VF2
// runs on the pairs whose invariants agree (either way round).
TEST(RuleIdentityOracle, GeneratorKeepsOneRulePerRenamingClass) {
  const char* files[] = {"substitutions/taso_n3.rules", "substitutions/taso_n4.rules",
                         "substitutions/bias_n4.rules", "substitutions/linear_bias_n5.rules"};
  uint64_t seed = 0;
  for (const char* file : files) {
    RuleSet set = load_rules(file);
    ASSERT_FALSE(set.rules.empty()) << file;
    Expected<gen::OpSet> ops = gen::load_op_set("generator/" + set.rules[0].origin.ops + ".ops");
    ASSERT_TRUE(ops.ok()) << ops.error().message;
    testing::RenamingClasses classes = testing::renaming_classes(*ops);
    testing::RuleGraphs graphs(classes);
    std::vector<testing::LabelledGraph> encoded;
    std::map<std::vector<std::vector<int>>, std::vector<int>> buckets;
    int64_t vf2_pairs = 0, same = 0, regrouped = 0;
    for (size_t j = 0; j < set.rules.size(); ++j) {
      const Rule& r = set.rules[j];
      Rule renamed = testing::regrouped(r, classes, ++seed);
      bool iso = testing::same_generated_rule(r, renamed, classes);
      regrouped += iso;
      EXPECT_TRUE(iso) << file << " rule " << r.name << " (seed " << seed << ")\n"
                       << print_rule(r) << print_rule(renamed);
      encoded.push_back(graphs.encode(r));
      testing::LabelledGraph turned = graphs.encode(r, true);
      std::vector<std::vector<int>> labels = testing::invariant(encoded.back());
      std::set<int> candidates(buckets[labels].begin(), buckets[labels].end());
      std::vector<int>& other_way = buckets[testing::invariant(turned)];
      candidates.insert(other_way.begin(), other_way.end());
      for (int i : candidates) {
        ++vf2_pairs;
        bool one_class = testing::vf2_isomorphic(encoded[i], encoded[j]) ||
                         testing::vf2_isomorphic(encoded[i], turned);
        same += one_class;
        EXPECT_FALSE(one_class) << file << ": " << set.rules[i].name << " and " << r.name
                                << " are one renaming class\n"
                                << print_rule(set.rules[i]) << print_rule(r);
      }
      buckets[labels].push_back(static_cast<int>(j));
    }
    const int64_t n = static_cast<int64_t>(set.rules.size());
    std::cout << file << ": " << regrouped << " of " << n << " rules the same regrouped; "
              << n * (n - 1) / 2 << " pairs, " << vf2_pairs << " with equal invariants decided by "
              << "VF2, " << same << " in one renaming class\n";
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace tso
