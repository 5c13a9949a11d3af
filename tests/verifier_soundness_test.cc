// The soundness net under the verifier: every rule a committed rule file
// marks `verified` is run through the reference executor, both sides, at
// least three shape instantiations at which it applies (found by
// seeded random perturbation of its example types, verifier/numeric.h), in
// double, and the
// sides must agree within 1e-9 relative error (core/ops.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
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
      std::vector<verifier::Instance> found =
          verifier::perturbed_instances(rule, kInstantiations, kAttempts, rng);
      for (const verifier::Instance& inst : found) {
        Expected<double> err = verifier::compare_graphs(inst.source, inst.target, rng);
        ASSERT_TRUE(err.ok()) << path << ": rule " << rule.name << " at" << inst.shapes << ": "
                              << err.error().message;
        EXPECT_LE(*err, verifier::kDoubleTolerance)
            << path << ": verified rule " << rule.name << " is false at" << inst.shapes
            << " (relative error " << *err << ")\n"
            << print_rule(rule);
      }
      EXPECT_GE(int(found.size()), kInstantiations)
          << path << ": rule " << rule.name << ": only " << found.size()
          << " valid shape instantiations found";
      ++checked;
    }
  }
  EXPECT_GT(files, 0);
  std::printf("checked %d verified rules in %d rule files\n", checked, files);
}

}  // namespace
}  // namespace tso
