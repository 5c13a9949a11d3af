// The generator: op-set errors name file and line; a small run is the same
// whatever the number of threads, parses back as a rule file, and every
// written rule's two sides agree on random inputs.
#include "generator/generator.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <fstream>
#include <sstream>

namespace tso::gen {
namespace {

OpSet taso() {
  Expected<OpSet> s = load_op_set("generator/taso.ops");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : OpSet{};
}

std::string op_set_error(const std::string& text) {
  Expected<OpSet> s = parse_op_set(text, "bad.ops");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message;
}

TEST(OpSet, TasoSetLoads) {
  OpSet s = taso();
  EXPECT_EQ(s.name, "taso");
  EXPECT_EQ(s.vars.size(), 20u);
  EXPECT_EQ(s.ops.size(), 25u);
}

TEST(OpSet, ErrorsNameFileAndLine) {
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop frobnicate\n"),
            "bad.ops:3: unknown operator 'frobnicate'");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop softmax axis=1\n"),
            "bad.ops:3: operator 'softmax' is not supported by the generator");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2,\n"),
            "bad.ops:2: bad tensor type 'f32[2,' (expected e.g. f32[2,4], rank <= 4)");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop split axis=0 sizes=[1,1]\n"),
            "bad.ops:3: 'sizes' is derived from the arguments; do not set it");
}

TEST(Generate, RejectsMaxOpsOutOfRange) {
  OpSet s = taso();
  GenerateOptions o;
  o.max_ops = 7;
  Expected<GenerateResult> r = generate(s, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--max-ops must be in 1..6, got 7");
}

std::string run(int threads, int max_ops) {
  tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
  GenerateOptions o;
  o.max_ops = max_ops;
  Expected<GenerateResult> r = generate(taso(), o);
  EXPECT_TRUE(r.ok());
  return r.ok() ? print_rules(r->rules) : "";
}

TEST(Generate, SameOutputWhateverTheThreadCount) {
  std::string one = run(1, 2), two = run(2, 2), four = run(4, 2);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
}

TEST(Generate, RulesParseAndBothSidesInstantiate) {
  std::string text = run(2, 2);
  Expected<RuleSet> set = parse_rules(text, "n2.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_GT(set->rules.size(), 50u);
  for (const Rule& r : set->rules) {
    EXPECT_EQ(r.status.kind, RuleStatus::Kind::kUnverified);
    EXPECT_EQ(r.origin.ops, "taso");
    EXPECT_TRUE(instantiate(r, RuleSideKind::kSource).ok()) << r.name;
    EXPECT_TRUE(instantiate(r, RuleSideKind::kTarget).ok()) << r.name;
  }
}

}  // namespace
}  // namespace tso::gen
