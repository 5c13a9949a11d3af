// Lifted copies: the `lift conv2d` statement and its errors; which conv2d
// attributes lift_rule turns into parameters (plain values shared by every
// conv2d node of both sides, not shape expressions); a small generation
// writes each lifted copy right after its original, and the file parses back.
#include "generator/lift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "generator/generator.h"
#include "generator/rule_class.h"

namespace tso::gen {
namespace {

// The first three lines of every op set here; each test writes the rest.
constexpr const char* kSet = "name t\ninput i1 : f32[1,4,5,5]\nweight w1 : f32[4,4,3,3]\n";

// The op set of kSet and `lines` (the first of them is line 4), read from
// `path`.
Expected<OpSet> op_set(const std::string& lines, std::string_view path = "t.ops") {
  return parse_op_set(std::string(kSet) + lines, path);
}

// The error that op set gives, read from bad.ops.
std::string op_set_error(const std::string& lines) {
  Expected<OpSet> s = op_set(lines, "bad.ops");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message;
}

Rule parse_one(const std::string& text) {
  Expected<RuleSet> s = parse_rules("# tso rules v1\n" + text, "t.rules");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() && s->rules.size() == 1 ? s->rules[0] : Rule{};
}

std::string print_one(const Rule& r) {
  RuleSet s;
  s.rules.push_back(r);
  return print_rules(s);
}

std::vector<std::string> param_names(const Rule& r) {
  std::vector<std::string> names;
  for (const RuleParam& p : r.params) names.push_back(p.name);
  return names;
}

// What `set` generates up to `max_ops` operators.
Expected<GenerateResult> generated(const OpSet& set, int max_ops) {
  GenerateOptions o;
  o.max_ops = max_ops;
  return generate(set, o);
}

// Every conv2d attribute `lift conv2d` takes.
const std::vector<AttrKey> kEveryConvAttr = {AttrKey::stride, AttrKey::pad, AttrKey::dilation,
                                             AttrKey::groups};

TEST(LiftOpSet, ParsesTheAttributes) {
  Expected<OpSet> s = op_set("op conv2d kernel=[3,3] pad=same\nlift conv2d groups stride pad\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->lift_conv2d, (std::vector<AttrKey>{AttrKey::groups, AttrKey::stride, AttrKey::pad}));
  Expected<OpSet> none = op_set("op relu\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->lift_conv2d.empty());
}

TEST(LiftOpSet, ErrorsNameFileAndLine) {
  EXPECT_EQ(op_set_error("lift relu stride\n"),
            "bad.ops:4: expected `lift conv2d ATTR...`, `lift pool ATTR...`, `lift transpose "
            "perm`, `lift concat axis`, `lift split axis` or `lift rank LO..HI`");
  EXPECT_EQ(op_set_error("lift conv2d\n"),
            "bad.ops:4: expected `lift conv2d ATTR...` (stride, pad, dilation, groups)");
  EXPECT_EQ(op_set_error("lift conv2d act\n"),
            "bad.ops:4: cannot lift 'act' (stride, pad, dilation or groups)");
  EXPECT_EQ(op_set_error("lift conv2d strides\n"),
            "bad.ops:4: cannot lift 'strides' (stride, pad, dilation or groups)");
  EXPECT_EQ(op_set_error("lift conv2d pad pad\n"), "bad.ops:4: 'pad' lifted twice");
  EXPECT_EQ(op_set_error("lift conv2d pad\nlift conv2d stride\n"),
            "bad.ops:5: `lift conv2d` given twice (first on line 4)");
}

TEST(LiftOpSet, PoolStatementAndItsErrors) {
  Expected<OpSet> s = op_set("op maxpool kernel=[3,3] pad=same\nlift pool stride kernel\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->lift_pool, (std::vector<AttrKey>{AttrKey::stride, AttrKey::kernel}));
  EXPECT_TRUE(s->lift_conv2d.empty());
  EXPECT_EQ(op_set_error("lift pool\n"),
            "bad.ops:4: expected `lift pool ATTR...` (kernel, stride, pad)");
  EXPECT_EQ(op_set_error("lift pool dilation\n"),
            "bad.ops:4: cannot lift 'dilation' (kernel, stride or pad)");
  EXPECT_EQ(op_set_error("lift pool pad\nlift pool kernel\n"),
            "bad.ops:5: `lift pool` given twice (first on line 4)");
  EXPECT_EQ(op_set_error("lift\n"),
            "bad.ops:4: expected `lift conv2d ATTR...` (stride, pad, dilation, groups)");
}

// Pools of a rule lift together, apart from its convolutions (their own
// parameter names, so a pad of each can differ); a pool attribute that
// differs between the pools stays.
TEST(LiftRule, PoolsLiftApartFromConvs) {
  Rule r = parse_one(R"(rule g3_000001 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  input w1: f32[4,4,3,3]
  source {
    %0 = conv2d(i1, w1, pad=same)
    %1 = maxpool(%0, pad=same, kernel=[3,3])
    %2 = avgpool(%1, pad=same, kernel=[3,3], stride=[2,2])
    output %2
  }
  target {
    %0 = conv2d(i1, w1, pad=same)
    %1 = maxpool(%0, pad=same, kernel=[3,3])
    %2 = avgpool(%1, pad=same, kernel=[3,3], stride=[2,2])
    output %2
  }
}
)");
  const std::vector<AttrKey> pool = {AttrKey::kernel, AttrKey::stride, AttrKey::pad};
  std::optional<Rule> l = lift_rule(r, {AttrKey::pad}, {}, pool);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(param_names(*l), (std::vector<std::string>{"p", "pk", "pp"}));
  const std::string text = print_one(*l);
  EXPECT_NE(text.find("%0 = conv2d(i1, w1, pad=?p)"), std::string::npos) << text;
  EXPECT_NE(text.find("%1 = maxpool(%0, pad=?pp, kernel=?pk)"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = avgpool(%1, stride=[2,2], pad=?pp, kernel=?pk)"), std::string::npos)
      << text;
  EXPECT_FALSE(lift_rule(r, {}, {}, {}).has_value());
}

TEST(LiftRule, FusionLiftsEveryAttribute) {
  Rule r = parse_one(R"(rule g4_000001 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  input w1: f32[4,4,3,3]
  input b1: f32[4]
  source {
    %0 = conv2d(i1, w1, b1, pad=same)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(i1, w1, b1, pad=same, act=relu)
    output %0
  }
}
)");
  std::optional<Rule> l = lift_rule(r, kEveryConvAttr);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(print_one(*l), R"(# tso rules v1

rule g4_000001_lifted {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  input w1: f32[4,4,3,3]
  input b1: f32[4]
  param ?s = [1,1]
  param ?p = same
  param ?d = [1,1]
  param ?g = 1
  source {
    %0 = conv2d(i1, w1, b1, stride=?s, pad=?p, dilation=?d, groups=?g)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(i1, w1, b1, stride=?s, pad=?p, dilation=?d, groups=?g, act=relu)
    output %0
  }
}
)");
  // Only the listed attributes, in the listed order.
  std::optional<Rule> p = lift_rule(r, {AttrKey::pad});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(param_names(*p), std::vector<std::string>{"p"});
  const std::string text = print_one(*p);
  EXPECT_NE(text.find("%0 = conv2d(i1, w1, b1, pad=?p, act=relu)"), std::string::npos) << text;
}

TEST(LiftRule, KeepsDerivedGroupsAndDifferingValues) {
  // A depthwise groups is a shape expression; the two convs' strides differ.
  Rule r = parse_one(R"(rule g4_000002 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  input d1: f32[4,1,3,3]
  source {
    %0 = conv2d(i1, d1, stride=[2,2], pad=same, groups=dim(i1,1))
    %1 = conv2d(i1, d1, pad=same, groups=dim(i1,1))
    output %0, %1
  }
  target {
    %0 = conv2d(i1, d1, stride=[2,2], pad=same, groups=dim(i1,1))
    %1 = conv2d(i1, d1, pad=same, groups=dim(i1,1))
    output %0, %1
  }
}
)");
  std::optional<Rule> l = lift_rule(r, kEveryConvAttr);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(param_names(*l), (std::vector<std::string>{"p", "d"}));
  const std::string text = print_one(*l);
  EXPECT_NE(text.find("%0 = conv2d(i1, d1, stride=[2,2], pad=?p, dilation=?d, groups=dim(i1,1))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%1 = conv2d(i1, d1, pad=?p, dilation=?d, groups=dim(i1,1))"),
            std::string::npos)
      << text;
  // Nothing left to lift: no copy.
  EXPECT_FALSE(lift_rule(r, {AttrKey::stride, AttrKey::groups}).has_value());
}

TEST(LiftRule, NoCopyWithoutConv) {
  Rule r = parse_one(R"(rule g4_000003 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  source {
    %0 = relu(x1)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = relu(x1)
    output %0
  }
}
)");
  EXPECT_FALSE(lift_rule(r, {AttrKey::stride, AttrKey::pad}).has_value());
}

// A relu is a conv2d by an identity kernel with `same` padding only: with
// the conv in the target alone, no source binds its attributes.
TEST(LiftRule, NoCopyWhereOnlyTheTargetHasConvs) {
  Rule r = parse_one(R"(rule g2_000004 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  source {
    %0 = relu(i1)
    output %0
  }
  target {
    %0 = const_eye_conv(shape=[dim(i1,1), dim(i1,1), 3, 3])
    %1 = conv2d(i1, %0, pad=same, act=relu)
    output %1
  }
}
)");
  EXPECT_FALSE(lift_rule(r, kEveryConvAttr).has_value());
}

