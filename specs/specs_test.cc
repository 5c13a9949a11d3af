// The specs loader: the shipped axioms parse, the function table follows
// core/ops.def, and malformed files are rejected with FILE:LINE.
#include "specs/specs.h"

#include <gtest/gtest.h>

namespace tso::specs {
namespace {

TEST(OpFunctions, OneFunctionPerOperatorAndInputCount) {
  z3::context ctx;
  OpFunctions fns(ctx);
  for (const OpInfo& info : all_ops()) {
    // None for graph inputs and for operators with a text attribute (opaque's
    // op_type, cast's element type, grid_sample's modes), which no axiom or
    // rule mentions.
    if (info.op == Op::Input || info.op == Op::Weight || info.op == Op::Opaque ||
        info.op == Op::Cast || info.op == Op::GridSample) {
      EXPECT_EQ(fns.find(info.op, info.min_inputs), nullptr) << info.name;
      continue;
    }
    const OpFunction* f = fns.find(info.op, info.op == Op::Concat ? 2 : info.min_inputs);
    ASSERT_NE(f, nullptr) << info.name;
    EXPECT_EQ(f->name, info.name);
  }
  const OpFunction* conv = fns.find(Op::Conv2d, 3);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "conv2d.3");
  // stride pad dilation groups act, then x w b.
  EXPECT_EQ(conv->decl.arity(), 8u);
  // The fused clip: stride pad dilation groups min max, then x w b.
  const OpFunction* conv_clip = fns.find(Op::Conv2d, 3, true);
  ASSERT_NE(conv_clip, nullptr);
  EXPECT_EQ(conv_clip->name, "conv2d_clip.3");
  EXPECT_EQ(conv_clip->decl.arity(), 9u);
  EXPECT_EQ(conv_clip->decl.domain(4).sort_kind(), Z3_REAL_SORT);
  EXPECT_EQ(fns.find("matmul_clip")->decl.arity(), 4u);  // min max x y
  EXPECT_EQ(fns.find("gemm_clip.3")->decl.arity(), 9u);  // alpha beta ta tb min max a b c
  EXPECT_EQ(fns.find(Op::Relu, 1, true), nullptr);
  const OpFunction* split = fns.find("split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->decl.arity(), 5u);  // axis total offset length x
  EXPECT_EQ(fns.find("concat")->decl.arity(), 6u);  // axis rank n0 n1 x y
}

TEST(Specs, ShippedAxiomsParse) {
  Expected<SpecSource> src = read_specs(default_specs_dir());
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ(src->hash.size(), 16u);
  z3::context ctx;
  OpFunctions fns(ctx);
  Expected<std::vector<Axiom>> axioms = parse_axioms(*src, fns);
  ASSERT_TRUE(axioms.ok()) << axioms.error().message;
  EXPECT_GT(axioms->size(), 40u);
  for (const Axiom& a : *axioms) {
    EXPECT_FALSE(a.tests.empty()) << a.name;
    EXPECT_TRUE(a.formula.is_quantifier()) << a.name;
  }
  std::set<std::string> specified = specified_functions(*axioms);
  for (const char* op :
       {"conv2d",      "matmul",      "add",           "mul",         "smul",
        "relu",        "sigmoid",     "tanh",          "gelu",        "clip",
        "div",         "conv2d_clip", "conv2d_clip.3", "matmul_clip", "gemm_clip",
        "gemm_clip.3", "concat",      "split",         "transpose",   "avgpool",
        "maxpool",     "enlarge",     "const_ones",    "const_eye",   "const_eye_conv"})
    EXPECT_TRUE(specified.count(op)) << op;
  for (const char* op : {"softmax", "isnan", "where", "update_slice"})
    EXPECT_FALSE(specified.count(op)) << op;
}

TEST(Specs, HashFollowsTheText) {
  SpecSource a = specs_from_text({{"a.smt2", "; x\n"}});
  SpecSource b = specs_from_text({{"a.smt2", "; y\n"}});
  EXPECT_NE(a.hash, b.hash);
  EXPECT_EQ(a.hash, specs_from_text({{"a.smt2", "; x\n"}}).hash);
}

std::string parse_error(std::vector<SpecFile> files) {
  z3::context ctx;
  OpFunctions fns(ctx);
  Expected<std::vector<Axiom>> axioms = parse_axioms(specs_from_text(std::move(files)), fns);
  EXPECT_FALSE(axioms.ok());
  return axioms.ok() ? "" : axioms.error().message;
}

TEST(Specs, MalformedSmtLibNamesFileAndLine) {
  std::string good = "; axiom a\n; test x=f32[2]\n(assert (forall ((x T)) (= (relu x) (relu x))))\n";
  std::string bad = "; axiom b\n; test x=f32[2]\n(assert (forall ((x T)) (= (relu x) (relux x))))\n";
  std::string msg = parse_error({{"one.smt2", good}, {"two.smt2", bad}});
  EXPECT_NE(msg.find("two.smt2:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("relux"), std::string::npos) << msg;
}

TEST(Specs, StructureErrors) {
  EXPECT_NE(parse_error({{"f.smt2", "(assert true)\n"}}).find("f.smt2:1: assertion without"),
            std::string::npos);
  EXPECT_NE(parse_error({{"f.smt2", "; axiom a\n(assert true)\n"}}).find("f.smt2:2: axiom 'a' "
                                                                          "has no tests"),
            std::string::npos);
  EXPECT_NE(parse_error({{"f.smt2", "; axiom a\n; test x=f33[2]\n(assert true)\n"}})
                .find("f.smt2:2: bad tensor type 'f33[2]'"),
            std::string::npos);
  EXPECT_NE(parse_error({{"f.smt2", "; axiom a\n; test x=1\n(assert true)\n"
                                    "; axiom a\n; test x=1\n(assert true)\n"}})
                .find("f.smt2:6: axiom 'a' is defined twice"),
            std::string::npos);
}

}  // namespace
}  // namespace tso::specs
