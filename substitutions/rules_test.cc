// Rule files: the README example loads, printing is canonical and round-trips,
// both sides instantiate at other shapes through their shape expressions, and
// bad files are rejected with FILE:LINE:COL.
#include "substitutions/rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/text_format.h"
#include "runtime/reference/executor.h"
#include "runtime/reference/test_util.h"

namespace tso {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The example of substitutions/README.md, extracted from the file so the
// documentation cannot drift from the loader.
std::string readme_example() {
  std::string md = read("substitutions/README.md");
  size_t begin = md.find("# tso rules v1");
  size_t end = md.find("```", begin);
  EXPECT_NE(begin, std::string::npos);
  return md.substr(begin, end - begin);
}

RuleSet parse_ok(std::string_view text) {
  Expected<RuleSet> s = parse_rules(text, "test.rules");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(*s) : RuleSet{};
}

std::string parse_error(std::string_view text) {
  Expected<RuleSet> s = parse_rules(text, "test.rules");
  EXPECT_FALSE(s.ok()) << "parsed:\n" << text;
  return s.ok() ? "" : s.error().message;
}

TEST(Rules, ReadmeExampleLoadsAndRoundTrips) {
  RuleSet set = parse_ok(readme_example());
  ASSERT_EQ(set.rules.size(), 1u);
  const Rule& r = set.rules[0];
  EXPECT_EQ(r.name, "g3_000042");
  EXPECT_EQ(r.origin.kind, RuleOrigin::Kind::kGenerated);
  EXPECT_EQ(r.origin.ops, "taso");
  EXPECT_EQ(r.status.kind, RuleStatus::Kind::kVerified);
  EXPECT_EQ(r.status.detail, "5b1c0e9a");
  EXPECT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.source.outputs.size(), 2u);
  EXPECT_EQ(set.header.size(), 2u);
  std::string text = print_rules(set);
  EXPECT_EQ(parse_ok(text), set);
  EXPECT_EQ(print_rules(parse_ok(text)), text);
}

TEST(Rules, InstantiateEvaluatesShapeExpressionsAtNewTypes) {
  RuleSet set = parse_ok(readme_example());
  const Rule& r = set.rules[0];
  RuleBindings b;
  b.types["x"] = {DType::kF32, Shape{1, 8, 7, 7}};
  b.types["w1"] = {DType::kF32, Shape{3, 8, 3, 3}};
  b.types["w2"] = {DType::kF32, Shape{5, 8, 3, 3}};
  Expected<Graph> src = instantiate(r, RuleSideKind::kSource, b);
  Expected<Graph> dst = instantiate(r, RuleSideKind::kTarget, b);
  ASSERT_TRUE(src.ok()) << src.error().message;
  ASSERT_TRUE(dst.ok()) << dst.error().message;
  ASSERT_EQ(src->outputs().size(), 2u);
  ASSERT_EQ(dst->outputs().size(), 2u);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(src->type(src->outputs()[i].ref), dst->type(dst->outputs()[i].ref)) << i;
  EXPECT_EQ(dst->type(dst->outputs()[1].ref).shape, (Shape{1, 5, 7, 7}));
  // Shapes at which a side is invalid are an error naming the rule.
  b.types["w2"] = {DType::kF32, Shape{5, 6, 3, 3}};
  Expected<Graph> bad = instantiate(r, RuleSideKind::kSource, b);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("g3_000042"), std::string::npos) << bad.error().message;
}

const char* kSmall = R"(# tso rules v1
rule double_transpose {
  origin handwritten
  status unverified
  input x: f32[2,3]
  source {
    %0 = transpose(x, perm=[1,0])
    %1 = transpose(%0, perm=[1,0])
    output %1
  }
  target {
    output x
  }
}
rule relu_fuse {
  origin handwritten
  status unknown reason="timeout after 100 ms"
  input x: f32[1,4,5,5]
  input w: f32[4,4,3,3]
  param ?s = [1,1]
  source {
    %0 = conv2d(x, w, stride=?s, pad=same)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(x, w, stride=?s, pad=same, act=relu)
    output %0
  }
}
)";

