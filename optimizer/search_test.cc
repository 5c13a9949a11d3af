// The search: finds the classic rewrites by itself on small graphs, keeps
// the best graph's function, stops for the stated reason, and never returns
// a graph costlier than its input.
#include "optimizer/search.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/checker.h"
#include "core/signature.h"
#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/test_graphs.h"
#include "optimizer/test_rules.h"

namespace tso::opt {
namespace {

using testing::parse;

class SearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<RuleSet> s = parse_rules(testing::kClassicRules, "test.rules");
    ASSERT_TRUE(s.ok()) << s.error().message;
    set_ = std::move(*s);
    index_.add(set_);
    Expected<Device> d = load_device("optimizer/devices/h100.json");
    ASSERT_TRUE(d.ok()) << d.error().message;
    model_ = std::make_unique<AnalyticCost>(*d);
  }

  static std::map<std::string, int> counts(const SearchResult& r) {
    std::map<std::string, int> c;
    for (const AppliedRewrite& a : r.applied) ++c[a.rule];
    return c;
  }

  RuleSet set_;
  RuleIndex index_;
  std::unique_ptr<AnalyticCost> model_;
};

// SqueezeNet's fire module: squeeze, then expand 1x1 and 3x3 side by side.
const char* kFire = R"(graph fire {
  input x: f32[1,16,28,28]
  weight sq: f32[8,16,1,1]
  weight e1: f32[16,8,1,1]
  weight e3: f32[16,8,3,3]
  %s = conv2d(x, sq)
  %sr = relu(%s)
  %a = conv2d(%sr, e1)
  %ar = relu(%a)
  %b = conv2d(%sr, e3, pad=[1,1,1,1])
  %br = relu(%b)
  %c = concat(%ar, %br, axis=1)
  output y = %c
})";

TEST_F(SearchTest, FiresAllFusionsMergesTheExpandPairAndDropsTheSplitConcat) {
  Graph g = parse(kFire);
  SearchResult r = search(g, index_, *model_);
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_LT(r.best_cost, r.initial_cost);
  EXPECT_TRUE(check(r.best).ok());
  std::map<std::string, int> c = counts(r);
  EXPECT_EQ(c["t_fuse_conv_relu"], 3);
  EXPECT_EQ(c["t_merge_conv_enlarge"], 1);
  EXPECT_EQ(c["t_concat_of_split"], 1);
  // Two convolutions remain: the squeeze and the merged expand.
  EXPECT_EQ(r.best.num_operators(), 4) << print(r.best);  // conv, enlarge, concat, conv
  EXPECT_GT(r.expansions, 1);
}

TEST_F(SearchTest, MergesThreeMatmulsOnOneInput) {
  Graph g = parse(R"(graph qkv {
  input x: f32[1,128,768]
  weight q: f32[768,768]
  weight k: f32[768,768]
  weight v: f32[768,768]
  %q = matmul(x, q)
  %k = matmul(x, k)
  %v = matmul(x, v)
  output q = %q
  output k = %k
  output v = %v
})");
  SearchResult r = search(g, index_, *model_);
  EXPECT_EQ(r.rejected, 0);
  // Two pairwise merges leave a split of a split, which copies twice: the
  // three-way merge is the cheaper one.
  EXPECT_EQ(counts(r)["t_merge_matmul3"], 1);
  int matmuls = 0;
  for (const Node& n : r.best.nodes()) matmuls += n.op == Op::Matmul;
  EXPECT_EQ(matmuls, 1) << print(r.best);
}

