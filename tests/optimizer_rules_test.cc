// The committed rule files on small graphs shaped like the real models'
// cases (issue 6, point 7): the search finds the rewrite by itself, and the
// optimized graph passes the optimizer's numerical check against the input
// (reference executor, random inputs and weights). Rules the verifier does
// not prove yet are used with allow_unverified, as `--allow-unverified` does.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/cost_model.h"
#include "optimizer/optimize.h"
#include "optimizer/rewrite_kind.h"
#include "optimizer/test_graphs.h"

namespace tso::opt {
namespace {

const std::string kSource = TSO_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::string text;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

class CommittedRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"/substitutions/handwritten.rules", "/substitutions/taso_n3.rules"}) {
      Expected<RuleSet> s = parse_rules(read_text(kSource + name), name);
      ASSERT_TRUE(s.ok()) << s.error().message;
      sets_.push_back(std::move(*s));
    }
    for (const RuleSet& s : sets_) {
      verified_.add(s);
      all_.add(s, {.allow_unverified = true});
    }
    handwritten_.add(sets_[0], {.allow_unverified = true});
    Expected<Device> d = load_device(kSource + "/optimizer/devices/h100.json");
    ASSERT_TRUE(d.ok()) << d.error().message;
    model_ = std::make_unique<AnalyticCost>(*d);
  }

  // Weights in [0.5, 1.5): positive, so batchnorm variances are valid.
  static Graph with_weights(const char* text) { return testing::with_weights(text, 0.5f, 1.5f); }

  OptimizeResult run(const char* text, const RuleIndex& rules) {
    Graph g = with_weights(text);
    Expected<OptimizeResult> r = optimize(g, rules, *model_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? std::move(*r) : OptimizeResult{};
  }

  static int count(const Graph& g, Op op) {
    int n = 0;
    for (const Node& node : g.nodes()) n += node.op == op;
    return n;
  }
  static int applied(const OptimizeResult& r, const std::string& rule) {
    int n = 0;
    for (const AppliedRewrite& a : r.search.applied) n += a.rule == rule;
    return n;
  }
  static std::string applied_rules(const OptimizeResult& r) {
    std::string out = "applied:";
    for (const AppliedRewrite& a : r.search.applied) out += " " + a.rule;
    return out;
  }

  std::vector<RuleSet> sets_;
  RuleIndex verified_, all_, handwritten_;
  std::unique_ptr<AnalyticCost> model_;
};

// NASNet's factorized reduction: two 1x1 convs, concatenated, batch-normed.
// (With taso_n3's unproved rules too, the search may instead merge the convs
// into one grouped conv and fold the batchnorm into that.)
TEST_F(CommittedRulesTest, BatchnormAfterConcatOfConvsFolds) {
  OptimizeResult r = run(R"(graph reduction {
    input x1: f32[1,16,14,14]
    input x2: f32[1,16,14,14]
    weight w1: f32[8,16,1,1]
    weight w2: f32[8,16,1,1]
    weight scale: f32[16]
    weight bias: f32[16]
    weight mean: f32[16]
    weight var: f32[16]
    %a = conv2d(x1, w1)
    %b = conv2d(x2, w2)
    %c = concat(%a, %b, axis=1)
    %n = batchnorm(%c, scale, bias, mean, var, epsilon=0.001)
    output y = %n
  })",
                         handwritten_);
  EXPECT_EQ(applied(r, "hw_fold_batchnorm_concat_conv"), 1) << applied_rules(r);
  EXPECT_EQ(count(r.graph, Op::BatchNorm), 0) << print(r.graph);
  EXPECT_TRUE(r.checked);
}

// The generated rules alone (verified only, as by default): the generator
// writes merges with the merged side as the source, so convolutions or
// matmuls on one input merge through the reverse direction; the biased
// operator sets (bias_n4, linear_bias_n5) give the forms real models have.
class GeneratedRulesTest : public CommittedRulesTest {
 protected:
  void SetUp() override {
    CommittedRulesTest::SetUp();
    for (const char* name :
         {"/substitutions/taso_n3.rules", "/substitutions/taso_n4.rules",
          "/substitutions/bias_n4.rules", "/substitutions/linear_bias_n5.rules"}) {
      Expected<RuleSet> s = parse_rules(read_text(kSource + name), name);
      ASSERT_TRUE(s.ok()) << s.error().message;
      generated_sets_.push_back(std::move(*s));
    }
    for (const RuleSet& s : generated_sets_) generated_.add(s);
  }
  static int reversed_applied(const OptimizeResult& r) {
    int n = 0;
    for (const AppliedRewrite& a : r.search.applied) n += a.rule.ends_with(" (reverse)");
    return n;
  }
  int kind(const OptimizeResult& r, RewriteKind k) const {
    return count_rewrite_kinds(r.search.applied, generated_)[static_cast<int>(k)];
  }
  std::vector<RuleSet> generated_sets_;
  RuleIndex generated_;
};