TEST(Rules, ParamsAndIdentityTargets) {
  RuleSet set = parse_ok(kSmall);
  ASSERT_EQ(set.rules.size(), 2u);
  EXPECT_TRUE(set.rules[0].target.nodes.empty());
  EXPECT_EQ(set.rules[1].status.kind, RuleStatus::Kind::kUnknown);
  ASSERT_EQ(set.rules[1].params.size(), 1u);
  EXPECT_EQ(set.rules[1].params[0].name, "s");
  EXPECT_EQ(parse_ok(print_rules(set)), set);
  RuleBindings b;
  b.params["s"] = std::vector<int64_t>{2, 2};
  Expected<Graph> g = instantiate(set.rules[1], RuleSideKind::kTarget, b);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->type(g->outputs()[0].ref).shape, (Shape{1, 4, 3, 3}));
}

// Integer parameters inside lists: a pad's pads bound entry by entry in the
// source and reused in the conv's explicit padding; printed canonically,
// round-tripped, and evaluated at other values when instantiated.
constexpr const char* kPadFold = R"(# tso rules v1
rule fold {
  origin handwritten
  status unverified
  oneway
  input x: f32[1,2,6,6]
  input w: f32[3,2,3,3]
  param ?t = 1
  param ?l = 0
  param ?b = 2
  param ?r = 1
  source {
    %0 = pad(x, pads=[0,0,?t,?l,0,0,?b,?r])
    %1 = conv2d(%0, w)
    output %1
  }
  target {
    %0 = conv2d(x, w, pad=[?t, ?l, ?b, ?r + 0])
    output %0
  }
}
)";

TEST(Rules, IntegerParametersBindListEntries) {
  RuleSet set = parse_ok(kPadFold);
  ASSERT_EQ(set.rules.size(), 1u);
  const Rule& r = set.rules[0];
  EXPECT_TRUE(r.one_way);
  ASSERT_EQ(r.params.size(), 4u);
  EXPECT_EQ(r.params[3].example, AttrValue{int64_t{1}});
  const PatternAttr& pads = r.source.nodes[0].attrs[0];
  ASSERT_EQ(pads.form, PatternAttr::Form::kExprList);
  EXPECT_EQ(pads.exprs[2], ShapeExpr::param("t"));
  const std::string text = print_rules(set);
  EXPECT_NE(text.find("  status unverified\n  oneway\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pads=[0, 0, ?t, ?l, 0, 0, ?b, ?r]"), std::string::npos) << text;
  EXPECT_NE(text.find("pad=[?t, ?l, ?b, ?r + 0]"), std::string::npos) << text;
  EXPECT_EQ(parse_ok(text), set);
  RuleBindings b;
  b.params = {{"t", int64_t{2}}, {"l", int64_t{2}}, {"b", int64_t{0}}, {"r", int64_t{3}}};
  for (RuleSideKind side : {RuleSideKind::kSource, RuleSideKind::kTarget}) {
    Expected<Graph> g = instantiate(r, side, b);
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_EQ(g->type(g->outputs()[0].ref).shape, (Shape{1, 3, 6, 9}));
  }
}

