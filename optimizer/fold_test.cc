// Weight folding and the numerical check, and the pipeline that joins them
// to the search: merged kernels become weights, the optimized graph agrees
// with the input, and a wrong rule is caught by the check.
#include "optimizer/fold.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/signature.h"
#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/optimize.h"
#include "optimizer/test_graphs.h"
#include "optimizer/test_rules.h"

namespace tso::opt {
namespace {

Graph with_weights(std::string_view text) { return testing::with_weights(text, -0.5f, 0.5f); }

TEST(Fold, WeightOnlyOperatorsBecomeWeightsAndUnusedWeightsGo) {
  Graph g = with_weights(R"(graph g {
  input x: f32[1,2,5,5]
  weight w1: f32[3,2,1,1]
  weight w2: f32[4,2,3,3]
  %e = enlarge(w1, kernel=[3,3])
  %c = concat(%e, w2, axis=0)
  %y = conv2d(x, %c, pad=same)
  output y = %y
})");
  FoldStats stats;
  Expected<Graph> f = fold_weights(g, &stats);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(stats.folded, 1);
  EXPECT_EQ(f->num_operators(), 1);
  EXPECT_EQ(f->input_nodes().size(), 2u);  // x and the folded kernel
  Expected<CheckResult> c = compare_graphs(g, *f);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs, 2);
  EXPECT_LT(c->max_relative_error, 1e-6);
}

TEST(Fold, AWeightWithoutDataIsAnErrorNamingIt) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[2,3]
  weight w: f32[3,3]
  %t = transpose(w, perm=[1,0])
  %y = matmul(x, %t)
  output y = %y
})");
  ASSERT_TRUE(g.ok());
  Expected<Graph> f = fold_weights(*g);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message,
            "node 'w' (weight): has no data, so the operators on it cannot be folded");
}

// An f16 weight made by data movement alone (merged convolutions' enlarged,
// concatenated kernels) folds into an f16 weight holding the same halves; one
// that computes (a scaled kernel) stays, since the runtimes compute it in f32.
TEST(Fold, F16WeightsFoldWhereOnlyDataMoves) {
  Expected<Graph> p = parse_graph(R"(graph g {
  input x: f16[1,2,5,5]
  weight w1: f16[3,2,1,1]
  weight w2: f16[4,2,3,3]
  weight s: f16[]
  %e = enlarge(w1, kernel=[3,3])
  %c = concat(%e, w2, axis=0)
  %y = conv2d(x, %c, pad=same)
  %m = smul(w2, s)
  %z = conv2d(x, %m, pad=same)
  output y = %y
  output z = %z
})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  GraphBuilder b(p->name());
  uint16_t next = 0x3c00;  // 1.0, then the halves after it
  for (const Node& n : p->nodes()) {
    Node copy = n;
    if (n.op == Op::Weight) {
      auto w = std::make_shared<WeightData>();
      w->type = n.outs[0];
      std::vector<uint16_t> v(n.outs[0].shape.numel());
      for (uint16_t& h : v) h = next++;
      w->bytes.resize(v.size() * sizeof(uint16_t));
      std::memcpy(w->bytes.data(), v.data(), w->bytes.size());
      copy.data = std::move(w);
    }
    b.add_node(std::move(copy));
  }
  for (const GraphOutput& o : p->outputs()) b.output(o.name, o.ref);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;
  FoldStats stats;
  Expected<Graph> f = fold_weights(*g, &stats);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(stats.folded, 1);
  int smuls = 0;
  const WeightData* folded = nullptr;
  for (const Node& n : f->nodes()) {
    smuls += n.op == Op::ScalarMul;
    if (n.op == Op::Weight && n.outs[0].shape == Shape{7, 2, 3, 3}) folded = n.data.get();
  }
  EXPECT_EQ(smuls, 1);
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->type.dtype, DType::kF16);
  std::vector<uint16_t> halves(7 * 2 * 9);
  ASSERT_EQ(folded->bytes.size(), halves.size() * sizeof(uint16_t));
  std::memcpy(halves.data(), folded->bytes.data(), folded->bytes.size());
  // Output channel 0, input channel 0 of the enlarged kernel: w1's first half
  // at the centre, zeros around; channel 3 onwards w2's halves in order.
  EXPECT_EQ(halves[4], 0x3c00);
  EXPECT_EQ(halves[0], 0);
  EXPECT_EQ(halves[3 * 18], 0x3c00 + 6);
  EXPECT_EQ(halves[7 * 18 - 1], 0x3c00 + 6 + 4 * 18 - 1);
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<Device> d = load_device("optimizer/devices/h100.json");
    ASSERT_TRUE(d.ok());
    model_ = std::make_unique<AnalyticCost>(*d);
  }
  // testing::kClassicRules, indexed (the set kept alive beside its index).
  const RuleIndex& classic_rules() {
    if (!classic_) {
      Expected<RuleSet> set = parse_rules(testing::kClassicRules, "test.rules");
      EXPECT_TRUE(set.ok());
      set_ = std::make_unique<RuleSet>(std::move(*set));
      classic_ = std::make_unique<RuleIndex>();
      classic_->add(*set_);
    }
    return *classic_;
  }

  std::unique_ptr<AnalyticCost> model_;
  std::unique_ptr<RuleSet> set_;
  std::unique_ptr<RuleIndex> classic_;
};

