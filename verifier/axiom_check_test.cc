// The axiom tests: every shipped axiom holds on the reference executor at its
// test values, and planted wrong axioms are rejected.
#include "verifier/axiom_check.h"

#include <gtest/gtest.h>

namespace tso::verifier {
namespace {

std::vector<AxiomTestResult> check(const specs::SpecSource& src) {
  z3::context ctx;
  specs::OpFunctions fns(ctx);
  Expected<std::vector<specs::Axiom>> axioms = specs::parse_axioms(src, fns);
  EXPECT_TRUE(axioms.ok()) << axioms.error().message;
  if (!axioms.ok()) return {};
  return check_axioms(*axioms, fns);
}

TEST(AxiomCheck, ShippedAxiomsHold) {
  Expected<specs::SpecSource> src = specs::read_specs(specs::default_specs_dir());
  ASSERT_TRUE(src.ok()) << src.error().message;
  std::vector<AxiomTestResult> results = check(*src);
  EXPECT_GT(results.size(), 60u);
  for (const AxiomTestResult& r : results)
    EXPECT_TRUE(r.passed) << r.where << ": " << r.axiom << ": " << r.message;
}

// TASO's grouped-convolution axiom lacks the condition that both weights have
// the same number of output channels: with C_out = [1,3] the groups cut the
// stacked weight elsewhere.
TEST(AxiomCheck, RejectsTasoGroupedConvolution) {
  std::string helpers = "(define-fun ones2 () (Seq Int) (seq.++ (seq.unit 1) (seq.unit 1)))\n";
  std::string text =
      helpers +
      "; axiom taso-grouped\n"
      "; test c=4 h=2 n0=2 n1=2 x=f32[1,4,5,5] w1=f32[2,2,3,3] w2=f32[2,2,3,3]\n"
      "; test c=4 h=2 n0=1 n1=3 x=f32[1,4,5,5] w1=f32[1,2,3,3] w2=f32[3,2,3,3]\n"
      "(assert (forall ((c Int) (h Int) (n0 Int) (n1 Int) (x T) (w1 T) (w2 T))\n"
      "  (=> (= c (* 2 h))\n"
      "      (= (concat 1 4 n0 n1 (conv2d ones2 (seq.++ (seq.unit 0) (seq.unit 0) (seq.unit 0)\n"
      "                                  (seq.unit 0) (seq.unit 0)) ones2 1 0 (split 1 c 0 h x) "
      "w1)\n"
      "                           (conv2d ones2 (seq.++ (seq.unit 0) (seq.unit 0) (seq.unit 0)\n"
      "                                  (seq.unit 0) (seq.unit 0)) ones2 1 0 (split 1 c h h x) "
      "w2))\n"
      "         (conv2d ones2 (seq.++ (seq.unit 0) (seq.unit 0) (seq.unit 0) (seq.unit 0)\n"
      "                 (seq.unit 0)) ones2 2 0 x (concat 0 4 n0 n1 w1 w2))))))\n";
  std::vector<AxiomTestResult> results = check(specs::specs_from_text({{"planted.smt2", text}}));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].passed) << results[0].message;  // right when the halves are equal
  EXPECT_FALSE(results[1].passed);
  EXPECT_EQ(results[1].where, "planted.smt2:4");
  EXPECT_NE(results[1].message.find("differ"), std::string::npos) << results[1].message;
}

