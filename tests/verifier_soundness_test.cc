// The soundness net under the verifier: every rule a committed rule file
// marks `verified` is run through the reference executor, both sides, at
// least three shape instantiations at which it applies (found by
// seeded random perturbation of its example types), in double, and the
// sides must agree within 1e-9 relative error (core/ops.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "substitutions/rules.h"
#include "verifier/numeric.h"

namespace tso {
namespace {

constexpr int kInstantiations = 3;
constexpr int kAttempts = 400;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A candidate binding: every extent of every variable changed by one of
// three seeded schemes (a common scale, a map of equal extents to equal new
// ones, independent nudges), so equalities and sums between extents often
// survive.
RuleBindings candidate(const Rule& rule, std::mt19937_64& rng) {
  RuleBindings b;
  int scheme = std::uniform_int_distribution<int>(0, 2)(rng);
  int64_t scale = std::uniform_int_distribution<int64_t>(2, 3)(rng);
  std::map<int64_t, int64_t> remap;
  auto pick = [&](int64_t v) -> int64_t {
    if (scheme == 0) return v * scale;
    if (scheme == 1) {
      auto it = remap.find(v);
      if (it == remap.end())
        it = remap.emplace(v, std::uniform_int_distribution<int64_t>(1, 7)(rng)).first;
      return it->second;
    }
    return std::max<int64_t>(1, v + std::uniform_int_distribution<int64_t>(-1, 2)(rng));
  };
  for (const RuleVar& v : rule.inputs) {
    TensorType t = v.type;
    for (int i = 0; i < t.shape.rank(); ++i)
      if (std::uniform_int_distribution<int>(0, 3)(rng) != 0 || scheme != 2)
        t.shape[i] = pick(t.shape[i]);
    b.types[v.name] = t;
  }
  return b;
}

// The optimizer applies a rule only where each target output has the type
// of the source output it replaces.
bool same_output_types(const Graph& a, const Graph& b) {
  for (size_t i = 0; i < a.outputs().size(); ++i)
    if (a.type(a.outputs()[i].ref) != b.type(b.outputs()[i].ref)) return false;
  return true;
}

std::string describe(const RuleBindings& b) {
  std::string s;
  for (const auto& [name, t] : b.types) s += " " + name + ": " + to_string(t);
  return s;
}

TEST(VerifierSoundness, VerifiedRulesAgreeOnTheReferenceExecutor) {
  int files = 0, checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator("substitutions")) {
    if (entry.path().extension() != ".rules") continue;
    std::string path = entry.path().string();
    Expected<RuleSet> set = parse_rules(read(path), path);
    ASSERT_TRUE(set.ok()) << set.error().message;
    ++files;
    for (const Rule& rule : set->rules) {
      if (rule.status.kind != RuleStatus::Kind::kVerified) continue;
      std::mt19937_64 rng(std::hash<std::string>{}(rule.name) ^ 0x5eed);
      std::set<std::string> seen;
      for (int attempt = 0; attempt < kAttempts && int(seen.size()) < kInstantiations; ++attempt) {
        RuleBindings b = candidate(rule, rng);
        std::string key = describe(b);
        if (seen.count(key)) continue;
        Expected<Graph> src = instantiate(rule, RuleSideKind::kSource, b);
        Expected<Graph> dst = instantiate(rule, RuleSideKind::kTarget, b);
        if (!src || !dst || !same_output_types(*src, *dst)) continue;
        seen.insert(key);
        Expected<double> err = verifier::compare_graphs(*src, *dst, rng);
        ASSERT_TRUE(err.ok()) << path << ": rule " << rule.name << " at" << key << ": "
                              << err.error().message;
        EXPECT_LE(*err, verifier::kDoubleTolerance)
            << path << ": verified rule " << rule.name << " is false at" << key
            << " (relative error " << *err << ")\n"
            << print_rule(rule);
      }
      EXPECT_GE(int(seen.size()), kInstantiations)
          << path << ": rule " << rule.name << ": only " << seen.size()
          << " valid shape instantiations found";
      ++checked;
    }
  }
  EXPECT_GT(files, 0);
  std::printf("checked %d verified rules in %d rule files\n", checked, files);
}

}  // namespace
}  // namespace tso