TEST_F(GeneratedRulesTest, TwoConvsOnOneInputMergeThroughAReverseRule) {
  OptimizeResult r = run(R"(graph two_convs {
    input x: f32[1,16,28,28]
    weight a: f32[16,16,3,3]
    weight b: f32[32,16,3,3]
    %a = conv2d(x, a, pad=[1,1,1,1])
    %b = conv2d(x, b, pad=[1,1,1,1])
    output ya = %a
    output yb = %b
  })",
                         generated_);
  EXPECT_EQ(count(r.graph, Op::Conv2d), 1) << print(r.graph);
  EXPECT_GE(reversed_applied(r), 1) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

TEST_F(GeneratedRulesTest, TwoMatmulsOnOneInputMergeThroughAReverseRule) {
  OptimizeResult r = run(R"(graph two_matmuls {
    input x: f32[1,64]
    weight a: f32[64,64]
    weight b: f32[64,32]
    %a = matmul(x, a)
    %b = matmul(x, b)
    output ya = %a
    output yb = %b
  })",
                         generated_);
  EXPECT_EQ(count(r.graph, Op::Matmul), 1) << print(r.graph);
  EXPECT_GE(reversed_applied(r), 1) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

// A conv with its bias (as ONNX's Conv), then relu: one conv with act=relu.
TEST_F(GeneratedRulesTest, BiasedConvThenReluFuses) {
  OptimizeResult r = run(R"(graph conv_relu {
    input x: f32[1,16,28,28]
    weight w: f32[32,16,3,3]
    weight b: f32[32]
    %c = conv2d(x, w, b, pad=[1,1,1,1])
    %r = relu(%c)
    output y = %r
  })",
                         generated_);
  EXPECT_EQ(count(r.graph, Op::Relu), 0) << print(r.graph);
  EXPECT_EQ(kind(r, RewriteKind::kFuseActivation), 1) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

// Inception's branches: three biased 1x1 convs (each then relu) read one
// input; they fuse and merge into one conv on concatenated weights.
TEST_F(GeneratedRulesTest, InceptionBranchesMerge) {
  OptimizeResult r = run(R"(graph branches {
    input x: f32[1,64,17,17]
    weight a: f32[32,64,1,1]
    weight ab: f32[32]
    weight b: f32[48,64,1,1]
    weight bb: f32[48]
    weight c: f32[16,64,1,1]
    weight cb: f32[16]
    %a = conv2d(x, a, ab)
    %ar = relu(%a)
    %b = conv2d(x, b, bb)
    %br = relu(%b)
    %c = conv2d(x, c, cb)
    %cr = relu(%c)
    output ya = %ar
    output yb = %br
    output yc = %cr
  })",
                         generated_);
  EXPECT_EQ(count(r.graph, Op::Conv2d), 1) << print(r.graph);
  EXPECT_EQ(count(r.graph, Op::Relu), 0) << print(r.graph);
  EXPECT_EQ(kind(r, RewriteKind::kMergeConvs), 2) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

// SqueezeNet's fire module: expand 1x1 and 3x3 on one input, concatenated.
// The 1x1 kernel is enlarged to 3x3, the two convs merge, and the split the
// merge leaves is undone by the concat (hw_concat_of_split).
TEST_F(GeneratedRulesTest, FireModuleExpandsMergeThroughAnEnlargedKernel) {
  RuleIndex rules;
  for (const RuleSet& s : generated_sets_) rules.add(s);
  rules.add(sets_[0]);
  OptimizeResult r = run(R"(graph fire {
    input x: f32[1,16,28,28]
    weight a: f32[32,16,1,1]
    weight ab: f32[32]
    weight b: f32[32,16,3,3]
    weight bb: f32[32]
    %a = conv2d(x, a, ab)
    %ar = relu(%a)
    %b = conv2d(x, b, bb, pad=[1,1,1,1])
    %br = relu(%b)
    %c = concat(%ar, %br, axis=1)
    output y = %c
  })",
                         rules);
  EXPECT_EQ(count(r.graph, Op::Conv2d), 1) << print(r.graph);
  EXPECT_EQ(count(r.graph, Op::Concat), 0) << print(r.graph);
  EXPECT_EQ(kind(r, RewriteKind::kMergeConvs), 1) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