// taso_n4's g4_000016: a convolution of a concat of its own weight, whose
// lifted copy reached Z3's time limit. Every variable reaches the weight, so
// in a model with constant weights the source is weight-only: no copy. With
// the convolution's data an activation, the copy is written; so it is when
// one side only reads nothing but weights (g4_004437: the scale reaches the
// source's data, and the target's weight), as the search applies rules both
// ways.
TEST(LiftRule, NoCopyWhereEveryVariableReachesAConvWeight) {
  const std::string rule = R"(rule g4_000016 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input w1: f32[4,4,3,3]
  input w2: f32[4,4,3,3]
  source {
    %0 = concat(w1, w2, axis=1)
    %1 = relu(%0)
    %2 = concat(%1, %0, axis=0)
    %3 = conv2d(%2, %1, pad=same)
    output %3
  }
  target {
    %0 = concat(w2, w1, axis=1)
    %1 = relu(%0)
    %2 = concat(%1, %0, axis=0)
    %3 = conv2d(%2, %1, pad=same)
    output %3
  }
}
)";
  EXPECT_FALSE(lift_rule(parse_one(rule), kEveryConvAttr).has_value());
  Rule with_activation = parse_one(R"(rule c1 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[2,8,5,5]
  input w1: f32[4,4,3,3]
  input w2: f32[4,4,3,3]
  source {
    %0 = concat(w1, w2, axis=1)
    %1 = relu(%0)
    %2 = conv2d(i1, %1, pad=same)
    output %2
  }
  target {
    %0 = concat(w1, w2, axis=1)
    %1 = relu(%0)
    %2 = conv2d(i1, %1, pad=same)
    output %2
  }
}
)");
  std::optional<Rule> copy = lift_rule(with_activation, kEveryConvAttr);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(param_names(*copy), (std::vector<std::string>{"s", "p", "d", "g"}));
  Rule one_side = parse_one(R"(rule g4_004437 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input u1: f32[4,4,1,3]
  input u2: f32[4,4,1,3]
  input s1: f32[]
  source {
    %0 = concat(u1, u2, axis=1)
    %1 = smul(%0, s1)
    %2 = conv2d(%1, %0, pad=same)
    %3, %4 = split(%1, axis=1, sizes=[dim(u1,1), dim(u2,1)])
    output %2, %3, %4
  }
  target {
    %0 = concat(u2, u1, axis=1)
    %1 = smul(%0, s1)
    %2, %3 = split(%1, axis=1, sizes=[dim(u2,1), dim(u1,1)])
    %4 = conv2d(%0, %1, pad=same)
    output %4, %3, %2
  }
}
)");
  EXPECT_TRUE(lift_rule(one_side, kEveryConvAttr).has_value());
}

