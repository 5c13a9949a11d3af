// Region rules in the optimizer: a partial rule is applied with its
// correction, decided again at the shapes of each match; where the stored
// correction is wrong or does not fit, one is derived there, and the
// rewritten graph computes the original function.
#include "optimizer/region_rule.h"

#include <gtest/gtest.h>

#include <random>

#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/graph_index.h"
#include "optimizer/matcher.h"
#include "optimizer/pattern.h"
#include "optimizer/rewriter.h"
#include "optimizer/search.h"
#include "runtime/reference/executor.h"

namespace tso::opt {
namespace {

// Two images of a batch side by side along W, one convolution, split back:
// the columns at the seam read the other image. `boxes` is the correction
// block: both seam columns, or (kOneBox) only the first image's.
constexpr const char* kHead = R"(# tso rules v1

rule stack_w {
  origin handwritten
  status partial boxes=9
  input x: f32[2,3,4,6]
  input w: f32[4,3,3,3]
  source {
    %0 = conv2d(x, w, pad=[1,1,1,1])
    output %0
  }
  target {
    %0, %1 = split(x, axis=0, sizes=[1, 1])
    %2 = concat(%0, %1, axis=3)
    %3 = conv2d(%2, w, pad=[1,1,1,1])
    %4, %5 = split(%3, axis=3, sizes=[dim(x,3), dim(x,3)])
    %6 = concat(%4, %5, axis=0)
    output %6
  }
)";
constexpr const char* kTwoBoxes = R"(  correction {
    %0 = slice(x, starts=[0, dim(x,3) - 2], ends=[1, dim(x,3)], axes=[0, 3], steps=[1, 1])
    %1 = conv2d(%0, w, pad=[1, 0, 1, 1])
    %2 = slice(x, starts=[1, 0], ends=[2, 2], axes=[0, 3], steps=[1, 1])
    %3 = conv2d(%2, w, pad=[1, 1, 1, 0])
    box %1 output=0 at=[0, 0, 0, dim(x,3) - 1]
    box %3 output=0 at=[1, 0, 0, 0]
  }
}
)";
constexpr const char* kOneBox = R"(  correction {
    %0 = slice(x, starts=[0, dim(x,3) - 2], ends=[1, dim(x,3)], axes=[0, 3], steps=[1, 1])
    %1 = conv2d(%0, w, pad=[1, 0, 1, 1])
    box %1 output=0 at=[0, 0, 0, dim(x,3) - 1]
  }
}
)";

Graph model_graph(int64_t width) {
  std::string text = "graph m {\n  input x: f32[2,3,5," + std::to_string(width) +
                     "]\n  input w: f32[4,3,3,3]\n  %0 = conv2d(x, w, pad=[1,1,1,1])\n"
                     "  output y = %0\n}\n";
  Expected<Graph> g = parse_graph(text, "model.tso");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

// The graph rewritten by the rule's only match.
struct Applied {
  Graph graph;
  Replacement replacement;
};
std::optional<Applied> apply(const Graph& g, const RuleIndex& index) {
  GraphIndex gi(g);
  std::optional<Applied> out;
  for_each_match(g, gi, index, [&](const Match& m) {
    Expected<Replacement> r = build_replacement(g, m);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r) return;
    Expected<Rewritten> w = apply_replacement(g, TensorIds(g), *r);
    EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
    if (w) out = Applied{std::move(w->graph), std::move(*r)};
  });
  return out;
}

double max_difference(const Graph& a, const Graph& b) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, ref::Tensor<double>> feeds;
  for (int i : a.input_nodes()) {
    ref::Tensor<double> t(a.node(i).outs[0].shape);
    for (double& v : t.data) v = u(rng);
    feeds.emplace(a.node(i).name, std::move(t));
  }
  auto ra = ref::evaluate(a, feeds);
  auto rb = ref::evaluate(b, feeds);
  EXPECT_TRUE(ra.ok() && rb.ok());
  if (!ra.ok() || !rb.ok()) return 1e9;
  double d = 0;
  for (size_t i = 0; i < (*ra)[0].data.size(); ++i)
    d = std::max(d, std::abs((*ra)[0].data[i] - (*rb)[0].data[i]));
  return d;
}

int count(const Graph& g, Op op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

struct Case {
  const char* name;
  const char* correction;
  int64_t width;
  int boxes;  // corrected at this width (adjacent wrong boxes merge)
};

class RegionRuleTest : public ::testing::TestWithParam<Case> {};

TEST_P(RegionRuleTest, APartialRuleIsAppliedWithACorrectionRightAtTheMatchShapes) {
  Expected<RuleSet> set = parse_rules(std::string(kHead) + GetParam().correction, "test.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  RuleIndex index;
  index.add(*set);
  ASSERT_EQ(index.rules().size(), 1u);
  ASSERT_TRUE(index.rules()[0].regions);
  Graph g = model_graph(GetParam().width);
  std::optional<Applied> a = apply(g, index);
  ASSERT_TRUE(a.has_value());
  // Two seam columns of 5 rows and 4 channels, one in each image.
  EXPECT_EQ(a->replacement.correction_boxes, GetParam().boxes);
  EXPECT_EQ(a->replacement.correction_elements, 2 * 4 * 5);
  EXPECT_EQ(count(a->graph, Op::UpdateSlice), GetParam().boxes);
  EXPECT_LT(max_difference(g, a->graph), 1e-12);
}

// The stored correction at a new width; a stored correction missing a box,
// where one is derived instead; a width of 1, where the stored slices do not
// fit and the seam columns are the whole output, one box.
INSTANTIATE_TEST_SUITE_P(Corrections, RegionRuleTest,
                         ::testing::Values(Case{"Stored", kTwoBoxes, 7, 2},
                                           Case{"MissingABox", kOneBox, 7, 2},
                                           Case{"StoredDoesNotFit", kTwoBoxes, 1, 1}),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(RegionTargets, DecideOncePerBinding) {
  Expected<RuleSet> set = parse_rules(std::string(kHead) + kTwoBoxes, "test.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  RegionTargets targets(set->rules[0]);
  std::vector<TensorType> types{{DType::kF32, Shape{2, 3, 5, 7}}, {DType::kF32, Shape{4, 3, 3, 3}}};
  auto a = targets.at(types, {});
  auto b = targets.at(types, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  // Not shape-valid: the rule does not apply, and says why.
  types[1] = {DType::kF32, Shape{4, 2, 3, 3}};
  EXPECT_FALSE(targets.at(types, {}).ok());
}

// The search scores every region rule it matches and says so, whether or
// not it applies it: stacking the batch costs its layout changes and its
// correction on top of the same convolution, so the analytic model never
// takes it.
TEST(RegionTargets, TheSearchReportsTheRegionRulesItConsidered) {
  Expected<RuleSet> set = parse_rules(std::string(kHead) + kTwoBoxes, "test.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  RuleIndex index;
  index.add(*set);
  Expected<Device> d = load_device("optimizer/devices/h100.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  AnalyticCost model(*d);
  SearchResult r = search(model_graph(7), index, model);
  EXPECT_TRUE(r.applied.empty());
  ASSERT_EQ(r.region_candidates.count("stack_w"), 1u);
  EXPECT_GE(r.region_candidates.at("stack_w").matches, 1);
  EXPECT_GT(r.region_candidates.at("stack_w").best_delta, 0);
}

}  // namespace
}  // namespace tso::opt