TEST_F(SearchTest, BudgetAndTimeLimitStopTheSearchAndSaySo) {
  Graph g = parse(kFire);
  SearchOptions one;
  one.max_expansions = 1;
  SearchResult r = search(g, index_, *model_, one);
  EXPECT_EQ(r.stop, StopReason::kBudget);
  EXPECT_EQ(r.expansions, 1);
  EXPECT_TRUE(r.applied.empty());  // only the input graph was expanded
  EXPECT_EQ(r.best, g);
  SearchOptions none;
  none.time_limit_s = -1;
  SearchResult t = search(g, index_, *model_, none);
  EXPECT_EQ(t.stop, StopReason::kTimeLimit);
  EXPECT_EQ(t.expansions, 0);
  EXPECT_STREQ(stop_reason_name(t.stop), "time-limit");
}

// The analytic model, taking 20 ms to "measure" each signature it has not
// seen, as a model measuring on demand does.
class SlowToMeasure : public CostModel {
 public:
  explicit SlowToMeasure(const CostModel& base) : base_(base) {}
  double node_us(const Node& n, std::span<const TensorType> inputs) const override {
    if (seen_.insert(op_signature(n, inputs)).second) {
      const auto start = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return base_.node_us(n, inputs);
  }
  double measuring_seconds() const override { return seconds_; }
  std::string describe() const override { return "slow " + base_.describe(); }

 private:
  const CostModel& base_;
  mutable std::set<std::string> seen_;
  mutable double seconds_ = 0;
};

TEST_F(SearchTest, TimeSpentMeasuringIsNotSearchTime) {
  Graph g = parse(kFire);
  SlowToMeasure slow(*model_);
  SearchOptions o;
  o.time_limit_s = 0.1;
  SearchResult r = search(g, index_, slow, o);
  EXPECT_GT(r.measuring_seconds, 0.1);  // more than the limit
  EXPECT_NE(r.stop, StopReason::kTimeLimit);
  EXPECT_LE(r.measuring_seconds, r.seconds);
  EXPECT_EQ(r.best, search(g, index_, *model_).best);
}

TEST_F(SearchTest, ASearchWithoutProgressStopsAsStalled) {
  // Four matmuls on one input: many orders of pairwise and three-way merges,
  // most of them no cheaper than a graph already seen.
  Graph g = parse(R"(graph four {
  input x: f32[1,128,768]
  weight a: f32[768,768]
  weight b: f32[768,768]
  weight c: f32[768,768]
  weight d: f32[768,768]
  %a = matmul(x, a)
  %b = matmul(x, b)
  %c = matmul(x, c)
  %d = matmul(x, d)
  output a = %a
  output b = %b
  output c = %c
  output d = %d
})");
  SearchOptions never;
  never.alpha = 1.5;  // costlier graphs are expanded too
  never.stall_expansions = 0;
  SearchResult full = search(g, index_, *model_, never);
  ASSERT_EQ(full.stop, StopReason::kExhausted);
  // One expansion without a cheaper graph ends a search that allows one.
  SearchOptions one = never;
  one.stall_expansions = 1;
  SearchResult r = search(g, index_, *model_, one);
  EXPECT_EQ(r.stop, StopReason::kStalled);
  EXPECT_STREQ(stop_reason_name(r.stop), "stalled");
  EXPECT_LT(r.expansions, full.expansions);
  EXPECT_LE(r.best_cost, r.initial_cost);
  // A limit longer than the whole search changes nothing.
  SearchOptions wide = never;
  wide.stall_expansions = full.expansions;
  SearchResult w = search(g, index_, *model_, wide);
  EXPECT_EQ(w.stop, StopReason::kExhausted);
  EXPECT_EQ(w.best, full.best);
  EXPECT_EQ(w.expansions, full.expansions);
}

