#include "optimizer/rewrite_kind.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tso::opt {
namespace {

struct OpCounts {
  int batchnorm = 0, conv = 0, matmul = 0, activation = 0, enlarge = 0;
};

// Batchnorms count only on data computed by a conv or matmul of the side:
// a folding target applies batchnorm to weights (to scale them), which is not
// a batchnorm at run time.
OpCounts count(const RuleSide& side) {
  OpCounts c;
  std::vector<char> computed(side.nodes.size(), 0);  // a conv/matmul output, or computed from one
  auto from_computed = [&](const RuleRef& a) {
    return a.kind == RuleRef::Kind::kNode && computed[a.index] != 0;
  };
  for (size_t i = 0; i < side.nodes.size(); ++i) {
    const RuleNode& n = side.nodes[i];
    computed[i] = n.op == Op::Conv2d || n.op == Op::Matmul || n.op == Op::Gemm ||
                  std::any_of(n.args.begin(), n.args.end(), from_computed);
    switch (n.op) {
      case Op::BatchNorm:
        c.batchnorm += !n.args.empty() && from_computed(n.args[0]);
        break;
      case Op::Conv2d:
        ++c.conv;
        break;
      case Op::Matmul:
      case Op::Gemm:
        ++c.matmul;
        break;
      case Op::Relu:
      case Op::Sigmoid:
      case Op::Tanh:
      case Op::Gelu:
      case Op::Clip:
        ++c.activation;
        break;
      case Op::Enlarge:
        ++c.enlarge;
        break;
      default:
        break;
    }
  }
  return c;
}

constexpr std::array<std::string_view, kNumRewriteKinds> kNames = {
    "fold batchnorm",  "merge convolutions", "merge matmuls",
    "fuse activation", "enlarge kernel",     "other"};
constexpr std::array<std::string_view, kNumRewriteKinds> kKeys = {
    "fold_batchnorm",  "merge_convolutions", "merge_matmuls",
    "fuse_activation", "enlarge_kernel",     "other"};

}  // namespace

RewriteKind classify_rewrite(const Rule& rule) {
  const OpCounts s = count(rule.source), t = count(rule.target);
  if (t.batchnorm < s.batchnorm) return RewriteKind::kFoldBatchnorm;
  if (t.conv >= 1 && t.conv < s.conv) return RewriteKind::kMergeConvs;
  if (t.matmul >= 1 && t.matmul < s.matmul) return RewriteKind::kMergeMatmuls;
  if (t.activation < s.activation && t.conv + t.matmul >= 1) return RewriteKind::kFuseActivation;
  if (t.enlarge > s.enlarge) return RewriteKind::kEnlargeKernel;
  return RewriteKind::kOther;
}

std::vector<RewriteKind> classify_applied(const std::vector<AppliedRewrite>& applied,
                                          const RuleIndex& rules) {
  std::unordered_map<std::string_view, RewriteKind> kind;
  for (const CompiledRule& c : rules.rules()) kind.emplace(c.rule->name, classify_rewrite(*c.rule));
  std::vector<RewriteKind> out;
  for (const AppliedRewrite& a : applied) {
    auto it = kind.find(a.rule);
    out.push_back(it == kind.end() ? RewriteKind::kOther : it->second);
  }
  return out;
}

std::array<int, kNumRewriteKinds> count_rewrite_kinds(const std::vector<AppliedRewrite>& applied,
                                                      const RuleIndex& rules) {
  std::array<int, kNumRewriteKinds> n{};
  for (RewriteKind k : classify_applied(applied, rules)) ++n[static_cast<int>(k)];
  return n;
}

std::string_view rewrite_kind_name(RewriteKind k) { return kNames[static_cast<int>(k)]; }
std::string_view rewrite_kind_key(RewriteKind k) { return kKeys[static_cast<int>(k)]; }

}  // namespace tso::opt