// The rule writer on a small set: each lifted copy follows its original (a
// rule with a conv2d in its source), the counts say how many, and the file
// parses back.
TEST(LiftGenerate, CopiesFollowTheirOriginals) {
  Expected<OpSet> s = op_set(
      "op conv2d kernel=[3,3] pad=same\nop conv2d kernel=[3,3] pad=same act=relu\nop relu\n"
      "op const_eye_conv shape=[4,4,3,3]\nlift conv2d stride pad dilation groups\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Expected<GenerateResult> r = generated(*s, 2);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<Rule>& rules = r->rules.rules;
  size_t lifted = 0;
  bool fusion = false;
  for (size_t i = 0; i < rules.size(); ++i) {
    auto has_conv = [](const RuleSide& side) {
      return std::any_of(side.nodes.begin(), side.nodes.end(),
                         [](const RuleNode& n) { return n.op == Op::Conv2d; });
    };
    const bool conv = has_conv(rules[i].source);
    if (rules[i].name.ends_with("_lifted")) {
      ++lifted;
      ASSERT_GT(i, 0u);
      EXPECT_EQ(rules[i].name, rules[i - 1].name + "_lifted");
      EXPECT_EQ(rules[i].params.size(), 4u);
      Rule expected = *lift_rule(rules[i - 1], kEveryConvAttr);
      EXPECT_EQ(rules[i], expected);
      fusion |= rules[i].source.nodes.size() == 2 && rules[i].target.nodes.size() == 1 &&
                rules[i].source.nodes[1].op == Op::Relu;
    } else {
      EXPECT_EQ(i + 1 < rules.size() && rules[i + 1].name == rules[i].name + "_lifted", conv)
          << rules[i].name;
    }
  }
  EXPECT_GT(lifted, 0u);
  EXPECT_TRUE(fusion);
  EXPECT_EQ(r->counts.lifted, lifted);
  EXPECT_NE(r->rules.header[1].find(" lifted=" + std::to_string(lifted) +
                                    " written=" + std::to_string(rules.size())),
            std::string::npos)
      << r->rules.header[1];
  Expected<RuleSet> back = parse_rules(print_rules(r->rules), "t.rules");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, r->rules);
}

