#include "optimizer/numeric_check.h"

#include <gtest/gtest.h>

#include <functional>

namespace tso::opt {
namespace {

const TensorType kF32{DType::kF32, Shape{2, 3}};

// x -> pre -> opaque "foo" -> post -> y, with `pre` and `post` adding relus.
Graph opaque_graph(int pre_relus, int post_relus, bool with_opaque = true) {
  GraphBuilder b;
  TensorRef t = b.input("x", kF32);
  for (int k = 0; k < pre_relus; ++k) t = *b.add1(Op::Relu, {t});
  if (with_opaque) {
    Attrs a;
    a.set(AttrKey::op_type, std::string("Foo"));
    t = (*b.add_opaque({t}, a, {kF32}, "foo"))[0];
  }
  for (int k = 0; k < post_relus; ++k) t = *b.add1(Op::Relu, {t});
  b.output("y", t);
  Expected<Graph> g = b.finish();
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

TEST(NumericCheck, WeightsWithoutDataGetTheSameRandomValues) {
  GraphBuilder b;
  TensorRef x = b.input("x", kF32), w = b.weight("w", kF32);
  b.output("y", *b.add1(Op::Add, {x, w}));
  Graph a = *b.finish();
  GraphBuilder c;
  TensorRef x2 = c.input("x", kF32), w2 = c.weight("w", kF32);
  c.output("y", *c.add1(Op::Add, {w2, x2}));
  Expected<CheckResult> r = compare_graphs(a, *c.finish());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->max_relative_error, 0);
}

TEST(NumericCheck, EqualRegionsAroundAnOpaqueNodePass) {
  // relu is idempotent: two relus after the opaque node equal one.
  Expected<CheckResult> r = compare_graphs(opaque_graph(1, 2), opaque_graph(1, 1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->max_relative_error, 0);
}

TEST(NumericCheck, AChangeBeforeAnOpaqueNodeIsCaughtInItsArguments) {
  Expected<CheckResult> r = compare_graphs(opaque_graph(1, 1), opaque_graph(0, 1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->max_relative_error, 0.1);
  EXPECT_EQ(r->worst_output, "opaque-arg:foo:0");
}

TEST(NumericCheck, AChangeAfterAnOpaqueNodeIsCaughtInTheOutputs) {
  Expected<CheckResult> r = compare_graphs(opaque_graph(1, 1), opaque_graph(1, 0));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->max_relative_error, 0.1);
  EXPECT_EQ(r->worst_output, "y");
}

TEST(NumericCheck, DroppingAnOpaqueNodeIsAnError) {
  Expected<CheckResult> r = compare_graphs(opaque_graph(1, 1), opaque_graph(1, 1, false));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("opaque nodes"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace tso::opt
