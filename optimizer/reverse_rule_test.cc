// Reversed rules: a verified rule written in the splitting direction (the
// generator's habit: the side with more operators is the source) merges two
// convolutions or matmuls on one input when applied in reverse; a rule whose
// target cannot bind what its source needs is not reversed.
#include "optimizer/reverse_rule.h"

#include <gtest/gtest.h>

#include "core/checker.h"
#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/matcher.h"
#include "optimizer/search.h"
#include "optimizer/test_graphs.h"

namespace tso::opt {
namespace {

constexpr const char* kRules = R"(# tso rules v1

rule r_split_conv {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w1: f32[4,4,3,3]
  input w2: f32[6,4,3,3]
  source {
    %0 = concat(w1, w2, axis=0)
    %1 = conv2d(x, %0, pad=same)
    %2, %3 = split(%1, axis=1, sizes=[dim(w1,0), dim(w2,0)])
    output %2, %3
  }
  target {
    %0 = conv2d(x, w1, pad=same)
    %1 = conv2d(x, w2, pad=same)
    output %0, %1
  }
}

rule r_split_matmul {
  origin handwritten
  status verified specs=test
  input x: f32[4,6]
  input w1: f32[6,3]
  input w2: f32[6,5]
  source {
    %0 = concat(w1, w2, axis=1)
    %1 = matmul(x, %0)
    %2, %3 = split(%1, axis=-1, sizes=[dim(w1,1), dim(w2,1)])
    output %2, %3
  }
  target {
    %0 = matmul(x, w1)
    %1 = matmul(x, w2)
    output %0, %1
  }
}

rule r_bare_output {
  origin handwritten
  status verified specs=test
  input x: f32[2,3]
  input y: f32[4,3]
  source {
    %0 = concat(x, y, axis=0)
    %1, %2 = split(%0, axis=0, sizes=[dim(x,0), dim(y,0)])
    output %1, %2
  }
  target {
    output x, y
  }
}

rule r_unbound_var {
  origin handwritten
  status verified specs=test
  input x: f32[2,3]
  input y: f32[4,3]
  source {
    %0 = concat(x, y, axis=0)
    %1, %2 = split(%0, axis=0, sizes=[dim(x,0), dim(y,0)])
    %3 = relu(%1)
    output %3
  }
  target {
    %0 = relu(x)
    output %0
  }
}

rule r_unbound_in_condition {
  origin handwritten
  status verified specs=test
  input x: f32[2,3]
  input y: f32[2,3]
  where dim(y,0) == 2
  source {
    %0 = concat(x, y, axis=0)
    %1, %2 = split(%0, axis=0, sizes=[dim(x,0), dim(y,0)])
    %3 = relu(%1)
    output %3
  }
  target {
    %0 = relu(x)
    output %0
  }
}

rule r_unknown_split_conv {
  origin handwritten
  status unknown reason="test"
  input x: f32[1,4,8,8]
  input w1: f32[4,4,1,1]
  input w2: f32[6,4,1,1]
  source {
    %0 = concat(w1, w2, axis=0)
    %1 = conv2d(x, %0)
    %2, %3 = split(%1, axis=1, sizes=[dim(w1,0), dim(w2,0)])
    output %2, %3
  }
  target {
    %0 = conv2d(x, w1)
    %1 = conv2d(x, w2)
    output %0, %1
  }
}
)";

RuleSet rules() {
  Expected<RuleSet> s = parse_rules(kRules, "test.rules");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(*s) : RuleSet{};
}

const Rule& named(const RuleSet& s, const std::string& name) {
  for (const Rule& r : s.rules)
    if (r.name == name) return r;
  ADD_FAILURE() << "no rule " << name;
  return s.rules.front();
}

using testing::parse;

constexpr const char* kTwoConvs = R"(graph two_convs {
  input x: f32[1,4,8,8]
  weight a: f32[4,4,3,3]
  weight b: f32[6,4,3,3]
  %a = conv2d(x, a, pad=[1,1,1,1])
  %b = conv2d(x, b, pad=[1,1,1,1])
  output ya = %a
  output yb = %b
})";

std::vector<std::string> match_names(const Graph& g, const RuleIndex& index) {
  GraphIndex gi(g);
  std::vector<std::string> out;
  for_each_match(g, gi, index, [&](const Match& m) { out.push_back(m.rule->rule->name); });
  return out;
}

TEST(ReverseRule, SwapsTheSidesAndNamesTheDirection) {
  RuleSet s = rules();
  const Rule& r = named(s, "r_split_conv");
  Expected<Rule> rev = reverse_rule(r);
  ASSERT_TRUE(rev.ok()) << rev.error().message;
  EXPECT_EQ(rev->name, "r_split_conv (reverse)");
  EXPECT_EQ(rev->source, r.target);
  EXPECT_EQ(rev->target, r.source);
  EXPECT_EQ(rev->inputs, r.inputs);
  EXPECT_EQ(rev->where, r.where);
}

