// The optimizer's differential fuzzer (optimizer_diff.h) can fail: a false
// rule marked verified is caught by the search, the fold and the walk, with
// the same mismatch every time its seed runs; true rules fire and pass.
#include "tests/optimizer_diff.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "optimizer/defaults.h"

namespace tso::fuzz {
namespace {

const std::string kSource = TSO_SOURCE_DIR;
const std::string kDevice = kSource + "/optimizer/devices/h100.json";

// Drops the relu after a convolution: cheaper, so the search takes it, and
// wrong wherever the convolution has a negative value.
constexpr const char* kFalseRule = R"(# tso rules v1
rule false_drop_relu {
  origin handwritten
  status verified specs=0000000000000000
  input x: f32[1,4,8,8]
  input w: f32[4,4,3,3]
  source {
    %0 = conv2d(x, w, pad=same)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(x, w, pad=same)
    output %0
  }
}
)";

std::unique_ptr<OptimizerDiff> diff_with(const std::vector<std::string>& files) {
  Expected<std::unique_ptr<OptimizerDiff>> d = OptimizerDiff::create(files, kDevice);
  EXPECT_TRUE(d.ok()) << d.error().message;
  return d.ok() ? std::move(*d) : nullptr;
}

TEST(OptimizerDiff, CatchesAFalseRuleInEveryStageThatUsesIt) {
  std::string path = ::testing::TempDir() + "/false_rule.rules";
  std::ofstream(path) << kFalseRule;
  std::unique_ptr<OptimizerDiff> diff = diff_with({path});
  ASSERT_NE(diff, nullptr);
  std::map<std::string, int> stages;
  uint64_t caught = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    DiffOutcome o = diff->run(seed);
    for (const Mismatch& m : o.mismatches) ++stages[m.stage];
    if (!o.searched.empty() && !o.mismatches.empty() && caught == 0) caught = seed;
  }
  EXPECT_GT(stages["search"], 0);
  EXPECT_GT(stages["fold"], 0);
  EXPECT_GT(stages["walk"], 0);
  EXPECT_GT(stages["cpu optimized"], 0);
  EXPECT_EQ(stages["cpu original"], 0);
  ASSERT_NE(caught, 0u);
  // The seed reproduces it: the same rewrites and the same mismatches.
  DiffOutcome a = diff->run(caught), b = diff->run(caught);
  ASSERT_FALSE(a.mismatches.empty());
  ASSERT_EQ(a.mismatches.size(), b.mismatches.size());
  for (size_t i = 0; i < a.mismatches.size(); ++i)
    EXPECT_EQ(a.mismatches[i].detail, b.mismatches[i].detail);
  EXPECT_EQ(a.optimized, b.optimized);
  EXPECT_EQ(a.walk, b.walk);
  ASSERT_FALSE(a.searched.empty());
  EXPECT_EQ(a.searched[0].rule, "false_drop_relu");
}

TEST(OptimizerDiff, HandwrittenRulesFireAndAgree) {
  std::unique_ptr<OptimizerDiff> diff = diff_with({kSource + "/substitutions/handwritten.rules"});
  ASSERT_NE(diff, nullptr);
  int fired = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    DiffOutcome o = diff->run(seed);
    fired += static_cast<int>(o.searched.size() + o.walked.size());
    for (const Mismatch& m : o.mismatches)
      ADD_FAILURE() << "seed " << seed << " " << m.stage << ": " << m.detail;
    for (const Fired& f : o.searched) EXPECT_EQ(f.file, "handwritten") << f.rule;
  }
  EXPECT_GE(fired, 10);
}

// Outputs whose sums cancel carry f32 rounding of their terms' size, which
// the float reference carries too: not mismatches (seed 900348's output of
// 5e-4 on the CPU runtime, seed 911715's folded graph). The false rule
// above is caught all the same.
TEST(OptimizerDiff, IllConditionedOutputsAreBoundByTheirFloatRounding) {
  std::unique_ptr<OptimizerDiff> diff = diff_with(opt::default_rule_files());
  ASSERT_NE(diff, nullptr);
  for (uint64_t seed : {900348, 911715}) {
    const DiffOutcome o = diff->run(seed);
    for (const Mismatch& m : o.mismatches)
      ADD_FAILURE() << "seed " << seed << " " << m.stage << ": " << m.detail;
  }
}

}  // namespace
}  // namespace tso::fuzz