const char* kFire = R"(graph fire {
  input x: f32[1,16,14,14]
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

TEST_F(PipelineTest, OptimizesFoldsAndChecks) {
  const RuleIndex& rules = classic_rules();
  Graph g = with_weights(kFire);
  Expected<OptimizeResult> r = optimize(g, rules, *model_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->checked);
  EXPECT_LE(r->check.max_relative_error, 1e-4);
  EXPECT_EQ(r->fold.folded, 1);  // enlarge + concat of the expand kernels
  EXPECT_EQ(r->operators_before, 7);
  EXPECT_EQ(r->operators_after, 2);  // two fused convolutions
  EXPECT_LT(r->cost_after, r->cost_before);
  EXPECT_EQ(r->remeasured, 0);  // the analytic model measures nothing
  EXPECT_FALSE(r->searched_again);
}

// A measured model whose convolutions were first timed in a slow moment of
// the host (`slowdown` times their cost) until confirm() measures them again;
// confirm() reports each convolution of the first graph it sees.
class SlowFirst : public CostModel {
 public:
  SlowFirst(const CostModel& base, double slowdown) : base_(base), slowdown_(slowdown) {}
  double node_us(const Node& n, std::span<const TensorType> in) const override {
    return base_.node_us(n, in) * (n.op == Op::Conv2d && !confirmed_ ? slowdown_ : 1);
  }
  int confirm(const Graph& g, const GraphIndex&) const override {
    if (confirmed_) return 0;
    confirmed_ = true;
    int convs = 0;
    for (int i = 0; i < g.size(); ++i) convs += g.node(i).op == Op::Conv2d;
    return convs;
  }
  std::string describe() const override { return "slow first"; }

 private:
  const CostModel& base_;
  double slowdown_;
  mutable bool confirmed_ = false;
};

TEST_F(PipelineTest, CostsThatMoveWhenConfirmedAreSearchedAgainAndPredictedAsConfirmed) {
  const RuleIndex& rules = classic_rules();
  Graph g = with_weights(kFire);
  SlowFirst slow(*model_, 3.0);
  Expected<OptimizeResult> r = optimize(g, rules, slow);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->remeasured, 3);
  EXPECT_TRUE(r->searched_again);
  EXPECT_GT(r->first_search_seconds, 0);
  // Both predictions are the confirmed costs, not the slow first ones.
  EXPECT_DOUBLE_EQ(r->cost_before, graph_cost(g, GraphIndex(g), *model_));
  EXPECT_DOUBLE_EQ(r->cost_after, graph_cost(r->graph, GraphIndex(r->graph), *model_));
  Expected<OptimizeResult> plain = optimize(g, rules, *model_);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(r->graph, plain->graph);  // the search of the confirmed costs
}