// The shipped group split needs equal output channels per group: without
// that condition it fails at depthwise parts of multipliers 4 and 1 (the
// merged conv of 3 groups takes 2 channels per group); with it, such a test
// lies outside the guard.
TEST(AxiomCheck, GroupSplitNeedsEqualGroupWidths) {
  Expected<specs::SpecSource> shipped = specs::read_specs(specs::default_specs_dir());
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  std::string helpers, groups;
  for (const specs::SpecFile& f : shipped->files) {
    if (f.path.ends_with("00_helpers.smt2")) helpers = f.text;
    if (f.path.ends_with("32_conv_groups.smt2")) groups = f.text;
  }
  ASSERT_FALSE(helpers.empty());
  const std::string axiom = "; axiom conv-grouped-concat\n";
  size_t at = groups.find(axiom);
  ASSERT_NE(at, std::string::npos);
  const std::string uneven =
      "; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=0 g1=1 g2=2 n0=4 n1=2 x1=f32[1,1,5,5] "
      "x2=f32[1,2,5,5] w1=f32[4,1,3,3] w2=f32[2,1,3,3]\n";
  groups.insert(at + axiom.size(), uneven);
  auto failures = [&](const std::string& text) {
    std::vector<std::string> out;
    for (const AxiomTestResult& r :
         check(specs::specs_from_text({{"h.smt2", helpers}, {"g.smt2", text}})))
      if (!r.passed) out.push_back(r.axiom + ": " + r.message);
    return out;
  };
  std::vector<std::string> guarded = failures(groups);
  ASSERT_EQ(guarded.size(), 1u);
  EXPECT_NE(guarded[0].find("conv-grouped-concat: "), std::string::npos) << guarded[0];
  EXPECT_NE(guarded[0].find("guard"), std::string::npos) << guarded[0];

  const std::string widths = "(group_widths g1 g2 n0 n1)";
  size_t w = groups.find(widths, at);
  ASSERT_NE(w, std::string::npos);
  groups.replace(w, widths.size(), "true");
  std::vector<std::string> unguarded = failures(groups);
  ASSERT_EQ(unguarded.size(), 1u);
  EXPECT_NE(unguarded[0].find("differ"), std::string::npos) << unguarded[0];
}

std::string single_failure(const std::string& axiom_text) {
  std::vector<AxiomTestResult> results = check(specs::specs_from_text({{"w.smt2", axiom_text}}));
  EXPECT_EQ(results.size(), 1u);
  if (results.size() != 1) return "";
  EXPECT_FALSE(results[0].passed);
  return results[0].message;
}

TEST(AxiomCheck, RejectsOtherWrongAxioms) {
  // relu is not additive.
  EXPECT_NE(single_failure(
                "; axiom relu-add\n; test x=f32[3,4] y=f32[3,4]\n"
                "(assert (forall ((x T) (y T)) (= (relu (add x y)) (add (relu x) (relu y)))))\n")
                .find("differ"),
            std::string::npos);
  // (A B)^T is not A^T B^T.
  EXPECT_NE(single_failure("; axiom mm-t\n; test x=f32[3,3] y=f32[3,3]\n"
                           "(assert (forall ((x T) (y T)) (= (transpose (seq.++ (seq.unit 1) "
                           "(seq.unit 0)) (matmul 0 x y))\n"
                           "  (matmul 0 (transpose (seq.++ (seq.unit 1) (seq.unit 0)) x) "
                           "(transpose (seq.++ (seq.unit 1) (seq.unit 0)) y)))))\n")
                .find("differ"),
            std::string::npos);
  // Broadcasting makes ones-mul change the shape without its guard.
  EXPECT_NE(
      single_failure("; axiom ones\n; test x=f32[1,3] sh=[4,3]\n"
                     "(assert (forall ((x T) (sh (Seq Int))) (= (mul x (const_ones sh)) x)))\n")
          .find("types"),
      std::string::npos);
}

TEST(AxiomCheck, BadTestsAreReported) {
  // Concat extents that disagree with the shapes.
  EXPECT_NE(
      single_failure("; axiom c\n; test n0=2 n1=2 x=f32[1,3] y=f32[2,3]\n"
                     "(assert (forall ((n0 Int) (n1 Int) (x T) (y T))\n"
                     "  (= (relu (concat 0 2 n0 n1 x y)) (concat 0 2 n0 n1 (relu x) (relu y)))))\n")
          .find("concat parameters do not match"),
      std::string::npos);
  // A test that misses a variable.
  EXPECT_NE(single_failure("; axiom c\n; test x=f32[2]\n"
                           "(assert (forall ((x T) (y T)) (= (add x y) (add y x))))\n")
                .find("no value for 'y'"),
            std::string::npos);
  // A test outside the guard.
  EXPECT_NE(single_failure("; axiom c\n; test a=1 x=f32[2]\n"
                           "(assert (forall ((a Int) (x T)) (=> (= a 0) (= (relu x) (relu x)))))\n")
                .find("guard"),
            std::string::npos);
}

}  // namespace
}  // namespace tso::verifier
