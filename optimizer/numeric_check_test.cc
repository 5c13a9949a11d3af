#include "optimizer/numeric_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

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

// s = x * scale (x random, scale a weight) -> greater(s, threshold) = above
// (an output); threshold [4] broadcast over x [2,4]. Both operands are
// outputs only through the comparison.
Graph threshold_graph(std::vector<float> scale, std::vector<float> threshold) {
  auto data = [](const std::vector<float>& v) {
    auto w = std::make_shared<WeightData>();
    w->type = {DType::kF32, Shape{int64_t(v.size())}};
    w->bytes.resize(v.size() * sizeof(float));
    std::memcpy(w->bytes.data(), v.data(), w->bytes.size());
    return w;
  };
  GraphBuilder b;
  const TensorType x_type{DType::kF32, Shape{2, 4}}, row{DType::kF32, Shape{4}};
  TensorRef x = b.input("x", x_type);
  TensorRef s = *b.add1(Op::Mul, {x, b.weight("scale", row, data(scale))});
  b.output("above", *b.add1(Op::Greater, {s, b.weight("threshold", row, data(threshold))}));
  Expected<Graph> g = b.finish();
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

// Column 0 scales x by 0 against a threshold of 0 in the original: every
// element of it a tie. Scaled by 1e-7 instead, half its elements flip where
// the operands are within the tolerance of each other: near ties, not
// errors. Column 3's threshold moved by 0.5 flips elements whose operands are
// far apart: an error, in the comparison and in its operand.
TEST(NumericCheck, ComparisonsMayFlipOnlyWhereTheirOperandsNearlyTie) {
  const Graph original = threshold_graph({0, 1, 1, 1}, {0, 0, 2, 0});
  Expected<CheckResult> r =
      compare_graphs(original, threshold_graph({1e-7f, 1, 1, 1}, {0, 0, 2, 0}), {4, 1, 1e-4});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LT(r->max_relative_error, 1e-6);  // the operand x * scale, compared like an output
  EXPECT_GT(r->near_ties, 0);
  EXPECT_LE(r->near_ties, 8);  // column 0 of 2 rows in 4 runs
  EXPECT_NE(check_notes(*r).find("comparison result"), std::string::npos);

  r = compare_graphs(original, threshold_graph({0, 1, 1, 1}, {0, 0, 2, 0.5f}), {4, 1, 1e-4});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->max_relative_error, 1);
  EXPECT_EQ(r->worst_output, "above");

  r = compare_graphs(original, original, {4, 1, 1e-4});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->max_relative_error, 0);
  EXPECT_EQ(r->near_ties, 0);
  EXPECT_EQ(check_notes(*r), "");
}

std::shared_ptr<WeightData> filled(const TensorType& t, float v) {
  auto w = std::make_shared<WeightData>();
  w->type = t;
  w->bytes.resize(size_t(t.shape.numel()) * sizeof(float));
  for (int64_t k = 0; k < t.shape.numel(); ++k) std::memcpy(&w->bytes[k * 4], &v, 4);
  return w;
}

// (x * 100 + 0.001) - x * 100 against 0.001 + (x * 100 - x * 100): the same
// function, 0.001, which f32 rounds at the scale of 100 (an ulp of 7.6e-6)
// and f64 at 1e-14: over the f32 check's tolerance, well within the f64 one.
// A result off by 1e-7 of itself is the other way round.
Graph cancelling(bool small_first, float scale = 1.0f) {
  GraphBuilder b;
  TensorRef x = b.input("x", kF32);
  TensorRef big = b.weight("big", kF32, filled(kF32, 100.0f));
  TensorRef small = b.weight("small", kF32, filled(kF32, 0.001f * scale));
  TensorRef t = *b.add1(Op::Mul, {x, big});
  TensorRef y = small_first ? *b.add1(Op::Add, {small, *b.add1(Op::Sub, {t, t})})
                            : *b.add1(Op::Sub, {*b.add1(Op::Add, {t, small}), t});
  b.output("y", y);
  Expected<Graph> g = b.finish();
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

TEST(NumericCheck, F64TellsRoundingFromADifferentFunction) {
  CheckOptions f32, f64;
  f64.f64 = true;
  Expected<CheckResult> r = compare_graphs(cancelling(false), cancelling(true), f32);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->max_relative_error, f32.tolerance);
  r = compare_graphs(cancelling(false), cancelling(true), f64);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LT(r->max_relative_error, kF64Tolerance);

  r = compare_graphs(cancelling(true), cancelling(true, 1.0f + 1e-7f), f32);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LT(r->max_relative_error, f32.tolerance);
  r = compare_graphs(cancelling(true), cancelling(true, 1.0f + 1e-7f), f64);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->max_relative_error, kF64Tolerance);

  CheckResult noted = *r;
  noted.f64_max_relative_error = 2e-13;
  EXPECT_NE(check_notes(noted).find("in f64 max relative error 2e-13 (bound 1e-09)"),
            std::string::npos)
      << check_notes(noted);
}

}  // namespace
}  // namespace tso::opt
