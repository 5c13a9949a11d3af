// What a rule does, in the terms of TASO's classic rewrites, for the report's
// counts: judged from the operators of its two sides as it is applied
// (source -> target), whatever its name or origin.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "optimizer/pattern.h"
#include "optimizer/search.h"
#include "substitutions/rules.h"

namespace tso::opt {

enum class RewriteKind : uint8_t {
  kFoldBatchnorm,   // fewer batchnorms on computed data (folded into the weights before them)
  kMergeConvs,      // fewer convolutions, at least one left
  kMergeMatmuls,    // fewer matmuls and gemms, at least one left
  kFuseActivation,  // fewer activation operators, a conv/matmul/gemm in the target
  kEnlargeKernel,   // an enlarge in the target only (a step towards a merge)
  kOther,
};
constexpr int kNumRewriteKinds = static_cast<int>(RewriteKind::kOther) + 1;

RewriteKind classify_rewrite(const Rule& rule);
// Per application, its kind; a rule `rules` does not hold is other.
std::vector<RewriteKind> classify_applied(const std::vector<AppliedRewrite>& applied,
                                          const RuleIndex& rules);
// Applications per kind (indexed by RewriteKind), as classify_applied counts them.
std::array<int, kNumRewriteKinds> count_rewrite_kinds(const std::vector<AppliedRewrite>& applied,
                                                      const RuleIndex& rules);
// "fold batchnorm", "merge convolutions", ...
std::string_view rewrite_kind_name(RewriteKind k);
// "fold_batchnorm", "merge_convolutions", ... (JSON keys)
std::string_view rewrite_kind_key(RewriteKind k);

}  // namespace tso::opt