// Relus around concats and splits on either axis of a matrix: the copies of
// originals found on axis 0 and on axis 1 are one renaming class once the
// axis is ?a, and only the first is written.
TEST(LiftGenerate, CopiesOfOneRenamingClassAreWrittenOnce) {
  Expected<OpSet> s = parse_op_set(
      "name t\ninput x1 x2 : f32[2,4]\nop relu\nop concat axis=0\nop concat axis=1\n"
      "op split axis=0\nop split axis=1\nlift concat axis\nlift split axis\nlift rank 2..4\n",
      "t.ops");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Expected<GenerateResult> r = generated(*s, 3);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::set<std::string> keys;
  int originals_with_copies = 0;
  for (const Rule& rule : r->rules.rules) {
    if (rule.name.ends_with("_lifted")) {
      EXPECT_TRUE(keys.insert(renaming_class_key(*s, rule)).second) << rule.name;
    } else if (lift_rule(rule, {}, s->lift_layout)) {
      ++originals_with_copies;
    }
  }
  EXPECT_EQ(r->counts.lifted, keys.size());
  EXPECT_GT(keys.size(), 0u);
  EXPECT_LT(static_cast<int>(keys.size()), originals_with_copies);
}

TEST(LiftOpSet, LayoutStatements) {
  Expected<OpSet> s = op_set("op relu\nlift transpose perm\nlift concat axis\nlift rank 2..4\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->lift_layout, (LayoutLift{true, true, false, 2, 4}));
  EXPECT_EQ(op_set_error("op relu\nlift transpose perm\n"),
            "bad.ops:6: `lift transpose perm`, `lift concat axis` and `lift split axis` need "
            "`lift rank LO..HI` (the ranks their copies are proved at)");
  EXPECT_EQ(op_set_error("lift rank 0..4\n"),
            "bad.ops:4: `lift rank LO..HI` takes ranks in 1..4 (the specs' ranks), got '0..4'");
  EXPECT_EQ(op_set_error("lift rank 2..5\n"),
            "bad.ops:4: `lift rank LO..HI` takes ranks in 1..4 (the specs' ranks), got '2..5'");
  EXPECT_EQ(op_set_error("lift rank 2..4\nlift rank 2..4\n"), "bad.ops:5: `lift rank` given twice");
  EXPECT_EQ(op_set_error("lift split axis\nlift split axis\n"),
            "bad.ops:5: `lift split axis` given twice");
}

constexpr LayoutLift kLayout{true, true, true, 2, 4};

TEST(LiftRule, TransposesTakeThePermutationOrItsInverse) {
  Rule r = parse_one(R"(rule t_000001 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input s1: f32[]
  source {
    %0 = transpose(x1, perm=[1,0])
    %1 = smul(%0, s1)
    %2 = relu(%1)
    %3 = transpose(%2, perm=[1,0])
    output %3
  }
  target {
    %0 = smul(x1, s1)
    %1 = relu(%0)
    output %1
  }
}
)");
  std::optional<Rule> l = lift_rule(r, {}, kLayout);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(print_one(*l), R"(# tso rules v1

rule t_000001_lifted {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input s1: f32[]
  param ?p = [1,0]
  rank x1 in 2..4
  source {
    %0 = transpose(x1, perm=?p)
    %1 = smul(%0, s1)
    %2 = relu(%1)
    %3 = transpose(%2, perm=inv(?p))
    output %3
  }
  target {
    %0 = smul(x1, s1)
    %1 = relu(%0)
    output %1
  }
}
)");
  // Without `lift transpose perm` a transpose pins the rank: no copy.
  EXPECT_FALSE(lift_rule(r, {}, LayoutLift{false, true, true, 2, 4}).has_value());
  EXPECT_FALSE(lift_rule(r, {}, LayoutLift{}).has_value());
}

