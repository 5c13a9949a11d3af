#include "core/checker.h"

#include <gtest/gtest.h>

#include <string>

namespace tso {
namespace {

using Ints = std::vector<int64_t>;

TensorType f32(std::initializer_list<int64_t> dims) { return {DType::kF32, Shape(dims)}; }

Attrs attrs(std::initializer_list<std::pair<AttrKey, AttrValue>> entries) {
  Attrs a;
  for (const auto& [k, v] : entries) a.set(k, v);
  return a;
}

// A node appended as-is, bypassing the builder's checks, so that only
// `finish` (which runs the checker) can catch what is wrong with it.
Node raw(Op op, std::vector<TensorRef> args, Attrs a, std::vector<TensorType> outs,
         std::string name) {
  return Node{op, std::move(args), std::move(a), std::move(outs), std::move(name), nullptr};
}

// The checker's message for the finished graph, or "ok".
std::string finish_message(GraphBuilder& b) {
  Expected<Graph> g = b.finish();
  return g.ok() ? "ok" : g.error().message;
}

void expect_contains(const std::string& got, std::initializer_list<std::string> fragments) {
  for (const std::string& f : fragments)
    EXPECT_NE(got.find(f), std::string::npos) << "'" << f << "' missing from: " << got;
}

TEST(Checker, AcceptsBuiltGraphs) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({1, 3, 8, 8}));
  TensorRef w = b.weight("w", f32({4, 3, 3, 3}));
  b.input("unused", f32({2}));
  TensorRef c = *b.add1(Op::Conv2d, {x, w}, attrs({{AttrKey::pad, Padding{Padding::kSame, {}}}}));
  std::vector<TensorRef> parts =
      *b.add(Op::Split, {c}, attrs({{AttrKey::axis, int64_t{-3}}, {AttrKey::sizes, Ints{1, 3}}}));
  TensorRef r = *b.add1(Op::Relu, {parts[1]});
  TensorRef o =
      b.add_opaque({r}, attrs({{AttrKey::op_type, std::string("Foo")}}), {f32({7})}, "foo")
          ->front();
  b.output("a", parts[0]);
  b.output("b", o);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(check(*g).ok());
  EXPECT_EQ(g->size(), 7);
}

TEST(Checker, AcceptsWeightDataOfTheRightSize) {
  GraphBuilder b;
  auto data = std::make_shared<WeightData>(WeightData{f32({2, 3}), std::vector<std::byte>(24)});
  b.output("y", b.weight("w", f32({2, 3}), data));
  EXPECT_EQ(finish_message(b), "ok");
}

TEST(Checker, RejectsRecordedTypesThatDifferFromInference) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Relu, {x}, {}, {f32({3, 2})}, "r")));
  EXPECT_EQ(finish_message(b),
            "node 'r' (relu): recorded types (f32[3,2]) differ from inferred (f32[2,3]) for "
            "inputs (f32[2,3])");
}

TEST(Checker, RejectsShapeErrors) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  TensorRef y = b.input("y", f32({4, 3}));
  b.output("z", b.add_node(raw(Op::Add, {x, y}, {}, {f32({4, 3})}, "sum")));
  EXPECT_EQ(finish_message(b),
            "node 'sum' (add): add: shapes f32[2,3] and f32[4,3] do not broadcast");
}

TEST(Checker, RejectsIncompleteAttributes) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({1, 3, 8, 8}));
  TensorRef w = b.weight("w", f32({4, 3, 3, 3}));
  b.output("y", b.add_node(raw(Op::Conv2d, {x, w}, {}, {f32({1, 4, 6, 6})}, "conv")));
  expect_contains(finish_message(b), {"node 'conv' (conv2d)", "incomplete", "stride=[1,1]"});
}

TEST(Checker, RejectsUnknownAndMissingAttributes) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Relu, {x}, attrs({{AttrKey::axis, int64_t{0}}}),
                               {f32({2, 3})}, "r")));
  EXPECT_EQ(finish_message(b), "node 'r' (relu): relu: does not take attribute 'axis'");
  TensorRef x2 = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Softmax, {x2}, {}, {f32({2, 3})}, "s")));
  EXPECT_EQ(finish_message(b), "node 's' (softmax): softmax: missing required attribute 'axis'");
}