TEST_F(SearchTest, BestOverTimeStartsAtTheInputAndEndsAtTheBest) {
  SlowToMeasure slow(*model_);
  SearchResult r = search(parse(kFire), index_, slow);
  const std::vector<BestCostPoint>& p = r.best_over_time;
  ASSERT_GE(p.size(), 2u);  // the fire module gets cheaper
  EXPECT_EQ(p.front().seconds, 0);
  EXPECT_EQ(p.front().expansions, 0);
  EXPECT_EQ(p.front().best_cost, r.initial_cost);
  EXPECT_EQ(p.back().best_cost, r.best_cost);
  for (size_t i = 1; i < p.size(); ++i) {
    EXPECT_LT(p[i].best_cost, p[i - 1].best_cost) << i;
    EXPECT_GT(p[i].expansions, p[i - 1].expansions) << i;
    EXPECT_GE(p[i].seconds, p[i - 1].seconds) << i;
    EXPECT_GE(p[i].measuring_seconds, p[i - 1].measuring_seconds) << i;
    EXPECT_LE(p[i].measuring_seconds, p[i].seconds) << i;
  }
  EXPECT_GT(p.back().measuring_seconds, 0);  // new signatures were measured on the way
  EXPECT_LE(p.back().expansions, r.expansions);
  EXPECT_LE(p.back().seconds, r.seconds);
}

TEST_F(SearchTest, AGraphNoRuleMatchesComesBackUnchanged) {
  Graph g = parse(R"(graph g {
  input x: f32[2,3]
  %a: f32[2,3] = opaque(x, op_type="Foo")
  output y = %a
})");
  SearchResult r = search(g, index_, *model_);
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_EQ(r.expansions, 1);
  EXPECT_EQ(r.best, g);
  EXPECT_EQ(r.best_cost, r.initial_cost);
  ASSERT_EQ(r.best_over_time.size(), 1u);  // the input alone
  EXPECT_EQ(r.best_over_time[0].best_cost, r.initial_cost);
}

// Two matmuls of weights on one weight: t_merge_matmul matches, but inside
// the weight-only part of the graph, which folding computes anyway, so it is
// not a candidate.
TEST_F(SearchTest, RewritesInsideWeightOnlySubgraphsAreNotCandidates) {
  Graph g = parse(R"(graph g {
  input x: f32[4,3]
  input z: f32[4,5]
  weight a: f32[4,6]
  weight b: f32[6,3]
  weight c: f32[6,5]
  %p = matmul(a, b)
  %q = matmul(a, c)
  %y1 = add(x, %p)
  %y2 = add(z, %q)
  output y1 = %y1
  output y2 = %y2
})");
  SearchResult r = search(g, index_, *model_);
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_EQ(r.candidates, 0);
  EXPECT_EQ(r.best, g);
}

TEST_F(SearchTest, ResultsDoNotDependOnTheCacheSize) {
  Graph g = parse(kFire);
  SearchOptions tiny;
  tiny.cached_graphs = 2;
  tiny.cached_matches = 2;  // matches carried from further ancestors, or found in full
  SearchResult a = search(g, index_, *model_);
  SearchResult b = search(g, index_, *model_, tiny);
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.expansions, b.expansions);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.rejected, b.rejected);
}

// Every convolution costs 100, fused activation or not, and a relu `relu_us`:
// fusing a relu into its convolution gains exactly that.
class ReluTax : public CostModel {
 public:
  explicit ReluTax(double relu_us) : relu_us_(relu_us) {}
  double node_us(const Node& n, std::span<const TensorType>) const override {
    return n.op == Op::Conv2d ? 100 : n.op == Op::Relu ? relu_us_ : 0;
  }
  std::string describe() const override { return "relu tax"; }

 private:
  double relu_us_;
};

TEST_F(SearchTest, AGainBelowTheMinimumIsNotTakenAndOneAboveItIs) {
  Graph g = parse(R"(graph g {
  input x: f32[1,4,8,8]
  weight w: f32[4,4,3,3]
  %c = conv2d(x, w, pad=same)
  %r = relu(%c)
  output y = %r
})");
  SearchOptions o;  // min_gain 0.001: the fusion must gain over 0.1 of 100.05
  SearchResult below = search(g, index_, ReluTax(0.05), o);
  EXPECT_TRUE(below.applied.empty());
  EXPECT_EQ(below.best, g);
  EXPECT_DOUBLE_EQ(below.best_cost, below.initial_cost);
  SearchResult above = search(g, index_, ReluTax(0.5), o);
  EXPECT_EQ(counts(above)["t_fuse_conv_relu"], 1);
  o.min_gain = 0;
  SearchResult any = search(g, index_, ReluTax(0.05), o);
  EXPECT_EQ(counts(any)["t_fuse_conv_relu"], 1);
  EXPECT_DOUBLE_EQ(any.best_cost, 100);
}