TEST(LiftRule, ConcatAndSplitTakeOneAxisAndDimsCountFromTheEnd) {
  Rule r = parse_one(R"(rule t_000002 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input x2: f32[2,4]
  where dim(x1,0) == dim(x2,0)
  source {
    %0 = concat(x1, x2, axis=1)
    %1 = relu(%0)
    %2, %3 = split(%1, axis=1, sizes=[dim(x1,1), dim(x2,1)])
    output %2, %3
  }
  target {
    %0 = relu(x1)
    %1 = relu(x2)
    output %0, %1
  }
}
)");
  std::optional<Rule> l = lift_rule(r, {}, kLayout);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(print_one(*l), R"(# tso rules v1

rule t_000002_lifted {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input x2: f32[2,4]
  param ?a = 1
  param ?z0 = [4,4]
  rank x1 x2 in 2..4
  where dim(x1,-2) == dim(x2,-2)
  source {
    %0 = concat(x1, x2, axis=?a)
    %1 = relu(%0)
    %2, %3 = split(%1, axis=?a, sizes=?z0)
    output %2, %3
  }
  target {
    %0 = relu(x1)
    %1 = relu(x2)
    output %0, %1
  }
}
)");
  // Axes not lifted count from the end; the split's sizes keep their dims.
  std::optional<Rule> ranked = lift_rule(r, {}, LayoutLift{false, false, false, 2, 4});
  ASSERT_TRUE(ranked.has_value());
  const std::string text = print_one(*ranked);
  EXPECT_NE(text.find("split(%1, axis=-1, sizes=[dim(x1,-1), dim(x2,-1)])"), std::string::npos)
      << text;
  // A split in the target would leave its sizes unbound: no copy.
  std::swap(r.source, r.target);
  EXPECT_FALSE(lift_rule(r, {}, kLayout).has_value());
}

