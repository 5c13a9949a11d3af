#include "optimizer/post_op.h"

#include <gtest/gtest.h>

#include <string>

#include "core/text_format.h"

namespace tso::opt {
namespace {

// The post-op status of the node named `name` in the graph `text`.
std::optional<PostOp> status(const std::string& text, const std::string& name) {
  Expected<Graph> g = parse_graph(text, "g.tso");
  EXPECT_TRUE(g.ok()) << g.error().message;
  if (!g) return std::nullopt;
  GraphIndex index(*g);
  for (int i = 0; i < g->size(); ++i)
    if (g->node(i).name == name) return post_op(*g, index, i);
  ADD_FAILURE() << "no node " << name;
  return std::nullopt;
}

const char* kConvChain = R"(graph g {
  input x: f32[1,8,6,6]
  input r: f32[1,8,6,6]
  weight w: f32[8,8,3,3]
  weight s: f32[1,8,1,1]
  weight h: f32[1,1,1,6]
  %c = conv2d(x, w, pad=same)
  %a = add(r, %c)
  %m = mul(%a, s)
  %q = relu(%m)
  %h = add(%q, h)
  output y = %h
})";

TEST(PostOp, ChainsAfterAConvolution) {
  std::optional<PostOp> a = status(kConvChain, "%a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->anchor, Op::Conv2d);
  EXPECT_EQ(a->chain, 1);  // the residual add reads the convolution on the right
  std::optional<PostOp> m = status(kConvChain, "%m");  // a per-channel scale
  ASSERT_TRUE(m);
  EXPECT_EQ(m->chain, 0);
  std::optional<PostOp> q = status(kConvChain, "%q");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->anchor, Op::Conv2d);
  // A per-column operand does not fit a convolution's per-channel post-op.
  EXPECT_FALSE(status(kConvChain, "%h"));
  EXPECT_FALSE(status(kConvChain, "%c"));
}

TEST(PostOp, NeedsTheChainsOnlyReader) {
  const char* text = R"(graph g {
    input x: f32[1,8,6,6]
    weight w: f32[8,8,3,3]
    %c = conv2d(x, w, pad=same)
    %a = relu(%c)
    %b = sigmoid(%c)
    %d = relu(%a)
    output y = %b
    output z = %d
    output t = %a
  })";
  EXPECT_FALSE(status(text, "%a"));  // %c has two readers
  EXPECT_FALSE(status(text, "%d"));  // %a is a graph output
}

TEST(PostOp, ProductsAndOperandSides) {
  const char* text = R"(graph g {
    input t: f32[4,16]
    input u: f32[4,32]
    weight k: f32[16,32]
    weight b: f32[32]
    %p = matmul(t, k)
    %a = add(b, %p)
    %s = sub(u, %a)
    output y = %s
  })";
  std::optional<PostOp> a = status(text, "%a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->anchor, Op::Matmul);
  EXPECT_EQ(a->chain, 1);
  EXPECT_FALSE(status(text, "%s"));  // the chain is sub's right operand
}

TEST(PostOp, WeightOnlyAnchorsAreFolded) {
  const char* text = R"(graph g {
    input x: f32[4,16]
    weight k: f32[16,16]
    weight j: f32[16,16]
    %p = matmul(k, j)
    %r = relu(%p)
    %y = matmul(x, %r)
    output y = %y
  })";
  EXPECT_FALSE(status(text, "%r"));
}

// relu6 fused into a convolution is the convolution alone followed by a
// clip with its bounds, which reads the convolution's result.
TEST(PostOp, AFusedActivationSplitsIntoItsKernelAndAPostOp) {
  Expected<Graph> g = parse_graph(R"(graph g {
    input x: f32[1,8,6,6]
    weight w: f32[8,8,3,3]
    %c = conv2d(x, w, pad=same, act=clip, min=0, max=6)
    %p = conv2d(x, w, pad=same)
    output y = %c
    output z = %p
  })",
                                  "g.tso");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Node& c = g->node(2);
  std::optional<FusedActivation> f = split_fused_activation(c);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->anchor.attrs, g->node(3).attrs);  // act=none, default bounds
  EXPECT_EQ(f->activation.op, Op::Clip);
  EXPECT_EQ(f->activation.attrs.f(AttrKey::min), 0);
  EXPECT_EQ(f->activation.attrs.f(AttrKey::max), 6);
  EXPECT_EQ(f->activation.outs, c.outs);
  EXPECT_EQ(f->post_op.anchor, Op::Conv2d);
  EXPECT_EQ(f->post_op.chain, 0);
  EXPECT_FALSE(split_fused_activation(g->node(3)));
}

}  // namespace
}  // namespace tso::opt
