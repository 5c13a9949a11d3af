// Rewrite kinds from the operators of a rule's sides, in the direction it is
// applied, and their counts over a search's applications.
#include "optimizer/rewrite_kind.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "optimizer/reverse_rule.h"
#include "optimizer/test_rules.h"

namespace tso::opt {
namespace {

std::string read_rules_text() {
  std::ifstream in(TSO_SOURCE_DIR "/substitutions/handwritten.rules");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class RewriteKindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<RuleSet> s = parse_rules(testing::kClassicRules, "classic.rules");
    ASSERT_TRUE(s.ok()) << s.error().message;
    set_ = std::move(*s);
  }
  const Rule& rule(const std::string& name) const {
    for (const Rule& r : set_.rules)
      if (r.name == name) return r;
    ADD_FAILURE() << "no rule " << name;
    return set_.rules.front();
  }
  RuleSet set_;
};

TEST_F(RewriteKindTest, ClassicRulesByTheirSides) {
  EXPECT_EQ(classify_rewrite(rule("t_fuse_conv_relu")), RewriteKind::kFuseActivation);
  EXPECT_EQ(classify_rewrite(rule("t_merge_conv")), RewriteKind::kMergeConvs);
  EXPECT_EQ(classify_rewrite(rule("t_merge_conv_enlarge")), RewriteKind::kMergeConvs);
  EXPECT_EQ(classify_rewrite(rule("t_merge_matmul3")), RewriteKind::kMergeMatmuls);
  EXPECT_EQ(classify_rewrite(rule("t_concat_of_split")), RewriteKind::kOther);
}

// Folding targets apply batchnorm to weights: only a batchnorm on a conv's
// output counts.
TEST(RewriteKind, BatchnormFoldingCountsBatchnormsOnComputedData) {
  Expected<RuleSet> s = parse_rules(read_rules_text(), "handwritten.rules");
  ASSERT_TRUE(s.ok()) << s.error().message;
  for (const Rule& r : s->rules)
    if (r.name.starts_with("hw_fold_batchnorm")) {
      EXPECT_EQ(classify_rewrite(r), RewriteKind::kFoldBatchnorm) << r.name;
    }
}

TEST_F(RewriteKindTest, AReverseIsJudgedInItsOwnDirection) {
  Expected<Rule> split = reverse_rule(rule("t_merge_matmul"));
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(classify_rewrite(*split), RewriteKind::kOther);  // one matmul becomes two
  Expected<Rule> merge = reverse_rule(*split);
  ASSERT_TRUE(merge.ok()) << merge.error().message;
  EXPECT_EQ(classify_rewrite(*merge), RewriteKind::kMergeMatmuls);
}

TEST_F(RewriteKindTest, CountsApplicationsByKindUnknownRulesAsOther) {
  RuleIndex index;
  index.add(set_);
  std::vector<AppliedRewrite> applied = {{"t_fuse_conv_relu", {}},
                                         {"t_merge_matmul", {}},
                                         {"t_fuse_conv_relu", {}},
                                         {"not a rule", {}}};
  std::array<int, kNumRewriteKinds> n = count_rewrite_kinds(applied, index);
  EXPECT_EQ(n[static_cast<int>(RewriteKind::kFuseActivation)], 2);
  EXPECT_EQ(n[static_cast<int>(RewriteKind::kMergeMatmuls)], 1);
  EXPECT_EQ(n[static_cast<int>(RewriteKind::kOther)], 1);
  EXPECT_EQ(rewrite_kind_name(RewriteKind::kMergeConvs), "merge convolutions");
  EXPECT_EQ(rewrite_kind_key(RewriteKind::kFoldBatchnorm), "fold_batchnorm");
}

}  // namespace
}  // namespace tso::opt
