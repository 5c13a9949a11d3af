// Lifted rules in the text format: `rank VAR... in LO..HI` and `perm=inv(?p)`
// round-trip, instantiate (the inverse computed from ?p), bind the ranks the
// clause allows (ranks_fit), count in structure_key, and are rejected with
// FILE:LINE:COL where malformed.
#include <gtest/gtest.h>

#include "substitutions/rules.h"

namespace tso {
namespace {

constexpr const char* kRule = R"(# tso rules v1

rule t_lifted {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input s1: f32[]
  param ?p = [1,0]
  rank x1 in 2..4
  source {
    %0 = transpose(x1, perm=?p)
    %1 = smul(%0, s1)
    %2 = transpose(%1, perm=inv(?p))
    output %2
  }
  target {
    %0 = smul(x1, s1)
    output %0
  }
}
)";

std::string parse_error(const std::string& text) {
  Expected<RuleSet> s = parse_rules(text, "t.rules");
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? "" : s.error().message;
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = kRule;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(LiftedRules, RoundTripAndInstantiateWithTheInverse) {
  Expected<RuleSet> s = parse_rules(kRule, "t.rules");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const Rule& r = s->rules[0];
  EXPECT_EQ(r.ranks.vars, std::vector<std::string>{"x1"});
  EXPECT_EQ(r.ranks.lo, 2);
  EXPECT_EQ(r.ranks.hi, 4);
  EXPECT_EQ(r.source.nodes[2].attrs[0].form, PatternAttr::Form::kParamInverse);
  EXPECT_EQ(print_rules(*s), kRule);
  RuleBindings b;
  b.types["x1"] = TensorType{DType::kF32, Shape{2, 3, 4}};
  b.params["p"] = std::vector<int64_t>{1, 2, 0};
  Expected<Graph> g = instantiate(r, RuleSideKind::kSource, b);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Node& last = g->node(g->size() - 1);
  EXPECT_EQ(last.attrs.ints(AttrKey::perm), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(g->type(g->outputs()[0].ref).shape, (Shape{2, 3, 4}));
  b.params["p"] = std::vector<int64_t>{1, 1, 0};
  Expected<Graph> bad = instantiate(r, RuleSideKind::kSource, b);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("[1,1,0] is not a permutation"), std::string::npos)
      << bad.error().message;
}

TEST(LiftedRules, InversePermutation) {
  EXPECT_EQ(inverse_permutation({0, 2, 3, 1}), (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(inverse_permutation({}), std::vector<int64_t>{});
  EXPECT_FALSE(inverse_permutation({0, 0}).has_value());
  EXPECT_FALSE(inverse_permutation({0, 2}).has_value());
  EXPECT_FALSE(inverse_permutation({-1, 0}).has_value());
}

TEST(LiftedRules, RanksFitTheClause) {
  const Rule r = parse_rules(kRule, "t.rules")->rules[0];
  auto fits = [&](Shape x, Shape s) {
    std::vector<TensorType> t{{DType::kF32, x}, {DType::kF32, s}};
    return ranks_fit(r, t);
  };
  EXPECT_TRUE(fits({2, 4}, {}));
  EXPECT_TRUE(fits({1, 2, 3, 4}, {}));
  EXPECT_FALSE(fits({5}, {}));              // below the range
  EXPECT_FALSE(fits({1, 1, 2, 3, 4}, {}));  // above it
  EXPECT_FALSE(fits({2, 4}, {1}));          // s1 is not in the clause: its example rank only
  Rule none = r;                            // without a clause: every variable at its example rank
  none.ranks = RankClause{};
  EXPECT_TRUE(
      ranks_fit(none, std::vector<TensorType>{{DType::kF32, Shape{3, 5}}, {DType::kF32, Shape{}}}));
  EXPECT_FALSE(
      ranks_fit(none, std::vector<TensorType>{{DType::kF32, Shape{5}}, {DType::kF32, Shape{}}}));
  EXPECT_FALSE(ranks_fit(
      none, std::vector<TensorType>{{DType::kF32, Shape{1, 3, 5}}, {DType::kF32, Shape{}}}));
}

TEST(LiftedRules, StructureKeyCountsTheInverseAndTheClause) {
  const Rule r = parse_rules(kRule, "t.rules")->rules[0];
  Rule plain = r;
  plain.source.nodes[2].attrs[0].form = PatternAttr::Form::kParam;
  Rule wider = r;
  wider.ranks.hi = 3;
  Rule unranked = r;
  unranked.ranks = RankClause{};
  EXPECT_NE(structure_key(r), structure_key(plain));
  EXPECT_NE(structure_key(r), structure_key(wider));
  EXPECT_NE(structure_key(r), structure_key(unranked));
}

TEST(LiftedRules, BadClausesNameTheLineAndColumn) {
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank y in 2..4")),
            "t.rules:9:8: rank: unknown variable 'y'");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 s1 in 2..4")),
            "t.rules:9:11: rank: s1 has rank 0 but the variables before it rank 2");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 x1 in 2..4")),
            "t.rules:9:11: rank: x1 is listed twice");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 in 3..4")),
            "t.rules:9:14: rank range 3..4 must lie in 1..8 and hold the example rank 2");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 in 2.4")),
            "t.rules:9:14: expected a rank range like 2..4, got '2.4'");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 2..4")),
            "t.rules:9:11: expected `rank VAR... in LO..HI`, got '2..4'");
  EXPECT_EQ(parse_error(with("rank x1 in 2..4", "rank x1 in 2..4\n  rank x1 in 2..4")),
            "t.rules:10:3: duplicate rank");
  EXPECT_EQ(parse_error(with("perm=inv(?p)", "perm=inv(p)")),
            "t.rules:13:33: expected a parameter like inv(?p), got 'p'");
  EXPECT_EQ(parse_error(with("param ?p = [1,0]", "param ?p = [1,1]")),
            "t.rules:11:5: rule t_lifted, source: `%0 = transpose(x1, perm=?p)`: node '%0' "
            "(transpose): transpose: perm [1,1] is not a permutation of the axes of f32[2,4] (at "
            "the example types)");
}

}  // namespace
}  // namespace tso