TEST(ReverseRule, RefusesTargetsThatCannotBindTheSource) {
  RuleSet s = rules();
  Expected<Rule> bare = reverse_rule(named(s, "r_bare_output"));
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().message.find("target output x is a bare variable"), std::string::npos)
      << bare.error().message;
  Expected<Rule> unbound = reverse_rule(named(s, "r_unbound_var"));
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.error().message.find("does not bind variable y"), std::string::npos)
      << unbound.error().message;
  Expected<Rule> cond = reverse_rule(named(s, "r_unbound_in_condition"));
  ASSERT_FALSE(cond.ok());
  EXPECT_NE(cond.error().message.find("does not bind variable y"), std::string::npos);
}

// A rule declared oneway applies forward only: the index neither reverses
// it nor counts it reversed, and says why.
TEST(ReverseRule, AOneWayRuleIsNotReversed) {
  RuleSet s = rules();
  for (Rule& r : s.rules) r.one_way = r.name == "r_split_conv";
  Expected<Rule> rev = reverse_rule(named(s, "r_split_conv"));
  ASSERT_FALSE(rev.ok());
  EXPECT_NE(rev.error().message.find("r_split_conv: not reversed: declared oneway"),
            std::string::npos)
      << rev.error().message;
  RuleIndex index;
  index.add(s);
  EXPECT_EQ(index.reversed_count(), 1);
  Graph g = parse(kTwoConvs);
  EXPECT_TRUE(match_names(g, index).empty());
}

TEST(ReverseRule, OnlyTheReverseDirectionMatchesTwoConvsOnOneInput) {
  RuleSet s = rules();
  Graph g = parse(kTwoConvs);
  RuleIndex forward;
  forward.add(s, {.reverse_verified = false});
  EXPECT_TRUE(match_names(g, forward).empty());
  RuleIndex both;
  both.add(s);
  // Both orders of the pair: (a, b) and (b, a).
  EXPECT_EQ(match_names(g, both),
            (std::vector<std::string>{"r_split_conv (reverse)", "r_split_conv (reverse)"}));
}

TEST(ReverseRule, IndexReversesVerifiedRulesThatCanBindOnly) {
  RuleSet s = rules();
  RuleIndex index;
  index.add(s);
  std::vector<std::string> names;
  for (const CompiledRule& c : index.rules()) names.push_back(c.rule->name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"r_split_conv", "r_split_matmul", "r_bare_output",
                                      "r_unbound_var", "r_unbound_in_condition",
                                      "r_split_conv (reverse)", "r_split_matmul (reverse)"}));
  EXPECT_EQ(index.reversed_count(), 2);
  ASSERT_EQ(index.not_reversed().size(), 3u);
  EXPECT_EQ(index.not_reversed()[0].rule, "r_bare_output");
  // With --allow-unverified an unknown rule applies forward only.
  RuleIndex loose;
  loose.add(s, {.allow_unverified = true});
  for (const CompiledRule& c : loose.rules())
    EXPECT_NE(c.rule->name, "r_unknown_split_conv (reverse)");
  EXPECT_EQ(loose.reversed_count(), 2);
}

TEST(ReverseRule, SearchMergesTwoMatmulsOnlyThroughTheReverse) {
  RuleSet s = rules();
  Graph g = parse(R"(graph two_matmuls {
  input x: f32[1,768]
  weight a: f32[768,768]
  weight b: f32[768,768]
  %a = matmul(x, a)
  %b = matmul(x, b)
  %r = add(%a, %b)
  output y = %r
})");
  Expected<Device> d = load_device("optimizer/devices/h100.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  AnalyticCost model(*d);
  RuleIndex forward;
  forward.add(s, {.reverse_verified = false});
  SearchResult f = search(g, forward, model);
  EXPECT_TRUE(f.applied.empty());
  EXPECT_EQ(f.best, g);
  RuleIndex both;
  both.add(s);
  SearchResult r = search(g, both, model);
  ASSERT_EQ(r.applied.size(), 1u);
  EXPECT_EQ(r.applied[0].rule, "r_split_matmul (reverse)");
  EXPECT_LT(r.best_cost, r.initial_cost);
  EXPECT_TRUE(check(r.best).ok());
  int matmuls = 0;
  for (const Node& n : r.best.nodes()) matmuls += n.op == Op::Matmul;
  EXPECT_EQ(matmuls, 1) << print(r.best);
}

}  // namespace
}  // namespace tso::opt
