// Comparisons of two graphs on the CPU runtime: each round's minimum and
// median are kept, and two comparisons join into one over all their rounds.
#include "runtime/cpu/run_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/text_format.h"

namespace tso::cpu {
namespace {

Comparison rounds(std::vector<double> a_min, std::vector<double> b_min,
                  std::vector<double> a_median, std::vector<double> b_median) {
  Comparison c;
  c.a_round_min_ms = a_min;
  c.b_round_min_ms = b_min;
  c.a_round_median_ms = a_median;
  c.b_round_median_ms = b_median;
  c.a_min_ms = *std::min_element(a_min.begin(), a_min.end());
  c.b_min_ms = *std::min_element(b_min.begin(), b_min.end());
  c.rounds = static_cast<int>(a_min.size());
  c.runs = 5;
  return c;
}

TEST(Comparison, JoinedHasEveryRoundTheLeastMinimumAndTheMedianOfAllMedians) {
  const Comparison c = joined(rounds({10, 11}, {9, 12}, {12, 13}, {11, 14}),
                              rounds({8, 10, 12}, {10, 9, 9.5}, {9, 11, 15}, {10, 12, 13}));
  EXPECT_EQ(c.rounds, 5);
  EXPECT_EQ(c.runs, 5);
  EXPECT_EQ(c.a_round_min_ms, (std::vector<double>{10, 11, 8, 10, 12}));
  EXPECT_EQ(c.b_round_min_ms, (std::vector<double>{9, 12, 10, 9, 9.5}));
  EXPECT_EQ(c.a_min_ms, 8);
  EXPECT_EQ(c.b_min_ms, 9);
  EXPECT_EQ(c.a_median_ms, 12);  // of 12, 13, 9, 11, 15
  EXPECT_EQ(c.b_median_ms, 12);  // of 11, 14, 10, 12, 13
}

TEST(Comparison, RoundsAlternateWhichGraphRunsFirst) {
  EXPECT_EQ(timed_first(0), 0);
  EXPECT_EQ(timed_first(1), 1);
  EXPECT_EQ(timed_first(2), 0);
  EXPECT_EQ(timed_first(7), 1);
}

TEST(Comparison, EachRoundGivesItsMinimumAndMedian) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[64,64]
  %r = relu(x)
  output y = %r
})");
  ASSERT_TRUE(g.ok()) << g.error().message;
  CompareOptions o;
  o.rounds = 3;
  o.runs = 4;
  Expected<Comparison> c = compare_graphs(*g, *g, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->a_round_median_ms.size(), 3u);
  ASSERT_EQ(c->b_round_median_ms.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_LE(c->a_round_min_ms[r], c->a_round_median_ms[r]);
    EXPECT_LE(c->b_round_min_ms[r], c->b_round_median_ms[r]);
  }
  EXPECT_LE(c->a_min_ms, c->a_median_ms);
}

// A profile lists each step's rate (nominal FLOPs over its time; "-" for a
// step that computes none) and sums the products apart from the rest.
TEST(RunReport, TheProfileGivesEachStepsRateAndTheProductsShare) {
  RunReport r;
  r.library = "oneDNN";
  r.stats.threads = 2;
  r.steps = {{"conv brgconv", "node 'c' (conv2d) + relu", 3.0, 600'000'000, true},
             {"winograd", "node 'w' (conv2d)", 0.5, 200'000'000, true},
             {"softmax", "node 's' (softmax)", 0.4, 400'000, false},
             {"reorder", "layout change", 0.1, 0, false}};
  const std::string out = format_run_report(r);
  EXPECT_NE(out.find("steps        (slowest first; ms per run, share, GFLOP/s)\n"
                     "     3.000   75.0%     200  conv brgconv  node 'c' (conv2d) + relu\n"
                     "     0.500   12.5%     400  winograd  node 'w' (conv2d)\n"
                     "     0.400   10.0%       1  softmax  node 's' (softmax)\n"
                     "     0.100    2.5%       -  reorder  layout change\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("products     3.500 ms per run (87.5%), 0.800 GFLOP at 229 GFLOP/s: 2 "
                     "steps computing conv2d, matmul or gemm\n"
                     "other steps  0.500 ms per run (12.5%): 2 steps\n"),
            std::string::npos)
      << out;
}

// A step that computes many nodes (a quantize pair's two, a fused group's
// post-ops) is listed whole, on a line of its own: a fixed buffer cut such
// a line and the newline with it, which ran the next step onto it.
TEST(RunReport, AStepOfManyNodesIsListedWholeOnItsOwnLine) {
  RunReport r;
  r.library = "oneDNN";
  r.stats.threads = 2;
  std::string nodes;
  for (int i = 0; i < 40; ++i)
    nodes += (i ? ", " : "") + std::string("node 'n") + std::to_string(i) + "' (add)";
  r.steps = {{"kernel (own)", nodes, 1.0, 0, false}, {"reorder", "layout change", 1.0, 0, false}};
  const std::string out = format_run_report(r);
  EXPECT_NE(out.find("  kernel (own)  " + nodes + "\n     1.000   50.0%       -  reorder"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace tso::cpu
