// Rule files: the README example loads, printing is canonical and round-trips,
// both sides instantiate at other shapes through their shape expressions, and
// bad files are rejected with FILE:LINE:COL.
#include "substitutions/rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/text_format.h"

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

TEST(Rules, BadFilesNameTheLineAndColumn) {
  std::string head = "# tso rules v1\nrule r {\n  origin handwritten\n  status unverified\n"
                     "  input x: f32[2,3]\n";
  EXPECT_EQ(parse_error(head + "  source {\n    %0 = relux(x)\n    output %0\n  }\n"
                               "  target {\n    output x\n  }\n}\n")
                .substr(0, 17),
            "test.rules:7:10: ");
  // arity
  std::string arity = parse_error(head + "  source {\n    %0 = add(x)\n    output %0\n  }\n"
                                         "  target {\n    output x\n  }\n}\n");
  EXPECT_NE(arity.find("test.rules:7:"), std::string::npos) << arity;
  // a target variable the source never binds
  std::string unbound =
      parse_error(head + "  input y: f32[2,3]\n  source {\n    %0 = relu(x)\n    output %0\n  }\n"
                         "  target {\n    %0 = add(x, y)\n    output %0\n  }\n}\n");
  EXPECT_NE(unbound.find("test.rules:"), std::string::npos) << unbound;
  EXPECT_NE(unbound.find("y"), std::string::npos) << unbound;
  // sides that disagree in type
  std::string types =
      parse_error(head + "  source {\n    %0 = transpose(x, perm=[1,0])\n    output %0\n  }\n"
                         "  target {\n    output x\n  }\n}\n");
  EXPECT_NE(types.find("test.rules:"), std::string::npos) << types;
  // not a rule file
  EXPECT_NE(parse_error("graph g {\n}\n").find("test.rules:1:"), std::string::npos);
}

}  // namespace
}  // namespace tso
