// The committed generated rule files: each parses, its header's counts match
// its body, and it holds TASO's classic substitutions up to renaming; the
// biased operator sets' files hold the classic merges with biases, verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
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

void check_header(const RuleSet& set, const std::string& ops = "taso") {
  ASSERT_EQ(set.header.size(), 2u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(set.header[1], m, std::regex("written=([0-9]+)")));
  EXPECT_EQ(std::stoul(m[1]), set.rules.size());
  ASSERT_TRUE(std::regex_search(set.header[1], m, std::regex("implied=([0-9]+)")));
  const size_t implied = std::stoul(m[1]);
  size_t lifted = 0;
  if (std::regex_search(set.header[1], m, std::regex("lifted=([0-9]+)"))) lifted = std::stoul(m[1]);
  EXPECT_EQ(implied + lifted, set.rules.size());
  // Each lifted copy follows its original (generator/lift.h).
  size_t named = 0;
  for (size_t i = 0; i < set.rules.size(); ++i)
    if (set.rules[i].name.ends_with("_lifted")) {
      ++named;
      ASSERT_GT(i, 0u);
      EXPECT_EQ(set.rules[i].name, set.rules[i - 1].name + "_lifted");
    }
  EXPECT_EQ(named, lifted);
  for (const Rule& r : set.rules) {
    EXPECT_EQ(r.origin.kind, RuleOrigin::Kind::kGenerated) << r.name;
    EXPECT_EQ(r.origin.ops, ops) << r.name;
  }
}

