// The rewriter: targets built against a match, spliced into a new graph that
// passes the checker, computes the same function (reference executor), and
// whose incremental hash equals the hash recomputed over the whole graph.
#include "optimizer/rewriter.h"

#include <gtest/gtest.h>

#include <random>

#include "core/checker.h"
#include "core/text_format.h"
#include "optimizer/test_graphs.h"
#include "optimizer/test_rules.h"
#include "runtime/reference/executor.h"

namespace tso::opt {
namespace {

using testing::parse;

class RewriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<RuleSet> s = parse_rules(testing::kClassicRules, "test.rules");
    ASSERT_TRUE(s.ok()) << s.error().message;
    set_ = std::move(*s);
    index_.add(set_);
  }

  // Every match of `rule` in `g`, built.
  std::vector<Replacement> replacements(const Graph& g, const std::string& rule) {
    GraphIndex gi(g);
    std::vector<Replacement> out;
    for_each_match(g, gi, index_, [&](const Match& m) {
      if (m.rule->rule->name != rule) return;
      Expected<Replacement> r = build_replacement(g, m);
      if (r) out.push_back(std::move(*r));
    });
    return out;
  }

  RuleSet set_;
  RuleIndex index_;
};

// Random feeds for every input and weight of `g`.
std::map<std::string, ref::Tensor<double>> feeds(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::map<std::string, ref::Tensor<double>> f;
  for (int i : g.input_nodes()) {
    ref::Tensor<double> t(g.node(i).outs[0].shape);
    for (double& x : t.data) x = normal(rng);
    f.emplace(g.node(i).name, std::move(t));
  }
  return f;
}

void expect_same_function(const Graph& a, const Graph& b) {
  auto in = feeds(a, 7);
  auto ra = ref::evaluate<double>(a, in);
  auto rb = ref::evaluate<double>(b, in);
  ASSERT_TRUE(ra.ok()) << ra.error().message;
  ASSERT_TRUE(rb.ok()) << rb.error().message;
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t k = 0; k < ra->size(); ++k) {
    ASSERT_EQ((*ra)[k].shape, (*rb)[k].shape);
    for (size_t i = 0; i < (*ra)[k].data.size(); ++i)
      ASSERT_NEAR((*ra)[k].data[i], (*rb)[k].data[i], 1e-9) << "output " << k << " element " << i;
  }
}

Rewritten apply_ok(const Graph& g, const TensorIds& ids, const Replacement& r) {
  Expected<Rewritten> out = apply_replacement(g, ids, r);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out.ok() ? std::move(*out) : Rewritten{};
}

const char* kInception = R"(graph inception {
  input x: f32[1,4,8,8]
  weight w1: f32[3,4,1,1]
  weight w3: f32[5,4,3,3]
  %a = conv2d(x, w1)
  %b = relu(%a)
  %c = conv2d(x, w3, pad=[1,1,1,1])
  %d = relu(%c)
  %e = concat(%b, %d, axis=1)
  output y = %e
})";

TEST_F(RewriterTest, FusesConvAndRelu) {
  Graph g = parse(kInception);
  TensorIds ids(g);
  std::vector<Replacement> rs = replacements(g, "t_fuse_conv_relu");
  ASSERT_EQ(rs.size(), 2u);
  Rewritten out = apply_ok(g, ids, rs[0]);
  EXPECT_TRUE(check(out.graph).ok());
  EXPECT_EQ(out.graph.num_operators(), g.num_operators() - 1);
  EXPECT_EQ(print(out.graph), R"(graph inception {
  input x: f32[1,4,8,8]
  weight w1: f32[3,4,1,1]
  weight w3: f32[5,4,3,3]
  %0: f32[1,3,8,8] = conv2d(x, w1, act=relu)
  %1: f32[1,5,8,8] = conv2d(x, w3, pad=[1,1,1,1])
  %2: f32[1,5,8,8] = relu(%1)
  %3: f32[1,8,8,8] = concat(%0, %2, axis=1)
  output y = %3
}
)");
  expect_same_function(g, out.graph);
}

TEST_F(RewriterTest, MergesA1x1AndA3x3ConvThroughEnlargedConcatenatedWeights) {
  Graph g = parse(kInception);
  TensorIds ids(g);
  std::vector<Replacement> plain = replacements(g, "t_merge_conv");
  EXPECT_TRUE(plain.empty()) << "kernels of different sizes do not concatenate";
  std::vector<Replacement> rs = replacements(g, "t_merge_conv_enlarge");
  ASSERT_EQ(rs.size(), 1u);
  Rewritten out = apply_ok(g, ids, rs[0]);
  EXPECT_TRUE(check(out.graph).ok());
  std::string text = print(out.graph);
  EXPECT_NE(text.find("enlarge(w1, kernel=[3,3])"), std::string::npos) << text;
  EXPECT_NE(text.find("split("), std::string::npos) << text;
  expect_same_function(g, out.graph);
}