// The source binds a parameter from a whole entry only; an entry parameter
// needs a declared example.
TEST(Rules, IntegerParametersAreBoundWholeAndDeclared) {
  std::string sum(kPadFold);
  sum.replace(sum.find("?b,?r]"), 6, "?b,?r+1]");
  const std::string entry = parse_error(sum);
  EXPECT_EQ(entry.substr(0, 14), "test.rules:13:") << entry;
  EXPECT_NE(entry.find("a parameter in the source must be the whole value or list entry"),
            std::string::npos)
      << entry;
  std::string undeclared(kPadFold);
  const std::string decl = "  param ?r = 1\n";
  undeclared.erase(undeclared.find(decl), decl.size());
  EXPECT_NE(parse_error(undeclared).find("?r needs an example value"), std::string::npos)
      << parse_error(undeclared);
  std::string listed(kPadFold);
  listed.replace(listed.find("param ?r = 1"), 12, "param ?r = [1,1]");
  const std::string list_example = parse_error(listed);
  EXPECT_EQ(list_example.substr(0, 14), "test.rules:11:") << list_example;
  EXPECT_NE(list_example.find("parameter ?r: "), std::string::npos) << list_example;
  std::string twice(kPadFold);
  twice.replace(twice.find("  oneway\n"), 9, "  oneway\n  oneway\n");
  EXPECT_NE(parse_error(twice).find("test.rules:6:3: duplicate oneway"), std::string::npos)
      << parse_error(twice);
}

TEST(Rules, BadFilesNameTheLineAndColumn) {
  std::string head =
      "# tso rules v1\nrule r {\n  origin handwritten\n  status unverified\n"
      "  input x: f32[2,3]\n";
  EXPECT_EQ(parse_error(head + "  source {\n    %0 = relux(x)\n    output %0\n  }\n"
                               "  target {\n    output x\n  }\n}\n")
                .substr(0, 17),
            "test.rules:7:10: ");
  // arity
  std::string arity = parse_error(head +
                                  "  source {\n    %0 = add(x)\n    output %0\n  }\n"
                                  "  target {\n    output x\n  }\n}\n");
  EXPECT_NE(arity.find("test.rules:7:"), std::string::npos) << arity;
  // a target variable the source never binds
  std::string unbound =
      parse_error(head +
                  "  input y: f32[2,3]\n  source {\n    %0 = relu(x)\n    output %0\n  }\n"
                  "  target {\n    %0 = add(x, y)\n    output %0\n  }\n}\n");
  EXPECT_NE(unbound.find("test.rules:"), std::string::npos) << unbound;
  EXPECT_NE(unbound.find("y"), std::string::npos) << unbound;
  // sides that disagree in type
  std::string types =
      parse_error(head +
                  "  source {\n    %0 = transpose(x, perm=[1,0])\n    output %0\n  }\n"
                  "  target {\n    output x\n  }\n}\n");
  EXPECT_NE(types.find("test.rules:"), std::string::npos) << types;
  // not a rule file
  EXPECT_NE(parse_error("graph g {\n}\n").find("test.rules:1:"), std::string::npos);
}

// An example type whose size overflows int64 names the variable; one that
// fits but makes a side's result overflow is refused at that statement.
TEST(Rules, SizesThatOverflowAreErrorsWithTheLocation) {
  const std::string head = "# tso rules v1\nrule r {\n  origin handwritten\n  status unverified\n";
  const std::string relu_x =
      "  source {\n    %0 = relu(x)\n    output %0\n  }\n  target {\n    %0 = relu(x)\n"
      "    output %0\n  }\n}\n";
  EXPECT_EQ(parse_error(head + "  input x: f32[4294967296,4294967296,16]\n" + relu_x),
            "test.rules:5:12: variable x: f32[4294967296,4294967296,16] does not fit in memory: "
            "its size in bytes overflows int64");
  std::string grows = parse_error(
      head +
      "  input x: f32[2147483648,536870912]\n"
      "  source {\n    %0 = relu(x)\n    output %0\n  }\n"
      "  target {\n    %0 = concat(x, x, axis=0)\n"
      "    %1, %2 = split(%0, axis=0, sizes=[dim(x,0), dim(x,0)])\n    output %1\n  }\n}\n");
  EXPECT_NE(grows.find("test.rules:11:5: rule r, target: `%0 = concat(x, x, axis=0)`"), std::string::npos) << grows;
  EXPECT_NE(grows.find("concat: output 0: f32[4294967296,536870912] does not fit in memory"),
            std::string::npos)
      << grows;
}

