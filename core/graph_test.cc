// Graphs as values: structural equality and hashing ignore the order of
// independent nodes and intermediate names but see everything else; the
// builder drops dead operators and reports bad nodes by name.
#include <gtest/gtest.h>

#include "core/checker.h"
#include "core/testing/random_graph.h"
#include "core/text_format.h"

namespace tso {
namespace {

Graph parse_ok(const std::string& text) {
  Expected<Graph> g = parse_graph(text, "<test>");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

const char* kBranches = R"(graph g {
  input x: f32[2,4]
  weight w: f32[4,4]
  %a = matmul(x, w)
  %b = relu(x)
  %c = add(%a, %b)
  output y = %c
})";

TEST(Graph, EqualityAndHashIgnoreIndependentNodeOrderAndLocalNames) {
  Graph a = parse_ok(kBranches);
  Graph b = parse_ok(R"(graph g {
  input x: f32[2,4]
  weight w: f32[4,4]
  %relu = relu(x)
  %mm = matmul(x, w)
  %sum = add(%mm, %relu)
  output y = %sum
})");
  EXPECT_NE(print(a), print(b));
  EXPECT_TRUE(a == b);
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(Graph, EqualitySeesOperatorsArgumentOrderAttributesAndNames) {
  Graph a = parse_ok(kBranches);
  const char* variants[] = {
      // different operator
      "graph g {\n input x: f32[2,4]\n weight w: f32[4,4]\n %a = matmul(x, w)\n"
      " %b = tanh(x)\n %c = add(%a, %b)\n output y = %c\n}",
      // swapped arguments of a commutative operator are still a different graph
      "graph g {\n input x: f32[2,4]\n weight w: f32[4,4]\n %a = matmul(x, w)\n"
      " %b = relu(x)\n %c = add(%b, %a)\n output y = %c\n}",
      // an attribute
      "graph g {\n input x: f32[2,4]\n weight w: f32[4,4]\n %a = matmul(x, w, act=relu)\n"
      " %b = relu(x)\n %c = add(%a, %b)\n output y = %c\n}",
      // an input's name
      "graph g {\n input z: f32[2,4]\n weight w: f32[4,4]\n %a = matmul(z, w)\n"
      " %b = relu(z)\n %c = add(%a, %b)\n output y = %c\n}",
      // an output's name
      "graph g {\n input x: f32[2,4]\n weight w: f32[4,4]\n %a = matmul(x, w)\n"
      " %b = relu(x)\n %c = add(%a, %b)\n output out = %c\n}",
      // weight and input swapped roles
      "graph g {\n weight x: f32[2,4]\n input w: f32[4,4]\n %a = matmul(x, w)\n"
      " %b = relu(x)\n %c = add(%a, %b)\n output y = %c\n}",
  };
  for (const char* text : variants) {
    Graph b = parse_ok(text);
    EXPECT_FALSE(a == b) << text;
    EXPECT_NE(structural_hash(a), structural_hash(b)) << text;
  }
}

TEST(Graph, SharedSubexpressionsAreNotTheSameAsDuplicates) {
  Graph shared = parse_ok(R"(graph g {
  input x: f32[4]
  %r = relu(x)
  %s = add(%r, %r)
  output y = %s
})");
  Graph duplicated = parse_ok(R"(graph g {
  input x: f32[4]
  %r1 = relu(x)
  %r2 = relu(x)
  %s = add(%r1, %r2)
  output y = %s
})");
  EXPECT_FALSE(shared == duplicated);
}

TEST(Graph, BuilderDropsDeadOperatorsAndKeepsSources) {
  Graph g = parse_ok(R"(graph g {
  input x: f32[4]
  input unused: f32[3]
  %dead = sigmoid(x)
  %r = relu(x)
  output y = %r
})");
  EXPECT_EQ(g.size(), 3);  // x, unused, relu
  EXPECT_EQ(g.num_operators(), 1);
  EXPECT_EQ(g.input_nodes().size(), 2u);
}

TEST(Graph, BuilderNamesTheBadNode) {
  GraphBuilder b;
  TensorRef x = b.input("x", {DType::kF32, Shape{2, 3}});
  TensorRef w = b.weight("w", {DType::kF32, Shape{4, 4}});
  Expected<TensorRef> r = b.add1(Op::Matmul, {x, w}, {}, "proj");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("proj"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("[2,3]"), std::string::npos) << r.error().message;
}

TEST(Graph, RandomGraphsPassTheCheckerAndReparseEqual) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Graph g = tso::testing::random_graph(seed);
    Status s = check(g);
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.error().message;
    Graph again = parse_ok(print(g));
    EXPECT_TRUE(again == g) << "seed " << seed;
    EXPECT_EQ(structural_hash(again), structural_hash(g)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tso
