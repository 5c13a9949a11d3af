// renaming_class_key: one key for rules that differ by a renaming, node
// order, the order of a commutative operator's arguments and the side they
// are written on; different keys for near misses (a non-commutative
// operator's arguments swapped, a parameter made a value, another rank
// clause, a variable of another example rank).
#include "generator/rule_class.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tso::gen {
namespace {

OpSet taso_like() {
  Expected<OpSet> s = parse_op_set(
      "name t\ninput x1 x2 x3 : f32[2,4]\nweight w1 w2 w3 : f32[4,4]\nop add\nop mul\nop matmul\n"
      "op concat axis=0\nop concat axis=1\n",
      "t.ops");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : OpSet{};
}

Rule parse_one(const std::string& text) {
  Expected<RuleSet> s = parse_rules("# tso rules v1\n" + text, "t.rules");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() && s->rules.size() == 1 ? s->rules[0] : Rule{};
}

// A concat of two products sharing a factor, as two lifted copies of
// taso.ops at N=3 wrote it: their originals were found on axes 0 and 1.
constexpr const char* kConcatOfProducts = R"(rule a {
  origin handwritten
  status unverified
  input w1: f32[4,4]
  input w2: f32[4,4]
  input w3: f32[4,4]
  param ?a = 0
  rank w1 w2 w3 in 2..4
  source {
    %0 = mul(w1, w2)
    %1 = mul(w3, w2)
    %2 = concat(%1, %0, axis=?a)
    output %2
  }
  target {
    %0 = concat(w3, w2, axis=?a)
    %1 = concat(w2, w1, axis=?a)
    %2 = mul(%0, %1)
    output %2
  }
}
)";

constexpr const char* kRenamedReordered = R"(rule b {
  origin handwritten
  status unverified
  input w1: f32[4,4]
  input w2: f32[4,4]
  input w3: f32[4,4]
  param ?a = 1
  rank w1 w2 w3 in 2..4
  source {
    %0 = mul(w1, w3)
    %1 = mul(w1, w2)
    %2 = concat(%1, %0, axis=?a)
    output %2
  }
  target {
    %0 = concat(w2, w1, axis=?a)
    %1 = concat(w1, w3, axis=?a)
    %2 = mul(%1, %0)
    output %2
  }
}
)";

TEST(RenamingClassKey, RenamedReorderedAndTurnedAroundAreOneClass) {
  OpSet set = taso_like();
  Rule a = parse_one(kConcatOfProducts), b = parse_one(kRenamedReordered);
  EXPECT_EQ(renaming_class_key(set, a), renaming_class_key(set, b));
  Rule turned = a;
  std::swap(turned.source, turned.target);
  EXPECT_EQ(renaming_class_key(set, a), renaming_class_key(set, turned));
}

// Each near miss of kConcatOfProducts: its text with every `from` replaced
// by `to`.
TEST(RenamingClassKey, NearMissesAreOtherClasses) {
  OpSet set = taso_like();
  const std::string base = kConcatOfProducts;
  const std::string key = renaming_class_key(set, parse_one(base));
  const std::vector<std::vector<std::pair<std::string, std::string>>> misses = {
      {{"= mul(w", "= matmul(w"}},
      {{"  param ?a = 0\n", ""}, {"axis=?a", "axis=0"}},
      {{"in 2..4", "in 2..3"}},
      {{"rank w1 w2 w3 in", "rank w1 w2 in"}},
  };
  for (const auto& edits : misses) {
    std::string text = base;
    for (const auto& [from, to] : edits) {
      ASSERT_NE(text.find(from), std::string::npos) << from;
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
        text.replace(at, from.size(), to), at += to.size();
    }
    EXPECT_NE(renaming_class_key(set, parse_one(text)), key) << text;
  }
}

// A product's arguments keep their order, a mul's do not: the same product
// on both sides is one rule whichever way it is written, one written both
// ways is another.
TEST(RenamingClassKey, OnlyCommutativeArgumentsAreUnordered) {
  OpSet set = taso_like();
  auto rule = [](const std::string& source, const std::string& target) {
    return parse_one("rule m {\n  origin handwritten\n  status unverified\n"
                     "  input x1: f32[4,4]\n  input x2: f32[4,4]\n  source {\n    %0 = " +
                     source + "\n    output %0\n  }\n  target {\n    %0 = " + target +
                     "\n    output %0\n  }\n}\n");
  };
  const std::string same = renaming_class_key(set, rule("matmul(x1, x2)", "matmul(x1, x2)"));
  EXPECT_EQ(renaming_class_key(set, rule("matmul(x2, x1)", "matmul(x2, x1)")), same);
  EXPECT_NE(renaming_class_key(set, rule("matmul(x1, x2)", "matmul(x2, x1)")), same);
  EXPECT_EQ(renaming_class_key(set, rule("mul(x1, x2)", "mul(x2, x1)")),
            renaming_class_key(set, rule("mul(x1, x2)", "mul(x1, x2)")));
}

}  // namespace
}  // namespace tso::gen