// Costs that keep the arithmetic exact: a convolution costs a launch plus
// one unit per output channel and kernel position; every other operator is
// free.
class ConvUnits : public CostModel {
 public:
  explicit ConvUnits(double launch) : launch_(launch) {}
  double node_us(const Node& n, std::span<const TensorType> inputs) const override {
    if (n.op != Op::Conv2d) return 0;
    const Shape& w = inputs[1].shape;
    return launch_ + static_cast<double>(w[0] * w[2] * w[3]);
  }
  std::string describe() const override { return "conv units"; }

 private:
  double launch_;
};

// `pairs` times, on an input of its own: a 1x1 convolution with 4 output
// channels and a 3x3 one with `c3`. Under ConvUnits, enlarging the 1x1
// kernel to 3x3 (t_enlarge) costs 4 * 8 = 32 more, and merging the two 3x3
// convolutions (t_merge_conv_same) then saves a launch.
std::string conv_pairs(int pairs, int c3) {
  std::string g = "graph pairs {\n";
  for (int i = 0; i < pairs; ++i) {
    const std::string n = std::to_string(i);
    g += "  input x" + n + ": f32[1,8,8,8]\n  weight w" + n + ": f32[4,8,1,1]\n  weight v" + n +
         ": f32[" + std::to_string(c3) + ",8,3,3]\n  %a" + n + " = conv2d(x" + n + ", w" + n +
         ", pad=same)\n  %b" + n + " = conv2d(x" + n + ", v" + n + ", pad=same)\n  output a" + n +
         " = %a" + n + "\n  output b" + n + " = %b" + n + "\n";
  }
  return g + "}";
}

class PlateauTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<RuleSet> s = parse_rules(testing::kPlateauRules, "plateau.rules");
    ASSERT_TRUE(s.ok()) << s.error().message;
    set_ = std::move(*s);
    index_.add(set_);
  }

  static std::vector<std::string> rules_applied(const SearchResult& r) {
    std::vector<std::string> names;
    for (const AppliedRewrite& a : r.applied) names.push_back(a.rule);
    return names;
  }

  static int convolutions(const Graph& g) {
    int n = 0;
    for (const Node& node : g.nodes()) n += node.op == Op::Conv2d;
    return n;
  }

  RuleSet set_;
  RuleIndex index_;
};

// Launch 44 and 4 channels in the 3x3 convolution: 2 * 44 + 4 + 36 = 128;
// with the 1x1 kernel enlarged 160 (+25%, beyond alpha 1.05); merged 44 +
// 72 = 116.
TEST_F(PlateauTest, TheLookaheadFindsAMergeBehindAKernelEnlargedAtPlus25Percent) {
  ConvUnits model(44);
  Graph g = parse(conv_pairs(1, 4));
  SearchOptions off;
  off.lookahead.budget = 0;
  SearchResult before = search(g, index_, model, off);
  EXPECT_EQ(before.initial_cost, 128);
  EXPECT_EQ(before.best_cost, 128);
  EXPECT_TRUE(before.applied.empty());
  EXPECT_EQ(before.stop, StopReason::kExhausted);
  EXPECT_EQ(before.lookaheads, 0);
  // A bound no wider than alpha is no lookahead either.
  SearchOptions narrow;
  narrow.lookahead.bound = narrow.alpha;
  EXPECT_EQ(search(g, index_, model, narrow).best_cost, 128);

  SearchResult r = search(g, index_, model);
  EXPECT_EQ(r.best_cost, 116);
  EXPECT_EQ(rules_applied(r), (std::vector<std::string>{"t_enlarge", "t_merge_conv_same"}));
  EXPECT_EQ(convolutions(r.best), 1) << print(r.best);
  EXPECT_TRUE(check(r.best).ok());
  // The search went on from the merged graph; its own lookahead found nothing.
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_EQ(r.lookaheads, 2);
  EXPECT_EQ(r.lookahead_found, 1);
  EXPECT_EQ(r.lookahead_expansions, 1);  // the enlarged graph, whose merge is the find
}

