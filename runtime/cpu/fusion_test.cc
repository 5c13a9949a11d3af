// Which nodes join a convolution's or matrix product's post-ops.
#include "runtime/cpu/fusion.h"

#include <gtest/gtest.h>

#include "core/text_format.h"
#include "runtime/reference/runtime_cases.h"

namespace tso::cpu {
namespace {

Graph parse(std::string_view text) {
  Expected<Graph> g = parse_graph(text, "<test>");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? std::move(*g) : Graph{};
}

int named(const Graph& g, std::string_view name) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name == name) return i;
  ADD_FAILURE() << "no node " << name;
  return -1;
}

TEST(Fusion, ConvTakesBiasActivationsAndTheResidualAdd) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,8,6,6]
  weight w: f32[8,8,3,3]
  weight b: f32[1,8,1,1]
  %c = conv2d(x, w, pad=same)
  %a = add(%c, b)
  %r = relu(%a)
  %s = add(x, %r)
  %k = clip(%s, min=0, max=6)
  output y = %k
})");
  const Fusion f = find_fusions(g, true);
  const int c = named(g, "%c");
  ASSERT_GE(f.group_of[c], 0);
  const FusionGroup& group = f.groups[f.group_of[c]];
  ASSERT_EQ(group.post.size(), 4u);
  EXPECT_EQ(group.tail(), named(g, "%k"));
  EXPECT_EQ(group.post[0].other.node, named(g, "b"));
  EXPECT_EQ(group.post[1].other.node, -1);  // relu: unary
  EXPECT_EQ(group.post[2].other.node, named(g, "x"));
  EXPECT_EQ(find_fusions(g, false).groups[0].post.size(), 0u);
}

TEST(Fusion, StopsAtValuesWithOtherUsersOrThatAreOutputs) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,8,6,6]
  weight w: f32[8,8,1,1]
  %c = conv2d(x, w)
  %r = relu(%c)
  %s = sigmoid(%c)
  %d = conv2d(%r, w)
  %t = tanh(%d)
  %u = add(%s, %t)
  output y = %u
  output t = %t
})");
  const Fusion f = find_fusions(g, true);
  EXPECT_TRUE(f.groups[f.group_of[named(g, "%c")]].post.empty());  // two users
  const FusionGroup& d = f.groups[f.group_of[named(g, "%d")]];
  ASSERT_EQ(d.post.size(), 1u);  // tanh joins; %t is an output, so the add does not
  EXPECT_EQ(d.tail(), named(g, "%t"));
  EXPECT_EQ(f.group_of[named(g, "%u")], -1);
}

TEST(Fusion, ProductTakesRowBiasesButNotColumnOnes) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,4,16]
  weight w: f32[16,8]
  weight v: f32[8,8]
  weight b: f32[8]
  weight c: f32[4,1]
  %m = matmul(x, w)
  %a = add(%m, b)
  %g = gelu(%a)
  %n = matmul(%g, v)
  %h = sub(c, %n)
  output y = %h
})");
  const Fusion f = find_fusions(g, true);
  const FusionGroup& m = f.groups[f.group_of[named(g, "%m")]];
  ASSERT_EQ(m.post.size(), 2u);  // add of [8], gelu; stops before the next matmul
  const FusionGroup& n = f.groups[f.group_of[named(g, "%n")]];
  EXPECT_TRUE(n.post.empty());  // %n is the right operand of sub, and c is per row
}

TEST(Fusion, ConvTakesABatchnormOfStoredWeightsOnly) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,4,5,5]
  input m: f32[4]
  weight w: f32[4,4,3,3]
  weight s: f32[4]
  %c = conv2d(x, w)
  %b = batchnorm(%c, s, s, m, s)
  output y = %b
})");
  // The parsed weights carry no data, and m is a graph input: not foldable.
  const Fusion f = find_fusions(g, true);
  EXPECT_TRUE(f.groups[f.group_of[named(g, "%c")]].post.empty());
}

constexpr const char* kExportedGelu = R"(graph g {
  input x: f32[1,4,16]
  weight w: f32[16,32]
  weight b: f32[32]
  weight sqrt2: f32[]
  weight one: f32[]
  weight half: f32[]
  %m = matmul(x, w)
  %a = add(b, %m)
  %d = div(%a, sqrt2)
  %e = erf(%d)
  %p = add(%e, one)
  %q = mul(%a, %p)
  %y = mul(%q, half)
  output y = %y
})";

TEST(Fusion, ProductTakesTheFiveNodesOfAnExportedGelu) {
  const Graph g = ref::testing::graph_with_weights(
      kExportedGelu, 1, {{"sqrt2", 1.4142135f}, {"one", 1.f}, {"half", 0.5f}});
  const Fusion f = find_fusions(g, true);
  const FusionGroup& m = f.groups[f.group_of[named(g, "%m")]];
  ASSERT_EQ(m.post.size(), 2u);  // the bias, then gelu
  EXPECT_EQ(m.post[1].node, named(g, "%y"));
  EXPECT_EQ(m.post[1].inner.size(), 4u);
  for (const char* inner : {"%d", "%e", "%p", "%q"})
    EXPECT_EQ(f.group_of[named(g, inner)], f.group_of[named(g, "%m")]) << inner;
}

TEST(Fusion, AGeluLookalikeWithOtherConstantsStaysApart) {
  const Graph g = ref::testing::graph_with_weights(kExportedGelu, 1,
                                                   {{"sqrt2", 1.5f}, {"one", 1.f}, {"half", 0.5f}});
  const Fusion f = find_fusions(g, true);
  EXPECT_EQ(f.groups[f.group_of[named(g, "%m")]].post.size(), 1u);  // the bias only
  EXPECT_EQ(f.group_of[named(g, "%y")], -1);
}

}  // namespace
}  // namespace tso::cpu
