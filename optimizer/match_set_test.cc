// Incremental matching: along seeded walks of rewrites over a graph with
// the committed rule files, the matches carried from a parent, or from the
// walk's start through the composed renumbering, always equal the matches
// found over the whole child, scores included.
#include "optimizer/match_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/rewriter.h"
#include "optimizer/test_rules.h"

namespace tso::opt {
namespace {

std::string read_text(const char* path) {
  std::string text;
  if (std::FILE* f = std::fopen(path, "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

// Branches on one input (convs, matmuls with and without bias), chains
// (conv then relu, add of adds) and a graph output read inside the graph.
const char* kGraph = R"(graph g {
  input x: f32[1,8,14,14]
  input t: f32[1,6,16]
  input m: f32[6,16]
  weight w1: f32[8,8,1,1]
  weight w2: f32[8,8,3,3]
  weight w3: f32[8,8,3,3]
  weight b1: f32[8]
  weight b2: f32[8]
  weight q: f32[16,16]
  weight k: f32[16,16]
  weight v: f32[16,16]
  weight bq: f32[16]
  weight bk: f32[16]
  weight bv: f32[16]
  %a = conv2d(x, w1, b1, pad=same)
  %ar = relu(%a)
  %b = conv2d(x, w2, b2, pad=same)
  %br = relu(%b)
  %c = conv2d(x, w3, pad=same)
  %cr = relu(%c)
  %j = concat(%ar, %br, %cr, axis=1)
  %mq = matmul(t, q)
  %aq = add(%mq, bq)
  %mk = matmul(t, k)
  %ak = add(bk, %mk)
  %mv = matmul(t, v)
  %av = add(%mv, bv)
  %s = add(%aq, %ak)
  %s2 = add(%s, %av)
  %n1 = matmul(m, q)
  %n2 = matmul(m, k)
  %n3 = matmul(m, v)
  %n4 = add(%n1, %n2)
  %n5 = add(%n4, %n3)
  output y = %j
  output z = %s2
  output u = %n5
  output r = %br
})";

// The analytic model with post-ops at a quarter of their own cost: scores
// then depend on the post-ops around a match.
class FusingCost : public CostModel {
 public:
  explicit FusingCost(const CostModel& base) : base_(base) {}
  double node_us(const Node& n, std::span<const TensorType> inputs) const override {
    return base_.node_us(n, inputs);
  }
  double post_op_us(const PostOp&, const Node& n,
                    std::span<const TensorType> inputs) const override {
    return 0.25 * base_.node_us(n, inputs);
  }
  bool fuses() const override { return true; }
  std::string describe() const override { return "fusing " + base_.describe(); }

 private:
  const CostModel& base_;
};

class MatchSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {"substitutions/handwritten.rules", "substitutions/taso_n3.rules"}) {
      Expected<RuleSet> s = parse_rules(read_text(path), path);
      ASSERT_TRUE(s.ok()) << s.error().message;
      sets_.push_back(std::move(*s));
    }
    Expected<RuleSet> s = parse_rules(testing::kClassicRules, "test.rules");
    ASSERT_TRUE(s.ok()) << s.error().message;
    sets_.push_back(std::move(*s));
    for (const RuleSet& set : sets_) index_.add(set, {.allow_unverified = true});
    Expected<Device> d = load_device("optimizer/devices/h100.json");
    ASSERT_TRUE(d.ok()) << d.error().message;
    analytic_ = std::make_unique<AnalyticCost>(*d);
    fusing_ = std::make_unique<FusingCost>(*analytic_);
  }

  void walk(const CostModel& model);

  std::vector<RuleSet> sets_;
  RuleIndex index_;
  std::unique_ptr<AnalyticCost> analytic_;
  std::unique_ptr<FusingCost> fusing_;
};

void expect_same(const std::vector<ScoredMatch>& carried, const std::vector<ScoredMatch>& full,
                 const std::string& where) {
  ASSERT_EQ(carried.size(), full.size()) << where;
  for (size_t i = 0; i < full.size(); ++i) {
    const ScoredMatch& a = carried[i];
    const ScoredMatch& b = full[i];
    ASSERT_EQ(a.match.rule->rule->name, b.match.rule->rule->name) << where << " match " << i;
    EXPECT_EQ(a.match.nodes, b.match.nodes) << where << " " << b.match.rule->rule->name;
    EXPECT_TRUE(a.match.vars == b.match.vars) << where << " " << b.match.rule->rule->name;
    EXPECT_EQ(a.valid, b.valid) << where << " " << b.match.rule->rule->name;
    EXPECT_NEAR(a.cost_delta, b.cost_delta, 1e-9) << where << " " << b.match.rule->rule->name;
    EXPECT_EQ(a.hash_delta, b.hash_delta) << where << " " << b.match.rule->rule->name;
  }
}