TEST_F(PipelineTest, ConfirmedCostsThatHoldNeedNoSecondSearch) {
  const RuleIndex& rules = classic_rules();
  SlowFirst same(*model_, 1.0);
  Expected<OptimizeResult> r = optimize(with_weights(kFire), rules, same);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->remeasured, 3);
  EXPECT_FALSE(r->searched_again);
  EXPECT_EQ(r->first_search_seconds, 0);
}

// A measured model that times every new signature in a quiet moment of the
// host: each costs a tenth of its analytic cost until confirm() measures it
// again, and ten times it after (the input's signatures keep theirs), so
// whatever the search finds looks cheaper than it is.
class OptimisticNew : public CostModel {
 public:
  explicit OptimisticNew(const CostModel& base) : base_(base) {}
  double node_us(const Node& n, std::span<const TensorType> in) const override {
    const std::string sig = op_signature(n, in);
    const double factor = input_.empty() || input_.count(sig) ? 1
                          : confirmed_.count(sig)             ? 10
                                                              : 0.1;
    return base_.node_us(n, in) * factor;
  }
  int confirm(const Graph& g, const GraphIndex&) const override {
    std::set<std::string>& to = input_.empty() ? input_ : confirmed_;
    for (int i = 0; i < g.size(); ++i) to.insert(op_signature(g, i));
    return 1;
  }
  std::string describe() const override { return "optimistic about new signatures"; }

 private:
  const CostModel& base_;
  mutable std::set<std::string> input_, confirmed_;
};

TEST_F(PipelineTest, AResultNoCheaperByTheConfirmedCostsIsSearchedAgainThenDiscarded) {
  const RuleIndex& rules = classic_rules();
  Graph g = with_weights(kFire);
  // The input's signatures first, as optimize() confirms the input first.
  OptimisticNew optimistic(*model_);
  optimistic.confirm(g, GraphIndex(g));
  Expected<OptimizeResult> r = optimize(g, rules, optimistic);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->searched_again);
  EXPECT_GT(r->discarded_rewrites, 0);
  EXPECT_GE(r->discarded_cost, r->cost_before);
  EXPECT_TRUE(r->search.applied.empty());
  EXPECT_EQ(r->graph, g);
  EXPECT_DOUBLE_EQ(r->cost_after, r->cost_before);
  EXPECT_FALSE(r->checked);  // nothing changed: nothing to check
}

TEST_F(PipelineTest, AWrongRuleIsCaughtByTheCheckAndNothingIsReturned) {
  // relu(conv(x, w)) -> conv(x, w): wrong, and cheaper, so the search takes it.
  Expected<RuleSet> set = parse_rules(R"(# tso rules v1
rule wrong_drop_relu {
  origin handwritten
  status refuted model="x = -1"
  input x: f32[1,4,8,8]
  input w: f32[4,4,1,1]
  source {
    %0 = conv2d(x, w)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(x, w)
    output %0
  }
}
)",
                                      "wrong.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  RuleIndex rules;
  rules.add(*set, {.allow_unverified = true});
  Expected<OptimizeResult> r = optimize(with_weights(kFire), rules, *model_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("numerical check failed"), std::string::npos)
      << r.error().message;
  // Wrong in f64 too, and traced to its rule.
  EXPECT_NE(r.error().message.find("in f64 exceeds 1e-09"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("its rewrites:\n  wrong_drop_relu at "), std::string::npos)
      << r.error().message;
}

TEST_F(PipelineTest, AnUnchangedGraphNeedsNoCheck) {
  RuleIndex none;
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[2,3]
  %a: f32[2,3] = opaque(x, op_type="Foo")
  output y = %a
})");
  ASSERT_TRUE(g.ok());
  Expected<OptimizeResult> r = optimize(*g, none, *model_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->checked);
  EXPECT_EQ(r->graph, *g);
}

}  // namespace
}  // namespace tso::opt
