// The committed generated rule files: each parses, its header's counts match
// its body, and it holds TASO's classic substitutions up to renaming.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "substitutions/rules.h"

namespace tso {
namespace {

RuleSet load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  Expected<RuleSet> set = parse_rules(s.str(), path);
  EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message);
  return set.ok() ? *set : RuleSet{};
}

// "add matmul matmul": the sorted operators of a side, fused activations
// spelled conv2d+relu.
std::string ops_of(const RuleSide& side) {
  std::vector<std::string> ops;
  for (const RuleNode& n : side.nodes) {
    std::string name(op_name(n.op));
    for (const PatternAttr& a : n.attrs)
      if (a.key == AttrKey::act && a.form == PatternAttr::Form::kValue &&
          std::get<Act>(a.value) != Act::kNone)
        name += std::string("+") + act_name(std::get<Act>(a.value));
    ops.push_back(name);
  }
  std::sort(ops.begin(), ops.end());
  std::string s;
  for (const std::string& o : ops) s += (s.empty() ? "" : " ") + o;
  return s;
}

bool has_rule(const RuleSet& set, const std::string& one, const std::string& other) {
  for (const Rule& r : set.rules) {
    std::string s = ops_of(r.source), t = ops_of(r.target);
    if ((s == one && t == other) || (s == other && t == one)) return true;
  }
  return false;
}

void check_header(const RuleSet& set) {
  ASSERT_EQ(set.header.size(), 2u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(set.header[1], m, std::regex("written=([0-9]+)")));
  EXPECT_EQ(std::stoul(m[1]), set.rules.size());
  ASSERT_TRUE(std::regex_search(set.header[1], m, std::regex("implied=([0-9]+)")));
  EXPECT_EQ(std::stoul(m[1]), set.rules.size());
  for (const Rule& r : set.rules) {
    EXPECT_EQ(r.origin.kind, RuleOrigin::Kind::kGenerated) << r.name;
    EXPECT_EQ(r.origin.ops, "taso") << r.name;
  }
}

void expect_classic_rules(const RuleSet& set) {
  EXPECT_TRUE(has_rule(set, "add matmul matmul", "add matmul")) << "matmul distributes over add";
  EXPECT_TRUE(has_rule(set, "conv2d conv2d", "concat conv2d split")) << "convs sharing an input merge";
  EXPECT_TRUE(has_rule(set, "conv2d relu", "conv2d+relu")) << "conv then relu is fused conv";
  EXPECT_TRUE(has_rule(set, "transpose transpose", "")) << "transpose of transpose";
  EXPECT_TRUE(has_rule(set, "concat split", "")) << "concat then split";
  EXPECT_TRUE(has_rule(set, "conv2d smul", "conv2d smul")) << "smul commutes with conv";
  EXPECT_TRUE(has_rule(set, "matmul smul", "matmul smul")) << "smul commutes with matmul";
  EXPECT_TRUE(has_rule(set, "add conv2d conv2d", "add conv2d")) << "conv is linear in its input";
}

TEST(GeneratedRules, TasoN3ParsesWithMatchingCounts) {
  RuleSet set = load("substitutions/taso_n3.rules");
  check_header(set);
  EXPECT_NE(set.header[0].find("max-ops: 3"), std::string::npos);
}

TEST(GeneratedRules, TasoN3HoldsTheClassicSubstitutions) {
  expect_classic_rules(load("substitutions/taso_n3.rules"));
}

TEST(GeneratedRules, TasoN4ParsesWithMatchingCounts) {
  RuleSet set = load("substitutions/taso_n4.rules");
  check_header(set);
  EXPECT_NE(set.header[0].find("max-ops: 4"), std::string::npos);
}

TEST(GeneratedRules, TasoN4HoldsTheClassicSubstitutions) {
  expect_classic_rules(load("substitutions/taso_n4.rules"));
}

}  // namespace
}  // namespace tso