void expect_classic_rules(const RuleSet& set) {
  EXPECT_TRUE(has_rule(set, "add matmul matmul", "add matmul")) << "matmul distributes over add";
  EXPECT_TRUE(has_rule(set, "conv2d conv2d", "concat conv2d split"))
      << "convs sharing an input merge";
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

// "concat(2)@0 conv2d(3)+relu split(1)@1": the sorted operators of a side
// with their argument counts, fused activations and axes.
std::string signature(const RuleSide& side) {
  std::vector<std::string> ops;
  for (const RuleNode& n : side.nodes) {
    std::string s = std::string(op_name(n.op)) + "(" + std::to_string(n.args.size()) + ")";
    for (const PatternAttr& a : n.attrs) {
      if (a.form != PatternAttr::Form::kValue) continue;
      if (a.key == AttrKey::act && std::get<Act>(a.value) != Act::kNone)
        s += std::string("+") + act_name(std::get<Act>(a.value));
      if (a.key == AttrKey::axis) s += "@" + std::to_string(std::get<int64_t>(a.value));
    }
    ops.push_back(s);
  }
  std::sort(ops.begin(), ops.end());
  std::string s;
  for (const std::string& o : ops) s += (s.empty() ? "" : " ") + o;
  return s;
}

// A rule with these sides (either way round) for which `also` holds.
const Rule* find_rule(
    const RuleSet& set, const std::string& one, const std::string& other,
    const std::function<bool(const Rule&)>& also = [](const Rule&) { return true; }) {
  for (const Rule& r : set.rules) {
    std::string s = signature(r.source), t = signature(r.target);
    if (((s == one && t == other) || (s == other && t == one)) && also(r)) return &r;
  }
  return nullptr;
}

// The rule reads a conv weight with a KxK kernel (rank 4, not the 5x5 image).
std::function<bool(const Rule&)> kernel(int64_t k) {
  return [k](const Rule& r) {
    return std::any_of(r.inputs.begin(), r.inputs.end(), [k](const RuleVar& v) {
      const Shape& s = v.type.shape;
      return s.rank() == 4 && s[2] == k && s[3] == k && s[2] != 5;
    });
  };
}

// The two-operator side's operators read one input.
bool merges_one_input(const Rule& r) {
  const RuleSide& two = r.source.nodes.size() == 2 ? r.source : r.target;
  return two.nodes.size() == 2 && two.nodes[0].args[0] == two.nodes[1].args[0];
}

void expect_verified(const Rule* r, const std::string& what) {
  ASSERT_NE(r, nullptr) << what << ": no such rule";
  EXPECT_EQ(r->status.kind, RuleStatus::Kind::kVerified) << what << ": " << r->name;
}

// taso.ops lifts its rules over rank, axis and permutation: the layout laws
// a real model's 4-D tensors need are verified copies in both files (an
// elementwise operator moves through a transpose by any permutation,
// transposes by ?p and inv(?p) cancel, a split undoes a concat on any axis,
// relus of a concat's pieces are a relu of the concat), each at ranks 2..4.
void expect_lifted_layout_rules(const RuleSet& set) {
  auto lifted = [](const std::string& param) {
    return [param](const Rule& r) {
      return r.name.ends_with("_lifted") && r.ranks.lo == 2 && r.ranks.hi == 4 &&
             std::any_of(r.params.begin(), r.params.end(),
                         [&](const RuleParam& p) { return p.name == param; });
    };
  };
  expect_verified(find_rule(set, "relu(1) transpose(1)", "relu(1) transpose(1)", lifted("p")),
                  "relu then transpose by ?p is transpose by ?p then relu");
  expect_verified(find_rule(set, "transpose(1) transpose(1)", "", lifted("p")),
                  "transposes by ?p and inv(?p) cancel");
  expect_verified(find_rule(set, "concat(2) split(1)", "", lifted("a")),
                  "split on axis ?a undoes a concat on it");
  expect_verified(find_rule(set, "concat(2) relu(1) split(1)", "relu(1) relu(1)", lifted("a")),
                  "relus of a concat's pieces are a relu of the concat, on axis ?a");
}

TEST(GeneratedRules, TasoFilesHoldLiftedLayoutRules) {
  expect_lifted_layout_rules(load("substitutions/taso_n3.rules"));
  expect_lifted_layout_rules(load("substitutions/taso_n4.rules"));
}

TEST(GeneratedRules, BiasN4ParsesWithMatchingCounts) {
  RuleSet set = load("substitutions/bias_n4.rules");
  check_header(set, "bias");
  EXPECT_NE(set.header[0].find("max-ops: 4"), std::string::npos);
}

// The merges the optimizer needs on real models, from the biased operator
// set alone: fused relu, parallel biased convs (through an enlarged 1x1
// kernel too), and rank-3 projections of one input.
TEST(GeneratedRules, BiasN4HoldsTheClassicMergesWithBiases) {
  RuleSet set = load("substitutions/bias_n4.rules");
  for (int64_t k : {3, 1})
    expect_verified(find_rule(set, "conv2d(3) relu(1)", "conv2d(3)+relu", kernel(k)),
                    "conv then relu is fused conv, " + std::to_string(k) + "x" + std::to_string(k));
  const std::string merged = "concat(2)@0 concat(2)@0 conv2d(3)";
  expect_verified(find_rule(set, "conv2d(3) conv2d(3)", merged + " split(1)@1", merges_one_input),
                  "biased convs on one input merge");
  expect_verified(find_rule(set, "conv2d(3)+relu conv2d(3)+relu", merged + "+relu split(1)@1",
                            merges_one_input),
                  "biased convs with relu on one input merge");
  expect_verified(find_rule(set, "conv2d(3)", "conv2d(3) enlarge(1)", kernel(1)),
                  "a biased 1x1 conv is the 3x3 conv of its enlarged kernel");
  expect_verified(
      find_rule(set, "matmul(2) matmul(2)", "concat(2)@1 matmul(2) split(1)@2", merges_one_input),
      "rank-3 matmuls on one input merge");
}

// The lifted fusion: stride, padding, dilation and groups are parameters,
// so strided, unpadded and grouped convs of real models fuse too. The
// copies of the 3x3 and the 1x1 fusion are one rule up to example types
// (the kernel is the weight's shape), written once, after the 3x3 one.
TEST(GeneratedRules, BiasN4HoldsTheLiftedFusion) {
  RuleSet set = load("substitutions/bias_n4.rules");
  auto lifted = [](const Rule& r) {
    std::vector<std::string> names;
    for (const RuleParam& p : r.params) names.push_back(p.name);
    std::sort(names.begin(), names.end());
    return names == std::vector<std::string>{"d", "g", "p", "s"};
  };
  const Rule* r = find_rule(set, "conv2d(3) relu(1)", "conv2d(3)+relu",
                            [&](const Rule& r) { return kernel(3)(r) && lifted(r); });
  expect_verified(r, "lifted conv then relu");
  if (r) {
    EXPECT_TRUE(r->name.ends_with("_lifted")) << r->name;
  }
  EXPECT_EQ(find_rule(set, "conv2d(3) relu(1)", "conv2d(3)+relu",
                      [&](const Rule& r) { return kernel(1)(r) && lifted(r); }),
            nullptr)
      << "the 1x1 fusion's copy repeats the 3x3 one's";
}

TEST(GeneratedRules, LinearBiasN5ParsesWithMatchingCounts) {
  RuleSet set = load("substitutions/linear_bias_n5.rules");
  check_header(set, "linear_bias");
  EXPECT_NE(set.header[0].find("max-ops: 5"), std::string::npos);
}

// Two biased projections of one input merge into one matmul on concatenated
// weights plus concatenated biases (composed, BERT's three Q/K/V).
TEST(GeneratedRules, LinearBiasN5MergesBiasedProjections) {
  RuleSet set = load("substitutions/linear_bias_n5.rules");
  expect_verified(find_rule(set, "add(2) add(2) matmul(2) matmul(2)",
                            "add(2) concat(2)@0 concat(2)@1 matmul(2) split(1)@2",
                            [](const Rule& r) {
                              const RuleSide& four =
                                  r.source.nodes.size() == 4 ? r.source : r.target;
                              std::vector<RuleRef> x;
                              for (const RuleNode& n : four.nodes)
                                if (n.op == Op::Matmul) x.push_back(n.args[0]);
                              return x.size() == 2 && x[0] == x[1];
                            }),
                  "biased projections of one input merge");
}

}  // namespace
}  // namespace tso