// Launch 33.5 and one channel in the 3x3 convolution: 2 * 33.5 + 4 + 9 = 80;
// enlarged 112 (+40%); merged 33.5 + 45 = 78.5.
TEST_F(PlateauTest, AnIntermediateAt40PercentStaysOutOfReachOfTheDefaultBound) {
  ConvUnits model(33.5);
  Graph g = parse(conv_pairs(1, 1));
  SearchResult r = search(g, index_, model);
  EXPECT_EQ(r.initial_cost, 80);
  EXPECT_EQ(r.best_cost, 80);
  EXPECT_EQ(r.best, g);
  EXPECT_EQ(r.lookaheads, 1);
  EXPECT_EQ(r.lookahead_found, 0);
  EXPECT_EQ(r.lookahead_expansions, 0);  // nothing within 1.3 times the best to expand
  // The bound is all that stood in the way.
  SearchOptions wide;
  wide.lookahead.bound = 1.5;
  SearchResult w = search(g, index_, model, wide);
  EXPECT_EQ(w.best_cost, 78.5);
  EXPECT_EQ(rules_applied(w), (std::vector<std::string>{"t_enlarge", "t_merge_conv_same"}));
}

// Two pairs: each merge needs its own lookahead (256 -> 288 -> 244, then
// 244 -> 276 -> 232), and the search goes on between them.
TEST_F(PlateauTest, LookaheadsAreDeterministicAndWithinTheirBudget) {
  ConvUnits model(44);
  Graph g = parse(conv_pairs(2, 4));
  SearchResult a = search(g, index_, model);
  EXPECT_EQ(a.initial_cost, 256);
  EXPECT_EQ(a.best_cost, 232);
  EXPECT_EQ(convolutions(a.best), 2) << print(a.best);
  EXPECT_EQ(a.lookahead_found, 2);
  EXPECT_EQ(a.lookaheads, 3);
  EXPECT_LE(a.lookahead_expansions, SearchOptions{}.lookahead.budget);
  SearchOptions tiny;
  tiny.cached_graphs = 2;
  tiny.cached_matches = 2;
  for (const SearchOptions& o : {SearchOptions{}, tiny}) {
    SearchResult b = search(g, index_, model, o);
    EXPECT_EQ(b.best, a.best);
    EXPECT_EQ(b.best_cost, a.best_cost);
    EXPECT_EQ(b.expansions, a.expansions);
    EXPECT_EQ(b.candidates, a.candidates);
    EXPECT_EQ(b.lookaheads, a.lookaheads);
    EXPECT_EQ(b.lookahead_expansions, a.lookahead_expansions);
    ASSERT_EQ(b.applied.size(), a.applied.size());
    for (size_t i = 0; i < a.applied.size(); ++i) {
      EXPECT_EQ(b.applied[i].rule, a.applied[i].rule);
      EXPECT_EQ(b.applied[i].nodes, a.applied[i].nodes);
    }
  }
  // A budget of one expansion finds the first merge only.
  SearchOptions one;
  one.lookahead.budget = 1;
  SearchResult c = search(g, index_, model, one);
  EXPECT_EQ(c.best_cost, 244);
  EXPECT_EQ(c.lookahead_expansions, 1);
  EXPECT_EQ(c.lookahead_found, 1);
}

}  // namespace
}  // namespace tso::opt