// A conv is the conv of its kernel enlarged to 3x3 (true for a 1x1 kernel):
// on a 3x3 kernel the enlarge would be an identity, and the target is refused.
TEST(Rewriter, AnEnlargeToTheKernelItHasIsRefused) {
  Expected<RuleSet> s = parse_rules(R"(# tso rules v1
rule t_enlarge {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w: f32[4,4,1,1]
  source {
    %0 = conv2d(x, w, pad=same)
    output %0
  }
  target {
    %0 = enlarge(w, kernel=[3,3])
    %1 = conv2d(x, %0, pad=same)
    output %1
  }
}
)",
                                    "enlarge.rules");
  ASSERT_TRUE(s.ok()) << s.error().message;
  RuleIndex index;
  index.add(*s, {.reverse_verified = false});
  for (int k : {1, 3}) {
    Graph g =
        parse("graph g {\n  input x: f32[1,4,8,8]\n  weight w: f32[4,4," + std::to_string(k) + "," +
              std::to_string(k) + "]\n  %c = conv2d(x, w, pad=same)\n  output y = %c\n}\n");
    GraphIndex gi(g);
    std::vector<std::string> results;
    for_each_match(g, gi, index, [&](const Match& m) {
      Expected<Replacement> r = build_replacement(g, m);
      results.push_back(r ? "ok" : r.error().message);
    });
    ASSERT_EQ(results.size(), 1u) << k;
    if (k == 1)
      EXPECT_EQ(results[0], "ok");
    else
      EXPECT_NE(results[0].find("enlarges a kernel to its own size"), std::string::npos)
          << results[0];
  }
}

// Shape inference after a rewrite: each product fits in int64 bytes (2^62),
// the merged one (2^63) does not, so the merge is refused, naming the
// overflowing type, and the search skips it (match_set's score).
TEST_F(RewriterTest, ATargetWhoseSizeOverflowsIsRefused) {
  const Graph g = parse(R"(graph g {
  input x: f32[1073741824,1]
  weight w1: f32[1,1073741824]
  weight w2: f32[1,1073741824]
  %a = matmul(x, w1)
  %b = matmul(x, w2)
  output a = %a
  output b = %b
})");
  GraphIndex gi(g);
  std::vector<std::string> errors;
  for_each_match(g, gi, index_, [&](const Match& m) {
    if (m.rule->rule->name != "t_merge_matmul") return;
    Expected<Replacement> r = build_replacement(g, m);
    errors.push_back(r ? "built" : r.error().message);
  });
  ASSERT_FALSE(errors.empty());
  for (const std::string& e : errors)
    EXPECT_EQ(e,
              "matmul: output 0: f32[1073741824,2147483648] does not fit in memory: its size "
              "in bytes overflows int64");
}

TEST_F(RewriterTest, IncrementalHashEqualsTheRecomputedOneAndIgnoresOrder) {
  Graph g = parse(kInception);
  TensorIds ids(g);
  GraphIndex gi(g);
  std::vector<Replacement> rs = replacements(g, "t_fuse_conv_relu");
  ASSERT_EQ(rs.size(), 2u);
  const uint64_t h0 = graph_hash(g, ids);
  // First fusion: incremental equals full.
  Rewritten a = apply_ok(g, ids, rs[0]);
  const uint64_t ha = h0 + hash_delta(g, gi, ids, rs[0]);
  EXPECT_EQ(ha, graph_hash(a.graph, a.ids));
  EXPECT_NE(ha, h0);
  // Then the other one, in either order: the same graph, the same hash.
  std::vector<Replacement> ra = replacements(a.graph, "t_fuse_conv_relu");
  ASSERT_EQ(ra.size(), 1u);
  Rewritten ab = apply_ok(a.graph, a.ids, ra[0]);
  Rewritten b = apply_ok(g, ids, rs[1]);
  std::vector<Replacement> rb = replacements(b.graph, "t_fuse_conv_relu");
  ASSERT_EQ(rb.size(), 1u);
  Rewritten ba = apply_ok(b.graph, b.ids, rb[0]);
  EXPECT_EQ(ab.graph, ba.graph);
  EXPECT_EQ(graph_hash(ab.graph, ab.ids), graph_hash(ba.graph, ba.ids));
  EXPECT_EQ(ha + hash_delta(a.graph, GraphIndex(a.graph), a.ids, ra[0]),
            graph_hash(ab.graph, ab.ids));
}

TEST_F(RewriterTest, ATargetOutputThatIsAVariableRewiresItsReaders) {
  Graph g = parse(R"(graph g {
  input x: f32[1,8,4,4]
  %a, %b = split(x, axis=1, sizes=[4,4])
  %c = concat(%a, %b, axis=1)
  %d = relu(%c)
  output y = %d
  output z = %c
})");
  TensorIds ids(g);
  GraphIndex gi(g);
  std::vector<Replacement> rs = replacements(g, "t_concat_of_split");
  ASSERT_EQ(rs.size(), 1u);
  Rewritten out = apply_ok(g, ids, rs[0]);
  EXPECT_EQ(out.graph, parse(R"(graph g {
  input x: f32[1,8,4,4]
  %d = relu(x)
  output y = %d
  output z = x
})"));
  EXPECT_EQ(graph_hash(g, ids) + hash_delta(g, gi, ids, rs[0]), graph_hash(out.graph, out.ids));
}

TEST_F(RewriterTest, MergesMatmulsSharingAnInputAndPlacesTheTargetAfterLateWeights) {
  // w2 is declared after the first matmul's reader: the merged matmul must
  // move below it.
  Graph g = parse(R"(graph g {
  input x: f32[1,16,6]
  weight w1: f32[6,3]
  %a = matmul(x, w1)
  %b = relu(%a)
  weight w2: f32[6,5]
  %c = matmul(x, w2)
  output b = %b
  output c = %c
})");
  TensorIds ids(g);
  std::vector<Replacement> rs = replacements(g, "t_merge_matmul");
  ASSERT_EQ(rs.size(), 2u);
  for (const Replacement& r : rs) {
    Rewritten out = apply_ok(g, ids, r);
    EXPECT_TRUE(check(out.graph).ok());
    EXPECT_EQ(out.graph.num_operators(), 4);  // concat, matmul, split, relu
    expect_same_function(g, out.graph);
  }
}

}  // namespace
}  // namespace tso::opt