void MatchSetTest::walk(const CostModel& model) {
  Expected<Graph> g0 = parse_graph(kGraph, "g.tso");
  ASSERT_TRUE(g0.ok()) << g0.error().message;
  int steps_checked = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    Graph g = *g0;
    TensorIds ids(g);
    auto index = std::make_unique<GraphIndex>(g);
    std::vector<ScoredMatch> matches = all_matches({g, *index, ids, model}, index_);
    const Graph start = g;
    const TensorIds start_ids = ids;
    const GraphIndex start_index(start);
    const std::vector<ScoredMatch> start_matches = matches;
    std::vector<int> from_start(start.size());
    for (int i = 0; i < start.size(); ++i) from_start[i] = i;
    for (int step = 0; step < 6; ++step) {
      std::vector<const ScoredMatch*> valid;
      for (const ScoredMatch& m : matches)
        if (m.valid) valid.push_back(&m);
      if (valid.empty()) break;
      const ScoredMatch& pick = *valid[rng() % valid.size()];
      Expected<Replacement> rep = build_replacement(g, pick.match);
      ASSERT_TRUE(rep.ok()) << rep.error().message;
      Expected<Rewritten> w = apply_replacement(g, ids, *rep);
      ASSERT_TRUE(w.ok()) << w.error().message;
      auto child_index = std::make_unique<GraphIndex>(w->graph);
      const MatchContext parent{g, *index, ids, model};
      const MatchContext child{w->graph, *child_index, w->ids, model};
      std::vector<ScoredMatch> carried =
          carry_matches(parent, matches, child, w->new_index, index_);
      std::vector<ScoredMatch> full = all_matches(child, index_);
      // The predicted cost moves by the score's delta.
      const double before = graph_cost(g, *index, model);
      const double after = graph_cost(w->graph, *child_index, model);
      EXPECT_NEAR(after - before, pick.cost_delta, 1e-6 * std::max(1.0, before))
          << "seed " << seed << " step " << step << " " << pick.match.rule->rule->name;
      const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step) +
                                " after " + pick.match.rule->rule->name;
      expect_same(carried, full, where);
      if (HasFatalFailure()) return;
      for (int& i : from_start) i = i < 0 ? -1 : w->new_index[i];
      expect_same(carry_matches({start, start_index, start_ids, model}, start_matches, child,
                                from_start, index_),
                  full, where + " (from the start)");
      if (HasFatalFailure()) return;
      ++steps_checked;
      g = std::move(w->graph);
      ids = std::move(w->ids);
      index = std::move(child_index);
      matches = std::move(full);
    }
  }
  EXPECT_GE(steps_checked, 40);
}

TEST_F(MatchSetTest, CarriedMatchesEqualMatchingTheWholeChild) { walk(*analytic_); }

TEST_F(MatchSetTest, CarriedMatchesEqualMatchingTheWholeChildWithPostOps) { walk(*fusing_); }

// A concat and a split that undo each other, removed, leave each product
// to the add after it, which becomes the product's post-op: the score sees
// the add's change (a walk of the test above found the delta short of it).
TEST_F(MatchSetTest, AProductPassedOnMakesItsReaderAPostOpInTheScore) {
  Expected<Graph> g = parse_graph(R"(graph g {
    input m: f32[6,16]
    input e: f32[6,16]
    weight q: f32[16,16]
    weight v: f32[16,16]
    %a = matmul(m, q)
    %b = matmul(m, v)
    %c = concat(%a, %b, axis=1)
    %d, %f = split(%c, axis=1, sizes=[16,16])
    %g = add(%d, e)
    %h = add(e, %f)
    output y = %g
    output z = %h
  })",
                                  "g.tso");
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorIds ids(*g);
  GraphIndex index(*g);
  const MatchContext parent{*g, index, ids, *fusing_};
  int checked = 0;
  for (const ScoredMatch& m : all_matches(parent, index_)) {
    if (!m.valid || g->node(m.match.nodes[0]).name != "%c") continue;
    Expected<Replacement> rep = build_replacement(*g, m.match);
    ASSERT_TRUE(rep.ok()) << rep.error().message;
    Expected<Rewritten> w = apply_replacement(*g, ids, *rep);
    ASSERT_TRUE(w.ok()) << w.error().message;
    GraphIndex child_index(w->graph);
    const double before = graph_cost(*g, index, *fusing_);
    EXPECT_NEAR(graph_cost(w->graph, child_index, *fusing_) - before, m.cost_delta, 1e-6 * before)
        << m.match.rule->rule->name;
    EXPECT_FALSE(m.local) << m.match.rule->rule->name;
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

TEST_F(MatchSetTest, ChangedNodesAreTheRewrittenRegion) {
  Expected<Graph> g = parse_graph(R"(graph g {
    input x: f32[1,4,8,8]
    weight w: f32[4,4,3,3]
    weight v: f32[4,4,3,3]
    %a = conv2d(x, w, pad=same)
    %b = relu(%a)
    %c = conv2d(%b, v, pad=same)
    %d = relu(%c)
    output y = %d
  })",
                                  "g.tso");
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorIds ids(*g);
  GraphIndex index(*g);
  RuleIndex classic;
  classic.add(sets_.back());
  std::vector<ScoredMatch> matches = all_matches({*g, index, ids, *analytic_}, classic);
  const ScoredMatch* fuse = nullptr;
  for (const ScoredMatch& m : matches)
    if (m.match.rule->rule->name == "t_fuse_conv_relu" && g->node(m.match.nodes[0]).name == "%a")
      fuse = &m;
  ASSERT_NE(fuse, nullptr);
  Expected<Replacement> rep = build_replacement(*g, fuse->match);
  ASSERT_TRUE(rep.ok());
  Expected<Rewritten> w = apply_replacement(*g, ids, *rep);
  ASSERT_TRUE(w.ok());
  GraphIndex child_index(w->graph);
  std::vector<char> changed = changed_nodes(
      {*g, index, ids, *analytic_}, {w->graph, child_index, w->ids, *analytic_}, w->new_index);
  // The fused conv is new; x and w lost a user and gained one; the second
  // conv reads a new tensor. The second relu and v are untouched.
  std::vector<std::string> names;
  for (int i = 0; i < w->graph.size(); ++i)
    if (changed[i])
      names.push_back(w->graph.node(i).op == Op::Conv2d && w->graph.node(i).args[0].node == 0
                          ? "fused"
                          : w->graph.node(i).name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "w", "fused", "%c"}));
}

}  // namespace
}  // namespace tso::opt