// A shape expression nests at most 32 levels, by parentheses or by a chain
// of operators: every walk over one recurses once a level, and 10,000
// parentheses (found by rules_fuzz) overflowed the stack.
TEST(Rules, DeeplyNestedShapeExpressionsAreErrorsWithTheLocation) {
  auto rule = [](const std::string& rhs) {
    return "# tso rules v1\nrule r {\n  origin handwritten\n  status unverified\n"
           "  input x: f32[4]\n  where dim(x,0) == " +
           rhs +
           "\n  source {\n    %0 = relu(x)\n    output %0\n  }\n"
           "  target {\n    %0 = relu(x)\n    output %0\n  }\n}\n";
  };
  auto nested = [](int levels) {
    return std::string(levels, '(') + "4" + std::string(levels, ')');
  };
  auto chain = [](int operators) {
    std::string e = "4";
    for (int k = 0; k < operators; ++k) e += " * 1";
    return e;
  };
  parse_ok(rule(nested(32)));
  parse_ok(rule(chain(31)));
  EXPECT_EQ(parse_error(rule(nested(10000))),
            "test.rules:6:53: shape expression nested more than 32 levels deep");
  EXPECT_EQ(parse_error(rule(chain(10000))),
            "test.rules:6:147: shape expression nested more than 32 levels deep");
}

// Two images of a batch stacked along H and convolved once: the rows next
// to the seam read the other image instead of the padding, and the
// correction recomputes them from slices of x.
constexpr std::string_view kStackedRule = R"(# tso rules v1

rule stack_h {
  origin handwritten
  status partial boxes=2
  input x: f32[2,2,4,5]
  input w: f32[3,2,3,3]
  source {
    %0 = conv2d(x, w, pad=[1,1,1,1])
    output %0
  }
  target {
    %0, %1 = split(x, axis=0, sizes=[1, 1])
    %2 = concat(%0, %1, axis=2)
    %3 = conv2d(%2, w, pad=[1,1,1,1])
    %4, %5 = split(%3, axis=2, sizes=[dim(x,2), dim(x,2)])
    %6 = concat(%4, %5, axis=0)
    output %6
  }
  correction {
    %0 = slice(x, starts=[0, dim(x,2) - 2], ends=[1, dim(x,2)], axes=[0, 2], steps=[1, 1])
    %1 = conv2d(%0, w, pad=[0, 1, 1, 1])
    %2 = slice(x, starts=[1, 0], ends=[2, 2], axes=[0, 2], steps=[1, 1])
    %3 = conv2d(%2, w, pad=[1, 1, 0, 1])
    box %1 output=0 at=[0, 0, dim(x,2) - 1, 0]
    box %3 output=0 at=[1, 0, 0, 0]
  }
}
)";

std::vector<ref::Tensor<double>> run(const Graph& g,
                                     const std::map<std::string, ref::Tensor<double>>& feeds) {
  Expected<std::vector<ref::Tensor<double>>> r = ref::evaluate(g, feeds);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : std::vector<ref::Tensor<double>>{};
}