// BERT's Q/K/V projections: a batched input, each projection a matmul then
// a bias add. Two-way merges of the matmuls and of the bias adds compose
// into one matmul and one add.
TEST_F(GeneratedRulesTest, BertProjectionsWithBiasMergeIntoOneMatmul) {
  OptimizeResult r = run(R"(graph bert_qkv {
    input x: f32[1,128,64]
    weight q: f32[64,64]
    weight k: f32[64,64]
    weight v: f32[64,64]
    weight bq: f32[64]
    weight bk: f32[64]
    weight bv: f32[64]
    %q = matmul(x, q)
    %qb = add(bq, %q)
    %k = matmul(x, k)
    %kb = add(bk, %k)
    %v = matmul(x, v)
    %vb = add(bv, %v)
    output yq = %qb
    output yk = %kb
    output yv = %vb
  })",
                         generated_);
  EXPECT_EQ(count(r.graph, Op::Matmul), 1) << print(r.graph);
  EXPECT_EQ(count(r.graph, Op::Add), 1) << print(r.graph);
  EXPECT_EQ(kind(r, RewriteKind::kMergeMatmuls), 2) << applied_rules(r);
  EXPECT_TRUE(r.checked);
}

// Counts kernels: every node that runs costs the same (weight-only nodes
// are folded and cost nothing), so a rewrite pays where it runs fewer
// kernels, as launches dominate small grouped convolutions.
class KernelCount : public CostModel {
 public:
  double node_us(const Node&, std::span<const TensorType>) const override { return 10; }
  std::string describe() const override { return "kernel count"; }
};

// ResNeXt's branches: two convolutions of equal width on two inputs,
// concatenated, are one grouped conv over the concatenated inputs (two
// kernels, the weights' concat folded, instead of three). With unequal
// widths the groups of the merged conv would cut the weights elsewhere, so
// the rule (where dim(w2,0) == dim(w1,0)) does not apply.
TEST_F(GeneratedRulesTest, ConvsOnTwoInputsMergeIntoAGroupedConvWhereWidthsAreEqual) {
  const char* text = R"(graph branches {
    input x1: f32[1,32,14,14]
    input x2: f32[1,32,14,14]
    weight w1: f32[32,32,3,3]
    weight w2: f32[%d,32,3,3]
    %%a = conv2d(x1, w1, pad=[1,1,1,1])
    %%b = conv2d(x2, w2, pad=[1,1,1,1])
    %%c = concat(%%a, %%b, axis=1)
    output y = %%c
  })";
  auto grouped = [](const Graph& g) {
    int n = 0;
    for (const Node& node : g.nodes())
      n += node.op == Op::Conv2d && node.attrs.i(AttrKey::groups) == 2;
    return n;
  };
  KernelCount model;
  for (int width : {32, 16}) {
    char buf[512];
    std::snprintf(buf, sizeof buf, text, width);
    Expected<OptimizeResult> r = optimize(with_weights(buf), generated_, model);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (width == 32) {
      EXPECT_TRUE(r->checked);  // the numerical check against the input graph
      EXPECT_EQ(count(r->graph, Op::Conv2d), 1) << print(r->graph);
      EXPECT_EQ(grouped(r->graph), 1) << print(r->graph);
      EXPECT_EQ(kind(*r, RewriteKind::kMergeConvs), 1) << applied_rules(*r);
    } else {
      EXPECT_EQ(count(r->graph, Op::Conv2d), 2) << print(r->graph);
      EXPECT_EQ(grouped(r->graph), 0) << print(r->graph);
      EXPECT_EQ(kind(*r, RewriteKind::kMergeConvs), 0) << applied_rules(*r);
    }
  }
}

}  // namespace
}  // namespace tso::opt