TEST(Checker, RejectsNonCanonicalAttributes) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Softmax, {x}, attrs({{AttrKey::axis, int64_t{-1}}}),
                               {f32({2, 3})}, "s")));
  expect_contains(finish_message(b), {"node 's' (softmax)", "axis=-1", "not canonical", "axis=1"});
}

TEST(Checker, RejectsWrongArity) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Relu, {x, x}, {}, {f32({2, 3})}, "r")));
  expect_contains(finish_message(b), {"node 'r' (relu)", "has 2 inputs", "1..1"});
}

TEST(Checker, RejectsArgumentsThatAreNotEarlierOutputs) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Relu, {{x.node, 1}}, {}, {f32({2, 3})}, "r")));
  expect_contains(finish_message(b), {"node 'r' (relu)", "argument 0 refers to output 1 of node 0"});
  b.input("x", f32({2, 3}));
  b.output("y", b.add_node(raw(Op::Relu, {{1, 0}}, {}, {f32({2, 3})}, "loop")));
  expect_contains(finish_message(b), {"node 'loop' (relu)", "not an output of an earlier node"});
}

TEST(Checker, RejectsSplitWithWrongOutputCount) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({4, 6}));
  Attrs a = attrs({{AttrKey::axis, int64_t{1}}, {AttrKey::sizes, Ints{2, 4}}});
  b.output("y", b.add_node(raw(Op::Split, {x}, a, {f32({4, 2})}, "s")));
  EXPECT_EQ(finish_message(b), "node 's' (split): has 1 outputs but sizes [2,4]");
}

TEST(Checker, RejectsDuplicateInputNames) {
  GraphBuilder b;
  b.input("x", f32({2}));
  b.output("y", b.weight("x", f32({3})));
  EXPECT_EQ(finish_message(b), "node 'x' (weight): has the same name as node 'x' (input)");
}

TEST(Checker, RejectsInputsWithAttributes) {
  GraphBuilder b;
  b.output("y", b.add_node(raw(Op::Input, {}, attrs({{AttrKey::shape, Ints{3}}}), {f32({3})}, "x")));
  EXPECT_EQ(finish_message(b), "node 'x' (input): takes no attributes, has {shape=[3]}");
  b.output("y", b.add_node(raw(Op::Weight, {}, {}, {f32({3}), f32({3})}, "w")));
  EXPECT_EQ(finish_message(b), "node 'w' (weight): must have exactly one output");
}

TEST(Checker, RejectsBadOutputs) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2}));
  b.output("y", x);
  b.output("y", x);
  EXPECT_EQ(finish_message(b), "output name 'y' is used twice");
  TensorRef x2 = b.input("x", f32({2}));
  b.output("y", {x2.node, 3});
  EXPECT_EQ(finish_message(b), "output 'y' refers to output 3 of node 0, which does not exist");
}

TEST(Checker, RejectsWeightDataOfTheWrongSize) {
  GraphBuilder b;
  auto data = std::make_shared<WeightData>(WeightData{f32({2, 3}), std::vector<std::byte>(20)});
  b.output("y", b.weight("w", f32({2, 3}), data));
  expect_contains(finish_message(b), {"node 'w' (weight)", "20 bytes", "f32[2,3] (24 bytes)"});
  auto other = std::make_shared<WeightData>(WeightData{f32({3, 2}), std::vector<std::byte>(24)});
  b.output("y", b.weight("w", f32({2, 3}), other));
  expect_contains(finish_message(b), {"f32[3,2]", "f32[2,3]"});
}

TEST(Checker, RejectsOpaqueWithoutTypes) {
  GraphBuilder b;
  TensorRef x = b.input("x", f32({2}));
  Attrs a = attrs({{AttrKey::op_type, std::string("Foo")}, {AttrKey::domain, std::string("")},
                   {AttrKey::payload, std::string("")}});
  TensorRef o = b.add_node(raw(Op::Opaque, {x}, a, {}, "foo"));
  b.output("y", x);
  b.output("z", {o.node, 0});
  expect_contains(finish_message(b), {"node 'foo' (opaque)"});
}

}  // namespace
}  // namespace tso