TEST(Rules, PartialRuleRoundTripsAndItsCorrectedTargetEqualsTheSource) {
  RuleSet set = parse_ok(kStackedRule);
  ASSERT_EQ(set.rules.size(), 1u);
  const Rule& r = set.rules[0];
  EXPECT_EQ(r.status.kind, RuleStatus::Kind::kPartial);
  ASSERT_EQ(r.correction.boxes.size(), 2u);
  EXPECT_EQ(print_rules(parse_ok(print_rules(set))), print_rules(set));
  EXPECT_EQ(parse_ok(print_rules(set)), set);
  // At the example types and at taller images: the mutant is wrong at the
  // seam rows only, the corrected target nowhere.
  for (int64_t h : {4, 7}) {
    RuleBindings b;
    b.types["x"] = TensorType{DType::kF32, Shape{2, 2, h, 5}};
    Expected<Graph> src = instantiate(r, RuleSideKind::kSource, b);
    Expected<Graph> mutant = instantiate(r, RuleSideKind::kTarget, b);
    Expected<Graph> fixed = instantiate(r, RuleSideKind::kCorrected, b);
    ASSERT_TRUE(src.ok() && mutant.ok() && fixed.ok()) << (fixed.ok() ? "" : fixed.error().message);
    std::mt19937_64 rng(h);
    std::map<std::string, ref::Tensor<double>> feeds{
        {"x", ref::testing::random_tensor<double>(Shape{2, 2, h, 5}, rng)},
        {"w", ref::testing::random_tensor<double>(Shape{3, 2, 3, 3}, rng)}};
    ref::Tensor<double> want = run(*src, feeds).at(0);
    ref::Tensor<double> wrong = run(*mutant, feeds).at(0);
    ref::Tensor<double> got = run(*fixed, feeds).at(0);
    int64_t differ = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      EXPECT_NEAR(got.data[i], want.data[i], 1e-12) << "h=" << h << " at " << i;
      differ += std::abs(wrong.data[i] - want.data[i]) > 1e-12;
    }
    EXPECT_EQ(differ, 2 * 3 * 5) << "one seam row per image, 3 channels, 5 columns";
  }
}

TEST(Rules, ShapeExpressionsDivideExactly) {
  std::string text = R"(# tso rules v1

rule halves {
  origin handwritten
  status unverified
  input x: f32[2,6]
  source {
    %0 = relu(x)
    output %0
  }
  target {
    %0 = reshape(x, shape=[dim(x,0), dim(x,1) / 2, 2])
    %1 = relu(%0)
    %2 = reshape(%1, shape=[dim(x,0), dim(x,1) / 2 * 2])
    output %2
  }
}
)";
  RuleSet set = parse_ok(text);
  ASSERT_EQ(set.rules.size(), 1u);
  EXPECT_EQ(parse_ok(print_rules(set)), set);
  EXPECT_NE(print_rules(set).find("dim(x,1) / 2 * 2"), std::string::npos) << print_rules(set);
  RuleBindings odd;
  odd.types["x"] = TensorType{DType::kF32, Shape{2, 7}};
  Expected<Graph> g = instantiate(set.rules[0], RuleSideKind::kTarget, odd);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("7 is not a multiple of 2"), std::string::npos)
      << g.error().message;
}

TEST(Rules, ThePartialStatusAndTheCorrectionComeTogether) {
  std::string text(kStackedRule);
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  // A partial rule without its correction.
  size_t c = text.find("  correction {");
  std::string bare = text.substr(0, c) + "}\n";
  std::string e = parse_error(bare);
  EXPECT_NE(e.find("test.rules:5:3: rule stack_h is partial but has no correction"),
            std::string::npos)
      << e;
  // A correction on a rule that is not partial.
  e = parse_error(replaced("status partial boxes=2", "status unverified"));
  EXPECT_NE(e.find("only a partial rule has a correction"), std::string::npos) << e;
  // A box outside the output.
  e = parse_error(replaced("at=[1, 0, 0, 0]", "at=[1, 0, 4, 0]"));
  EXPECT_NE(e.find("test.rules:26:5:"), std::string::npos) << e;
  // An output the target does not have.
  e = parse_error(replaced("box %3 output=0", "box %3 output=1"));
  EXPECT_NE(e.find("the target has no output 1"), std::string::npos) << e;
  // A patch statement that reaches no box.
  e = parse_error(replaced("    box %1 output=0 at=[0, 0, dim(x,2) - 1, 0]\n", ""));
  EXPECT_NE(e.find("reaches no output of the correction"), std::string::npos) << e;
  // An empty correction.
  e = parse_error(text.substr(0, c) + "  correction {\n  }\n}\n");
  EXPECT_NE(e.find("the correction has no box"), std::string::npos) << e;
}

}  // namespace
}  // namespace tso