// The clause starts where the copy's dim()s exist and where a split with
// parameter sizes still splits its axis: taso.ops's 4-D weights concatenated
// on axis 0 (from the end, -4) give `rank u1 u2 in 4..4`, and an elementwise
// rule whose conditions name all four axes, lifting nothing else, no copy.
TEST(LiftRule, RankClauseStartsWhereDimsAndSplitAxesExist) {
  Rule split = parse_one(R"(rule t_000005 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input u1: f32[4,4,1,3]
  input u2: f32[4,4,1,3]
  input s1: f32[]
  source {
    %0 = concat(u1, u2, axis=0)
    %1 = smul(%0, s1)
    %2, %3 = split(%1, axis=0, sizes=[4,4])
    output %2, %3
  }
  target {
    %0 = smul(u1, s1)
    %1 = smul(u2, s1)
    output %0, %1
  }
}
)");
  std::optional<Rule> l = lift_rule(split, {}, kLayout);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->ranks.lo, 4);
  EXPECT_EQ(l->ranks.hi, 4);
  EXPECT_EQ(param_names(*l), (std::vector<std::string>{"a", "z0"}));
  // On the last axis the sizes fit every rank: the clause starts at 2.
  Rule last = split;
  for (RuleSide* side : {&last.source})
    for (RuleNode& n : side->nodes)
      for (PatternAttr& a : n.attrs)
        if (a.key == AttrKey::axis) a.value = AttrValue{int64_t{3}};
  for (PatternAttr& a : last.source.nodes[2].attrs)
    if (a.key == AttrKey::sizes) a.value = AttrValue{std::vector<int64_t>{3, 3}};
  std::optional<Rule> on_last = lift_rule(last, {}, kLayout);
  ASSERT_TRUE(on_last.has_value());
  EXPECT_EQ(on_last->ranks.lo, 2);

  Rule add = parse_one(R"(rule t_000006 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input u1: f32[4,4,1,3]
  input u2: f32[4,4,1,3]
  where dim(u1,0) == dim(u2,0)
  where dim(u1,1) == dim(u2,1)
  where dim(u1,2) == dim(u2,2)
  where dim(u1,3) == dim(u2,3)
  source {
    %0 = add(u1, u2)
    output %0
  }
  target {
    %0 = add(u2, u1)
    output %0
  }
}
)");
  EXPECT_FALSE(lift_rule(add, {}, LayoutLift{true, true, true, 2, 4}).has_value());
  // Up to rank 5 the copy still says more than the rule.
  std::optional<Rule> higher = lift_rule(add, {}, LayoutLift{true, true, true, 2, 5});
  ASSERT_TRUE(higher.has_value());
  EXPECT_EQ(higher->ranks.lo, 4);
}

TEST(LiftRule, NoLayoutCopyForConvsOrMixedPermutations) {
  Rule conv = parse_one(R"(rule t_000003 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input i1: f32[1,4,5,5]
  input w1: f32[4,4,3,3]
  source {
    %0 = conv2d(i1, w1, pad=same)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(i1, w1, pad=same, act=relu)
    output %0
  }
}
)");
  EXPECT_FALSE(lift_rule(conv, {}, kLayout).has_value());
  // A transpose meeting a concat: the axis would move with the permutation.
  Rule mixed = parse_one(R"(rule t_000004 {
  origin generated version=0.2 ops=t seed=1
  status unverified
  input x1: f32[2,4]
  input x2: f32[2,4]
  source {
    %0 = transpose(x1, perm=[1,0])
    %1 = transpose(x2, perm=[1,0])
    %2 = concat(%0, %1, axis=1)
    output %2
  }
  target {
    %0 = concat(x1, x2, axis=0)
    %1 = transpose(%0, perm=[1,0])
    output %1
  }
}
)");
  EXPECT_FALSE(lift_rule(mixed, {}, kLayout).has_value());
}

}  // namespace
}  // namespace tso::gen
