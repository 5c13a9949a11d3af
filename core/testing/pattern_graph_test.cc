#include "core/testing/pattern_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/checker.h"
#include "core/text_format.h"

namespace tso::testing {
namespace {

TEST(PatternGraph, SameSeedSameGraph) {
  for (uint64_t seed : {1u, 2u, 77u}) {
    Graph a = pattern_graph(seed), b = pattern_graph(seed);
    EXPECT_TRUE(a == b) << "seed " << seed;
    EXPECT_EQ(print(a), print(b)) << "seed " << seed;
  }
  EXPECT_NE(print(pattern_graph(1)), print(pattern_graph(2)));
}

// Checked, within the operator limit, f32 throughout, every weight with
// data of its type (so that the graph folds and runs as it is).
TEST(PatternGraph, GraphsAreWellTypedWithWeightData) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Graph g = pattern_graph(seed);
    ASSERT_TRUE(check(g).ok()) << "seed " << seed << "\n" << print(g);
    EXPECT_GE(g.num_operators(), 1) << "seed " << seed;
    EXPECT_LE(g.num_operators(), 30) << "seed " << seed;
    for (const Node& n : g.nodes()) {
      for (const TensorType& t : n.outs) EXPECT_EQ(t.dtype, DType::kF32) << "seed " << seed;
      if (n.op != Op::Weight) continue;
      ASSERT_NE(n.data, nullptr) << "seed " << seed << " weight " << n.name;
      EXPECT_EQ(n.data->type, n.outs[0]) << "seed " << seed;
      EXPECT_EQ(n.data->bytes.size(), n.outs[0].shape.numel() * sizeof(float)) << "seed " << seed;
    }
  }
  for (int limit : {1, 3, 10})
    for (uint64_t seed = 0; seed < 50; ++seed)
      EXPECT_LE(pattern_graph(seed, {.max_operators = limit}).num_operators(), limit);
}

// The patterns the rules target all occur: every operator of the motifs,
// convolutions and products sharing their input, a transpose undone by its
// inverse, a concat read by a split and a batchnorm after a conv.
TEST(PatternGraph, SeedsCoverThePatternsTheRulesTarget) {
  std::map<Op, int> ops;
  std::map<std::string, int> patterns;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Graph g = pattern_graph(seed);
    std::map<std::pair<int, int>, int> readers;  // (tensor, reader op) -> count
    for (const Node& n : g.nodes()) {
      ++ops[n.op];
      if (n.args.empty()) continue;
      const Node& first = g.nodes()[n.args[0].node];
      if (n.op == Op::Conv2d || n.op == Op::Matmul || n.op == Op::Gemm)
        if (++readers[{n.args[0].node, static_cast<int>(n.op)}] == 2) ++patterns["parallel"];
      if (n.op == Op::Transpose && first.op == Op::Transpose) ++patterns["transpose pair"];
      if (n.op == Op::Split && first.op == Op::Concat) ++patterns["concat split"];
      if (n.op == Op::Concat && first.op == Op::Split) ++patterns["split concat"];
      if (n.op == Op::BatchNorm && first.op == Op::Conv2d) ++patterns["conv batchnorm"];
      if (n.op == Op::BatchNorm && first.op == Op::Concat) ++patterns["concat batchnorm"];
      if (n.op == Op::Conv2d && first.op == Op::Relu) ++patterns["conv chain"];
    }
  }
  for (Op op :
       {Op::Conv2d, Op::Matmul, Op::Gemm, Op::BatchNorm, Op::Transpose, Op::Concat, Op::Split,
        Op::Relu, Op::Sigmoid, Op::Tanh, Op::Add, Op::Mul, Op::ScalarMul, Op::AvgPool, Op::MaxPool})
    EXPECT_GE(ops[op], 5) << op_info(op).name;
  for (const char* p : {"parallel", "transpose pair", "concat split", "split concat",
                        "conv batchnorm", "concat batchnorm", "conv chain"})
    EXPECT_GE(patterns[p], 10) << p;
}

}  // namespace
}  // namespace tso::testing
