#include "core/shape_inference.h"

#include <gtest/gtest.h>

#include <climits>
#include <limits>
#include <string>
#include <vector>

namespace tso {
namespace {

using Ints = std::vector<int64_t>;

TensorType f32(std::initializer_list<int64_t> dims) { return {DType::kF32, Shape(dims)}; }
TensorType f64(std::initializer_list<int64_t> dims) { return {DType::kF64, Shape(dims)}; }
AttrValue I(int64_t v) { return v; }
AttrValue V(Ints v) { return v; }
AttrValue P(std::array<int64_t, 4> pads) { return Padding{Padding::kExplicit, pads}; }
const AttrValue kSame = Padding{Padding::kSame, {}};

Attrs attrs(std::initializer_list<std::pair<AttrKey, AttrValue>> entries) {
  Attrs a;
  for (const auto& [k, v] : entries) a.set(k, v);
  return a;
}

// The inferred types printed, "(t0, t1)" for several outputs, or "error: ..."
// with the message. `out` receives the completed, normalized attributes.
std::string infer(Op op, std::vector<TensorType> in, Attrs a = {}, Attrs* out = nullptr) {
  Expected<std::vector<TensorType>> r = infer_types(op, &a, in);
  if (out) *out = a;
  if (!r.ok()) return "error: " + r.error().message;
  if (r->size() == 1) return to_string(r->front());
  std::string s = "(";
  for (size_t i = 0; i < r->size(); ++i) s += (i ? ", " : "") + to_string((*r)[i]);
  return s + ")";
}

// Asserts an inference error that mentions every fragment (shapes above all).
void expect_error(const std::string& got, std::initializer_list<std::string> fragments) {
  ASSERT_EQ(got.rfind("error: ", 0), 0u) << "expected an error, got " << got;
  for (const std::string& f : fragments)
    EXPECT_NE(got.find(f), std::string::npos) << "'" << f << "' missing from: " << got;
}

// ----------------------------------------------------------------- attributes

TEST(CompleteAttrs, FillsDefaults) {
  Attrs a;
  ASSERT_TRUE(complete_attrs(Op::Conv2d, &a).ok());
  EXPECT_EQ(a.ints(AttrKey::stride), (Ints{1, 1}));
  EXPECT_EQ(a.pad(AttrKey::pad).mode, Padding::kValid);
  EXPECT_EQ(a.i(AttrKey::groups), 1);
  EXPECT_EQ(a.act(AttrKey::act), Act::kNone);
  EXPECT_EQ(a.entries().size(), 7u);  // stride pad dilation groups act min max
  Attrs c = attrs({{AttrKey::max, 6.0}});
  ASSERT_TRUE(complete_attrs(Op::Clip, &c).ok());
  EXPECT_EQ(c.f(AttrKey::max), 6.0);
  EXPECT_LT(c.f(AttrKey::min), -1e300);
}

TEST(CompleteAttrs, RejectsUnknownWrongTypedAndMissing) {
  Attrs a = attrs({{AttrKey::axis, I(1)}});
  Status s = complete_attrs(Op::Add, &a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "add: does not take attribute 'axis'");
  Attrs b = attrs({{AttrKey::axis, V({1})}});
  s = complete_attrs(Op::Concat, &b);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "concat: attribute 'axis' must be Int, got [1]");
  Attrs c;
  s = complete_attrs(Op::AvgPool, &c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "avgpool: missing required attribute 'kernel'");
}

TEST(InferTypes, ChecksArity) {
  EXPECT_EQ(infer(Op::Add, {f32({2})}), "error: add: takes 2 inputs, got 1");
  expect_error(infer(Op::Gemm, {f32({2, 2})}), {"takes 2 to 3 inputs, got 1"});
  expect_error(infer(Op::Concat, {}, attrs({{AttrKey::axis, I(0)}})), {"1 or more"});
}

// -------------------------------------------------------------------- sources

TEST(Sources, ShapeFromAttribute) {
  EXPECT_EQ(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({2, 3})}})), "f32[2,3]");
  EXPECT_EQ(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({})}})), "f32[]");
  EXPECT_EQ(infer(Op::ConstEye, {}, attrs({{AttrKey::shape, V({3, 3})}})), "f32[3,3]");
  EXPECT_EQ(infer(Op::ConstEyeConv, {}, attrs({{AttrKey::shape, V({4, 4, 3, 1})}})),
            "f32[4,4,3,1]");
  EXPECT_EQ(infer(Op::ConstPool, {}, attrs({{AttrKey::shape, V({4, 1, 3, 3})}})),
            "f32[4,1,3,3]");
}

TEST(Sources, RejectsBadShapes) {
  expect_error(infer(Op::ConstEye, {}, attrs({{AttrKey::shape, V({2, 3})}})),
               {"const_eye: shape [2,3] must be [n,n]"});
  expect_error(infer(Op::ConstEyeConv, {}, attrs({{AttrKey::shape, V({4, 4, 2, 3})}})),
               {"[4,4,2,3]", "odd"});
  expect_error(infer(Op::ConstEyeConv, {}, attrs({{AttrKey::shape, V({4, 3, 3, 3})}})),
               {"[4,3,3,3]"});
  expect_error(infer(Op::ConstPool, {}, attrs({{AttrKey::shape, V({4, 2, 3, 3})}})),
               {"[4,2,3,3]", "[c,1,kh,kw]"});
  expect_error(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({2, -1})}})), {"[2,-1]"});
  expect_error(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({1, 1, 1, 1, 1, 1, 1, 1, 1})}})),
               {"exceeds rank 8"});
  expect_error(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({1LL << 40, 1LL << 40})}})),
               {"not a valid tensor shape"});
  expect_error(infer(Op::ConstOnes, {}), {"missing required attribute 'shape'"});
}

// ---------------------------------------------------------------- elementwise

TEST(Elementwise, BinaryBroadcasts) {
  EXPECT_EQ(infer(Op::Add, {f32({2, 3}), f32({3})}), "f32[2,3]");
  EXPECT_EQ(infer(Op::Mul, {f32({4, 1}), f32({1, 5})}), "f32[4,5]");
  EXPECT_EQ(infer(Op::Sub, {f32({}), f32({2, 2})}), "f32[2,2]");
  EXPECT_EQ(infer(Op::Div, {f32({7, 1, 3}), f32({2, 1})}), "f32[7,2,3]");
  EXPECT_EQ(infer(Op::Pow, {f64({2}), f64({2})}), "f64[2]");
}

TEST(Elementwise, BinaryErrors) {
  EXPECT_EQ(infer(Op::Add, {f32({2, 3}), f32({4, 3})}),
            "error: add: shapes f32[2,3] and f32[4,3] do not broadcast");
  expect_error(infer(Op::Mul, {f32({2}), f64({2})}), {"f32[2]", "f64[2]", "differ"});
}

TEST(Elementwise, ScalarMul) {
  EXPECT_EQ(infer(Op::ScalarMul, {f32({2, 3}), f32({})}), "f32[2,3]");
  expect_error(infer(Op::ScalarMul, {f32({2, 3}), f32({1})}), {"f32[1]", "rank 0"});
}

TEST(Elementwise, UnaryKeepsType) {
  for (Op op : {Op::Relu, Op::Sigmoid, Op::Tanh, Op::Erf, Op::Gelu, Op::Sqrt, Op::Neg, Op::Exp,
                Op::Clip})
    EXPECT_EQ(infer(op, {f64({2, 3})}), "f64[2,3]") << op_name(op);
  expect_error(infer(Op::Clip, {f32({2})}, attrs({{AttrKey::min, 1.0}, {AttrKey::max, 0.0}})),
               {"min 1.0 exceeds max 0.0"});
}

TEST(IsNaN, GivesABoolMaskOfFloats) {
  EXPECT_EQ(infer(Op::IsNaN, {f32({1, 12, 4, 4})}), "bool[1,12,4,4]");
  EXPECT_EQ(infer(Op::IsNaN, {f64({})}), "bool[]");
  EXPECT_EQ(infer(Op::IsNaN, {{DType::kF16, Shape{3}}}), "bool[3]");
  EXPECT_EQ(infer(Op::IsNaN, {{DType::kI64, Shape{2}}}),
            "error: isnan: input i64[2] must be floating-point (f32, f16 or f64)");
  expect_error(infer(Op::IsNaN, {{DType::kBool, Shape{2}}}), {"bool[2]", "floating-point"});
  expect_error(infer(Op::IsNaN, {f32({2}), f32({2})}), {"takes 1 inputs, got 2"});
}

TEST(GatherElements, TakesTheIndicesShape) {
  const TensorType scores = f32({2, 12, 8, 16}), pos{DType::kI64, Shape{2, 12, 8, 8}};
  Attrs out;
  EXPECT_EQ(infer(Op::GatherElements, {scores, pos}, attrs({{AttrKey::axis, I(-1)}}), &out),
            "f32[2,12,8,8]");
  EXPECT_EQ(out.i(AttrKey::axis), 3);
  EXPECT_EQ(infer(Op::GatherElements, {f32({3, 4}), {DType::kI32, Shape{2, 9}}},
                  attrs({{AttrKey::axis, I(1)}})),
            "f32[2,9]");
  expect_error(infer(Op::GatherElements, {f32({3, 4}), {DType::kI64, Shape{4, 1}}},
                     attrs({{AttrKey::axis, I(1)}})),
               {"exceed data f32[3,4] along axis 0"});
  expect_error(infer(Op::GatherElements, {f32({3, 4}), {DType::kI64, Shape{3}}},
                     attrs({{AttrKey::axis, I(0)}})),
               {"differ in rank"});
  expect_error(infer(Op::GatherElements, {f32({3, 4}), f32({3, 4})}, attrs({{AttrKey::axis, I(0)}})),
               {"must be i64 or i32"});
}

TEST(Compare, GivesABroadcastBoolOfNumbers) {
  const TensorType ids{DType::kI64, Shape{2, 8}}, pad{DType::kI64, Shape{}};
  for (Op op : {Op::Equal, Op::Less, Op::Greater}) {
    EXPECT_EQ(infer(op, {ids, pad}), "bool[2,8]") << op_name(op);
    EXPECT_EQ(infer(op, {f32({3, 1}), f32({4})}), "bool[3,4]") << op_name(op);
  }
  expect_error(infer(Op::Equal, {ids, f32({})}), {"element types", "differ"});
  expect_error(infer(Op::Less, {f32({3}), f32({4})}), {"do not broadcast"});
  const TensorType mask{DType::kBool, Shape{2}};
  expect_error(infer(Op::Greater, {mask, mask}), {"compares numbers, not bool"});
}

TEST(Logic, TakesAndGivesBool) {
  const TensorType a{DType::kBool, Shape{2, 1}}, b{DType::kBool, Shape{3}};
  EXPECT_EQ(infer(Op::And, {a, b}), "bool[2,3]");
  EXPECT_EQ(infer(Op::Or, {a, b}), "bool[2,3]");
  EXPECT_EQ(infer(Op::Not, {a}), "bool[2,1]");
  expect_error(infer(Op::Not, {f32({2})}), {"f32[2]", "must be bool"});
  expect_error(infer(Op::And, {a, {DType::kI64, Shape{1}}}), {"i64[1]", "must be bool"});
}

TEST(CumSum, KeepsTheTypeAndNormalizesTheAxis) {
  Attrs a = attrs({{AttrKey::axis, I(-1)}});
  EXPECT_EQ(infer(Op::CumSum, {{DType::kI32, Shape{2, 8}}}, a), "i32[2,8]");
  Attrs normalized;
  EXPECT_EQ(infer(Op::CumSum, {f32({2, 8})}, a, &normalized), "f32[2,8]");
  EXPECT_EQ(normalized.i(AttrKey::axis), 1);
  expect_error(infer(Op::CumSum, {f32({2, 8})}, attrs({{AttrKey::axis, I(2)}})),
               {"axis 2 is out of range for f32[2,8]"});
  expect_error(infer(Op::CumSum, {f32({})}, attrs({{AttrKey::axis, I(0)}})), {"is a scalar"});
  expect_error(infer(Op::CumSum, {{DType::kBool, Shape{2}}}, attrs({{AttrKey::axis, I(0)}})),
               {"not bool"});
  expect_error(
      infer(Op::CumSum, {f32({2})}, attrs({{AttrKey::axis, I(0)}, {AttrKey::exclusive, I(2)}})),
      {"exclusive must be 0 or 1, got 2"});
}

TEST(ArgMax, GivesI64WithTheAxisKeptOrDropped) {
  Attrs a = attrs({{AttrKey::axis, I(-1)}});
  EXPECT_EQ(infer(Op::ArgMax, {{DType::kI32, Shape{2, 8}}}, a), "i64[2,1]");
  const Attrs dropped = attrs({{AttrKey::axis, I(0)}, {AttrKey::keepdims, I(0)}});
  EXPECT_EQ(infer(Op::ArgMax, {f32({2, 8})}, dropped), "i64[8]");
  expect_error(infer(Op::ArgMax, {{DType::kBool, Shape{2}}}, attrs({{AttrKey::axis, I(0)}})),
               {"compares numbers, not bool"});
  expect_error(infer(Op::ArgMax, {f32({})}, attrs({{AttrKey::axis, I(0)}})), {"is a scalar"});
  expect_error(infer(Op::ArgMax, {f32({2, 0})}, attrs({{AttrKey::axis, I(1)}})),
               {"has no element to pick along axis 1 of f32[2,0]"});
  expect_error(infer(Op::ArgMax, {f32({2})},
                     attrs({{AttrKey::axis, I(0)}, {AttrKey::select_last_index, I(2)}})),
               {"select_last_index must be 0 or 1, got 2"});
}

// quantize_linear takes its element type from the zero point; a scale and
// zero point of one value make the axis 0, whatever it was.
TEST(Quantize, TypesFollowTheZeroPointAndTheScaleIsOneOrOnePerIndexOfTheAxis) {
  const TensorType u8{DType::kU8, Shape{}}, i8c{DType::kI8, Shape{4}}, s1 = f32({}),
                   s4 = f32({4}), x = f32({2, 4, 3});
  Attrs a = attrs({{AttrKey::axis, I(7)}}), normalized;
  EXPECT_EQ(infer(Op::QuantizeLinear, {x, s1, u8}, a, &normalized), "u8[2,4,3]");
  EXPECT_EQ(normalized.i(AttrKey::axis), 0);
  EXPECT_EQ(infer(Op::QuantizeLinear, {x, s4, i8c}, attrs({{AttrKey::axis, I(-2)}})),
            "i8[2,4,3]");
  EXPECT_EQ(infer(Op::DequantizeLinear, {{DType::kI8, Shape{2, 4, 3}}, s4, i8c},
                  attrs({{AttrKey::axis, I(1)}})),
            "f32[2,4,3]");
  EXPECT_EQ(infer(Op::DequantizeLinear, {{DType::kI32, Shape{4}}, f32({1}), {DType::kI32, Shape{}}},
                  attrs({{AttrKey::axis, I(1)}})),
            "f32[4]");
  expect_error(infer(Op::QuantizeLinear, {x, s4, i8c}, attrs({{AttrKey::axis, I(2)}})),
               {"scale f32[4] is neither one value nor one per index of axis 2 of f32[2,4,3]"});
  expect_error(infer(Op::QuantizeLinear, {x, s4, u8}, attrs({{AttrKey::axis, I(1)}})),
               {"zero point u8[] and scale f32[4] differ in shape"});
  expect_error(infer(Op::QuantizeLinear, {x, s1, {DType::kI32, Shape{}}}, a),
               {"zero point i32[] must be u8 or i8"});
  expect_error(infer(Op::QuantizeLinear, {{DType::kI64, Shape{2}}, s1, u8}, a),
               {"quantizes f32, not i64[2]"});
  expect_error(infer(Op::DequantizeLinear, {x, s1, u8}, a),
               {"dequantizes u8, i8 or i32, not f32[2,4,3]"});
  expect_error(infer(Op::DequantizeLinear, {{DType::kI8, Shape{2}}, s1, u8}, a),
               {"element types of i8[2] and u8[] differ"});
  expect_error(infer(Op::DequantizeLinear, {{DType::kU8, Shape{2}}, {DType::kF16, Shape{}}, u8}, a),
               {"scale f16[] must be f32"});
}

TEST(TopK, GivesValuesAndI64IndicesWithKAlongTheAxis) {
  Attrs a = attrs({{AttrKey::axis, I(-1)}, {AttrKey::k, I(3)}});
  EXPECT_EQ(infer(Op::TopK, {f32({2, 8})}, a), "(f32[2,3], i64[2,3])");
  expect_error(infer(Op::TopK, {{DType::kI64, Shape{2, 8}}}, a),
               {"selects among floats, not i64[2,8]"});
  expect_error(infer(Op::TopK, {f32({})}, attrs({{AttrKey::axis, I(0)}, {AttrKey::k, I(1)}})),
               {"is a scalar"});
  expect_error(infer(Op::TopK, {f32({2, 8})}, attrs({{AttrKey::axis, I(1)}, {AttrKey::k, I(9)}})),
               {"k 9 is not between 1 and the extent of axis 1 of f32[2,8]"});
  expect_error(infer(Op::TopK, {f32({2, 8})}, attrs({{AttrKey::axis, I(0)}, {AttrKey::k, I(0)}})),
               {"k 0 is not between 1"});
  expect_error(infer(Op::TopK, {f32({2, 8})},
                     attrs({{AttrKey::axis, I(0)}, {AttrKey::k, I(1)}, {AttrKey::largest, I(2)}})),
               {"largest must be 0 or 1, got 2"});
}

TEST(Where, BroadcastsAllThree) {
  const TensorType mask{DType::kBool, Shape{1, 12, 4, 4}};
  EXPECT_EQ(infer(Op::Where, {mask, f32({1}), f32({1, 12, 4, 4})}), "f32[1,12,4,4]");
  EXPECT_EQ(infer(Op::Where, {{DType::kBool, Shape{3, 1, 1}}, f32({1, 4}), f32({5, 1})}),
            "f32[3,5,4]");
  EXPECT_EQ(
      infer(Op::Where, {{DType::kBool, Shape{}}, {DType::kI64, Shape{2}}, {DType::kI64, Shape{}}}),
      "i64[2]");
}

TEST(Where, Errors) {
  const TensorType mask{DType::kBool, Shape{2, 3}};
  EXPECT_EQ(infer(Op::Where, {f32({2, 3}), f32({2, 3}), f32({2, 3})}),
            "error: where: condition f32[2,3] must be bool");
  expect_error(infer(Op::Where, {mask, f32({2, 3}), f64({2, 3})}),
               {"f32[2,3]", "f64[2,3]", "differ"});
  EXPECT_EQ(infer(Op::Where, {mask, f32({4, 3}), f32({3})}),
            "error: where: shapes bool[2,3], f32[4,3] and f32[3] do not broadcast");
  expect_error(infer(Op::Where, {mask, f32({2, 1}), f32({2})}),
               {"bool[2,3]", "f32[2,1]", "f32[2]", "do not broadcast"});
  expect_error(infer(Op::Where, {mask, f32({2, 3})}), {"takes 3 inputs, got 2"});
}

// ------------------------------------------------------------- conv and pools

TEST(Conv2d, OutputShapes) {
  TensorType x = f32({1, 3, 8, 8}), w = f32({4, 3, 3, 3});
  EXPECT_EQ(infer(Op::Conv2d, {x, w}), "f32[1,4,6,6]");
  EXPECT_EQ(infer(Op::Conv2d, {x, w}, attrs({{AttrKey::pad, kSame}, {AttrKey::stride, V({2, 2})}})),
            "f32[1,4,4,4]");
  EXPECT_EQ(infer(Op::Conv2d, {f32({1, 3, 7, 7}), w},
                  attrs({{AttrKey::pad, kSame}, {AttrKey::stride, V({2, 1})}})),
            "f32[1,4,4,7]");
  // [top, left, bottom, right]: H gets 1 + 0, W gets 0 + 2.
  EXPECT_EQ(infer(Op::Conv2d, {x, w}, attrs({{AttrKey::pad, P({1, 0, 0, 2})}})),
            "f32[1,4,7,8]");
  EXPECT_EQ(infer(Op::Conv2d, {x, w}, attrs({{AttrKey::dilation, V({2, 1})}})), "f32[1,4,4,6]");
  EXPECT_EQ(infer(Op::Conv2d, {x, w, f32({4})}, attrs({{AttrKey::act, Act::kRelu}})),
            "f32[1,4,6,6]");
}

// A fused activation's bounds belong to act=clip, which needs a finite one.
TEST(FusedActivation, ClipBoundsBelongToClip) {
  const TensorType x = f32({1, 3, 8, 8}), w = f32({4, 3, 3, 3});
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(infer(Op::Conv2d, {x, w},
                  attrs({{AttrKey::act, Act::kClip}, {AttrKey::min, 0.0}, {AttrKey::max, 6.0}})),
            "f32[1,4,6,6]");
  EXPECT_EQ(infer(Op::Matmul, {f32({2, 3}), f32({3, 4})}, attrs({{AttrKey::act, Act::kGelu}})),
            "f32[2,4]");
  EXPECT_EQ(infer(Op::Gemm, {f32({2, 3}), f32({3, 4})},
                  attrs({{AttrKey::act, Act::kClip}, {AttrKey::max, 1.0}})),
            "f32[2,4]");
  EXPECT_EQ(infer(Op::Conv2d, {x, w}, attrs({{AttrKey::act, Act::kRelu}, {AttrKey::max, 6.0}})),
            "error: conv2d: min and max bound act=clip only, not act=relu");
  EXPECT_EQ(infer(Op::Matmul, {f32({2, 3}), f32({3, 4})}, attrs({{AttrKey::min, 0.0}})),
            "error: matmul: min and max bound act=clip only, not act=none");
  EXPECT_EQ(infer(Op::Conv2d, {x, w}, attrs({{AttrKey::act, Act::kClip}})),
            "error: conv2d: act=clip without a finite min or max is act=none");
  expect_error(infer(Op::Gemm, {f32({2, 3}), f32({3, 4})},
                     attrs({{AttrKey::act, Act::kClip}, {AttrKey::min, 6.0}, {AttrKey::max, 0.0}})),
               {"act=clip: min 6.0 exceeds max 0.0"});
  EXPECT_EQ(infer(Op::Conv2d, {x, w},
                  attrs({{AttrKey::act, Act::kClip}, {AttrKey::min, -inf}, {AttrKey::max, inf}})),
            "error: conv2d: act=clip without a finite min or max is act=none");
}

TEST(Conv2d, Groups) {
  EXPECT_EQ(infer(Op::Conv2d, {f32({1, 4, 8, 8}), f32({6, 2, 3, 3})},
                  attrs({{AttrKey::groups, I(2)}})),
            "f32[1,6,6,6]");
  EXPECT_EQ(infer(Op::Conv2d, {f32({2, 4, 5, 5}), f32({4, 1, 3, 3})},
                  attrs({{AttrKey::groups, I(4)}, {AttrKey::pad, kSame}})),
            "f32[2,4,5,5]");
}

TEST(Conv2d, Errors) {
  EXPECT_EQ(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f32({4, 2, 3, 3})}),
            "error: conv2d: input f32[1,3,8,8] has 3 channels but weight f32[4,2,3,3] expects 2 x "
            "groups(1)");
  expect_error(infer(Op::Conv2d, {f32({1, 4, 8, 8}), f32({3, 2, 3, 3})},
                     attrs({{AttrKey::groups, I(2)}})),
               {"f32[3,2,3,3]", "not divisible by groups(2)"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 2, 2}), f32({4, 3, 3, 3})}),
               {"f32[4,3,3,3]", "f32[1,3,2,2]", "does not fit"});
  expect_error(infer(Op::Conv2d, {f32({3, 8, 8}), f32({4, 3, 3, 3})}), {"f32[3,8,8]", "rank 4"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({3})}),
               {"bias f32[3]", "[4]"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})},
                     attrs({{AttrKey::stride, V({0, 1})}})),
               {"stride", "[0,1]"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})},
                     attrs({{AttrKey::groups, I(0)}})),
               {"groups must be >= 1"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})},
                     attrs({{AttrKey::pad, P({-1, 0, 0, 0})}})),
               {"[-1,0,0,0]"});
  expect_error(infer(Op::Conv2d, {f32({1, 3, 8, 8}), f64({4, 3, 3, 3})}), {"f64[4,3,3,3]"});
}

TEST(Pool, OutputShapes) {
  TensorType x = f32({1, 2, 7, 7});
  Attrs k3s2 = attrs({{AttrKey::kernel, V({3, 3})}, {AttrKey::stride, V({2, 2})}});
  EXPECT_EQ(infer(Op::MaxPool, {x}, k3s2), "f32[1,2,3,3]");
  EXPECT_EQ(infer(Op::MaxPool, {f32({1, 2, 8, 8})}, k3s2), "f32[1,2,3,3]");
  Attrs ceil = k3s2;
  ceil.set(AttrKey::ceil_mode, I(1));
  EXPECT_EQ(infer(Op::MaxPool, {f32({1, 2, 8, 8})}, ceil), "f32[1,2,4,4]");
  Attrs same = k3s2;
  same.set(AttrKey::pad, kSame);
  EXPECT_EQ(infer(Op::AvgPool, {x}, same), "f32[1,2,4,4]");
  // ONNX/PyTorch: a window starting in the right padding is dropped, so a 3x3
  // input with kernel 2, stride 2, pad 1 gives 2, not ceil(3/2) + 1 = 3.
  Attrs drop = attrs({{AttrKey::kernel, V({2, 2})},
                      {AttrKey::stride, V({2, 2})},
                      {AttrKey::pad, P({1, 1, 1, 1})},
                      {AttrKey::ceil_mode, I(1)}});
  EXPECT_EQ(infer(Op::AvgPool, {f32({1, 1, 3, 3})}, drop), "f32[1,1,2,2]");
}

TEST(Pool, Errors) {
  Attrs k3 = attrs({{AttrKey::kernel, V({3, 3})}});
  expect_error(infer(Op::MaxPool, {f32({1, 2, 2, 2})}, k3), {"[3,3]", "f32[1,2,2,2]"});
  expect_error(infer(Op::AvgPool, {f32({2, 2, 2})}, k3), {"f32[2,2,2]", "rank 4"});
  Attrs wide = k3;
  wide.set(AttrKey::pad, P({3, 0, 0, 0}));
  expect_error(infer(Op::MaxPool, {f32({1, 2, 8, 8})}, wide), {"[3,0,0,0]", "smaller"});
  Attrs flag = k3;
  flag.set(AttrKey::count_include_pad, I(2));
  expect_error(infer(Op::AvgPool, {f32({1, 2, 8, 8})}, flag), {"count_include_pad"});
  expect_error(infer(Op::MaxPool, {f32({1, 2, 8, 8})}, attrs({{AttrKey::kernel, V({3})}})),
               {"kernel must be two values", "[3]"});
}

TEST(GlobalAvgPool, KeepsBatchAndChannels) {
  EXPECT_EQ(infer(Op::GlobalAvgPool, {f32({2, 3, 7, 5})}), "f32[2,3,1,1]");
  expect_error(infer(Op::GlobalAvgPool, {f32({2, 3})}), {"f32[2,3]"});
}

TEST(Enlarge, PadsKernelSymmetrically) {
  Attrs k = attrs({{AttrKey::kernel, V({3, 5})}});
  EXPECT_EQ(infer(Op::Enlarge, {f32({4, 2, 1, 1})}, k), "f32[4,2,3,5]");
  EXPECT_EQ(infer(Op::Enlarge, {f32({4, 2, 3, 5})}, k), "f32[4,2,3,5]");
  expect_error(infer(Op::Enlarge, {f32({4, 2, 5, 5})}, k), {"[3,5]", "f32[4,2,5,5]"});
  expect_error(infer(Op::Enlarge, {f32({4, 2, 2, 1})}, k), {"even"});
  expect_error(infer(Op::Enlarge, {f32({4, 2, 3})}, k), {"f32[4,2,3]"});
}

// ------------------------------------------------------------- linear algebra

TEST(Matmul, BatchedAndBroadcast) {
  EXPECT_EQ(infer(Op::Matmul, {f32({2, 3}), f32({3, 4})}), "f32[2,4]");
  EXPECT_EQ(infer(Op::Matmul, {f32({5, 2, 3}), f32({3, 4})}), "f32[5,2,4]");
  EXPECT_EQ(infer(Op::Matmul, {f32({5, 1, 2, 3}), f32({4, 3, 6})}), "f32[5,4,2,6]");
  expect_error(infer(Op::Matmul, {f32({2, 3}), f32({4, 5})}), {"f32[2,3]", "f32[4,5]", "inner"});
  expect_error(infer(Op::Matmul, {f32({2, 2, 3}), f32({3, 3, 4})}),
               {"f32[2,2,3]", "f32[3,3,4]", "batch"});
  expect_error(infer(Op::Matmul, {f32({3}), f32({3, 4})}), {"f32[3]", "rank >= 2"});
}

TEST(Gemm, TransposesAndBias) {
  EXPECT_EQ(infer(Op::Gemm, {f32({2, 3}), f32({3, 4})}), "f32[2,4]");
  EXPECT_EQ(infer(Op::Gemm, {f32({3, 2}), f32({4, 3})},
                  attrs({{AttrKey::trans_a, I(1)}, {AttrKey::trans_b, I(1)}})),
            "f32[2,4]");
  for (auto c : {f32({4}), f32({2, 1}), f32({}), f32({2, 4})})
    EXPECT_EQ(infer(Op::Gemm, {f32({2, 3}), f32({3, 4}), c}), "f32[2,4]") << to_string(c);
  expect_error(infer(Op::Gemm, {f32({2, 3}), f32({3, 4}), f32({3})}), {"bias f32[3]", "[2,4]"});
  expect_error(infer(Op::Gemm, {f32({2, 3}), f32({3, 4}), f32({1, 2, 4})}), {"f32[1,2,4]"});
  expect_error(infer(Op::Gemm, {f32({2, 3}), f32({4, 3})}), {"f32[2,3]", "f32[4,3]"});
  expect_error(infer(Op::Gemm, {f32({2, 3, 1}), f32({3, 4})}), {"f32[2,3,1]", "rank 2"});
}

// ------------------------------------------------- normalization and reduction

TEST(BatchNorm, ParametersPerChannel) {
  TensorType c = f32({3});
  EXPECT_EQ(infer(Op::BatchNorm, {f32({2, 3, 4, 4}), c, c, c, c}), "f32[2,3,4,4]");
  expect_error(infer(Op::BatchNorm, {f32({2, 3, 4, 4}), c, f32({4}), c, c}),
               {"f32[4]", "[3]", "f32[2,3,4,4]"});
  expect_error(infer(Op::BatchNorm, {f32({3}), c, c, c, c}), {"f32[3]", "rank >= 2"});
}

TEST(LayerNorm, NormalizesTrailingAxes) {
  Attrs out;
  EXPECT_EQ(infer(Op::LayerNorm, {f32({2, 5, 8}), f32({8}), f32({8})},
                  attrs({{AttrKey::axis, I(-1)}}), &out),
            "f32[2,5,8]");
  EXPECT_EQ(out.i(AttrKey::axis), 2);
  EXPECT_EQ(infer(Op::LayerNorm, {f32({2, 5, 8}), f32({5, 8}), f32({1, 8})},
                  attrs({{AttrKey::axis, I(1)}})),
            "f32[2,5,8]");
  expect_error(infer(Op::LayerNorm, {f32({2, 5, 8}), f32({5}), f32({8})},
                     attrs({{AttrKey::axis, I(-1)}})),
               {"f32[5]", "[8]", "f32[2,5,8]"});
  expect_error(infer(Op::LayerNorm, {f32({2, 5, 8}), f32({8}), f32({8})},
                     attrs({{AttrKey::axis, I(3)}})),
               {"axis 3", "f32[2,5,8]"});
}

TEST(Softmax, NormalizesAxis) {
  Attrs out;
  EXPECT_EQ(infer(Op::Softmax, {f32({2, 3})}, attrs({{AttrKey::axis, I(-1)}}), &out), "f32[2,3]");
  EXPECT_EQ(out.i(AttrKey::axis), 1);
  expect_error(infer(Op::Softmax, {f32({2, 3})}, attrs({{AttrKey::axis, I(2)}})),
               {"axis 2 is out of range for f32[2,3]"});
}

TEST(ReduceMean, AxesAndKeepdims) {
  TensorType x = f32({2, 3, 4});
  EXPECT_EQ(infer(Op::ReduceMean, {x}, attrs({{AttrKey::axes, V({1})}})), "f32[2,1,4]");
  Attrs out;
  EXPECT_EQ(infer(Op::ReduceMean, {x}, attrs({{AttrKey::axes, V({-1, 0})}, {AttrKey::keepdims, I(0)}}),
                  &out),
            "f32[3]");
  EXPECT_EQ(out.ints(AttrKey::axes), (Ints{0, 2}));
  EXPECT_EQ(infer(Op::ReduceMean, {x}, attrs({{AttrKey::axes, V({})}, {AttrKey::keepdims, I(0)}}),
                  &out),
            "f32[]");
  EXPECT_EQ(out.ints(AttrKey::axes), (Ints{0, 1, 2}));
  expect_error(infer(Op::ReduceMean, {x}, attrs({{AttrKey::axes, V({1, -2})}})),
               {"repeat", "f32[2,3,4]"});
  expect_error(infer(Op::ReduceMean, {x}, attrs({{AttrKey::axes, V({3})}})), {"axis 3"});
}

// -------------------------------------------------------------- data movement

TEST(Gather, ReplacesTheAxisWithTheIndicesShape) {
  const TensorType ids{DType::kI64, Shape{1, 128}}, scalar{DType::kI64, Shape{}};
  Attrs out;
  EXPECT_EQ(infer(Op::Gather, {f32({30522, 768}), ids}, attrs({{AttrKey::axis, I(0)}})),
            "f32[1,128,768]");
  EXPECT_EQ(infer(Op::Gather, {f32({1, 197, 768}), scalar}, attrs({{AttrKey::axis, I(-2)}}), &out),
            "f32[1,768]");
  EXPECT_EQ(out.i(AttrKey::axis), 1);
  EXPECT_EQ(infer(Op::Gather, {{DType::kI64, Shape{4}}, {DType::kI32, Shape{2, 3}}},
                  attrs({{AttrKey::axis, I(0)}})),
            "i64[2,3]");
  EXPECT_EQ(infer(Op::Gather, {f32({5, 0}), {DType::kI64, Shape{0}}}, attrs({{AttrKey::axis, I(1)}})),
            "f32[5,0]");
}

TEST(Gather, Errors) {
  const TensorType ids{DType::kI64, Shape{3}};
  EXPECT_EQ(infer(Op::Gather, {f32({4, 2}), f32({3})}, attrs({{AttrKey::axis, I(0)}})),
            "error: gather: indices f32[3] must be i64 or i32");
  EXPECT_EQ(infer(Op::Gather, {f32({4, 2}), ids}, attrs({{AttrKey::axis, I(2)}})),
            "error: gather: axis 2 is out of range for f32[4,2]");
  expect_error(infer(Op::Gather, {f32({}), ids}, attrs({{AttrKey::axis, I(0)}})),
               {"cannot index a scalar f32[]"});
  expect_error(infer(Op::Gather, {f32({2, 0}), ids}, attrs({{AttrKey::axis, I(1)}})),
               {"i64[3]", "empty axis 1", "f32[2,0]"});
  expect_error(infer(Op::Gather, {f32({2, 2, 2, 2, 2, 2}), {DType::kI64, Shape{1, 1, 1, 1}}},
                     attrs({{AttrKey::axis, I(0)}})),
               {"exceed rank 8"});
  expect_error(infer(Op::Gather, {f32({4, 2}), ids}), {"missing required attribute 'axis'"});
}

TEST(Expand, BroadcastsWithTheShapeAndNormalizesIt) {
  const TensorType mask{DType::kI64, Shape{2, 1, 1, 8}};
  Attrs out;
  EXPECT_EQ(infer(Op::Expand, {mask}, attrs({{AttrKey::shape, V({2, 1, 8, 8})}}), &out),
            "i64[2,1,8,8]");
  EXPECT_EQ(infer(Op::Expand, {f32({3, 1})}, attrs({{AttrKey::shape, V({2, 1, 4})}}), &out),
            "f32[2,3,4]");
  EXPECT_EQ(out.ints(AttrKey::shape), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(infer(Op::Expand, {f32({3, 2})}, attrs({{AttrKey::shape, V({4, 2})}})),
            "error: expand: f32[3,2] does not broadcast to [4,2]");
  expect_error(infer(Op::Expand, {f32({3})}, attrs({{AttrKey::shape, V({-1, 3})}})), {"shape"});
}

TEST(Cast, ConvertsTheElementType) {
  const TensorType ids{DType::kI64, Shape{2, 8}};
  EXPECT_EQ(infer(Op::Cast, {ids}, attrs({{AttrKey::to, std::string("f32")}})), "f32[2,8]");
  EXPECT_EQ(infer(Op::Cast, {f32({3})}, attrs({{AttrKey::to, std::string("bool")}})), "bool[3]");
  EXPECT_EQ(infer(Op::Cast, {f32({3})}, attrs({{AttrKey::to, std::string("f33")}})),
            "error: cast: unknown element type 'f33' (known: f32, f16, f64, i64, i32, bool)");
  expect_error(infer(Op::Cast, {f32({3})}), {"missing required attribute 'to'"});
}

TEST(Concat, StacksAlongAxis) {
  Attrs out;
  EXPECT_EQ(infer(Op::Concat, {f32({2, 3}), f32({2, 5}), f32({2, 1})},
                  attrs({{AttrKey::axis, I(-1)}}), &out),
            "f32[2,9]");
  EXPECT_EQ(out.i(AttrKey::axis), 1);
  EXPECT_EQ(infer(Op::Concat, {f32({2, 3})}, attrs({{AttrKey::axis, I(0)}})), "f32[2,3]");
  expect_error(infer(Op::Concat, {f32({2, 3}), f32({3, 3})}, attrs({{AttrKey::axis, I(1)}})),
               {"f32[2,3] and f32[3,3] differ outside axis 1"});
  expect_error(infer(Op::Concat, {f32({2, 3}), f32({2, 3, 1})}, attrs({{AttrKey::axis, I(0)}})),
               {"f32[2,3,1]"});
  expect_error(infer(Op::Concat, {f32({2, 3}), f64({2, 3})}, attrs({{AttrKey::axis, I(0)}})),
               {"f64[2,3]"});
  expect_error(infer(Op::Concat, {f32({2, 3})}, attrs({{AttrKey::axis, I(-3)}})), {"axis -3"});
}

TEST(Split, OneOutputPerSize) {
  Attrs out;
  EXPECT_EQ(infer(Op::Split, {f32({4, 6})}, attrs({{AttrKey::axis, I(-1)}, {AttrKey::sizes, V({2, 4})}}),
                  &out),
            "(f32[4,2], f32[4,4])");
  EXPECT_EQ(out.i(AttrKey::axis), 1);
  expect_error(
      infer(Op::Split, {f32({4, 6})}, attrs({{AttrKey::axis, I(1)}, {AttrKey::sizes, V({2, 3})}})),
      {"sizes [2,3] do not sum to dimension 1 of f32[4,6]"});
  expect_error(
      infer(Op::Split, {f32({4, 6})}, attrs({{AttrKey::axis, I(1)}, {AttrKey::sizes, V({6, 0})}})),
      {"[6,0]", ">= 1"});
  expect_error(
      infer(Op::Split, {f32({4, 6})}, attrs({{AttrKey::axis, I(1)}, {AttrKey::sizes, V({})}})),
      {"f32[4,6]"});
}

TEST(Transpose, Permutes) {
  EXPECT_EQ(infer(Op::Transpose, {f32({2, 3, 4})}, attrs({{AttrKey::perm, V({2, 0, 1})}})),
            "f32[4,2,3]");
  EXPECT_EQ(infer(Op::Transpose, {f32({})}, attrs({{AttrKey::perm, V({})}})), "f32[]");
  expect_error(infer(Op::Transpose, {f32({2, 3, 4})}, attrs({{AttrKey::perm, V({0, 0, 1})}})),
               {"[0,0,1]", "f32[2,3,4]"});
  expect_error(infer(Op::Transpose, {f32({2, 3, 4})}, attrs({{AttrKey::perm, V({1, 0})}})),
               {"[1,0]"});
}

TEST(Reshape, ResolvesAndStoresShape) {
  Attrs out;
  EXPECT_EQ(infer(Op::Reshape, {f32({2, 3, 4})}, attrs({{AttrKey::shape, V({0, -1})}}), &out),
            "f32[2,12]");
  EXPECT_EQ(out.ints(AttrKey::shape), (Ints{2, 12}));
  EXPECT_EQ(infer(Op::Reshape, {f32({2, 3, 4})}, attrs({{AttrKey::shape, V({-1})}})), "f32[24]");
  EXPECT_EQ(infer(Op::Reshape, {f32({1})}, attrs({{AttrKey::shape, V({})}})), "f32[]");
  expect_error(infer(Op::Reshape, {f32({2, 3, 4})}, attrs({{AttrKey::shape, V({5, -1})}})),
               {"[5,-1]", "f32[2,3,4]"});
  expect_error(infer(Op::Reshape, {f32({2, 3, 4})}, attrs({{AttrKey::shape, V({-1, -1})}})),
               {"[-1,-1]"});
  expect_error(infer(Op::Reshape, {f32({2, 3, 4})}, attrs({{AttrKey::shape, V({2, 3})}})),
               {"[2,3]", "24 elements", "f32[2,3,4]"});
  expect_error(infer(Op::Reshape, {f32({2})}, attrs({{AttrKey::shape, V({2, 0})}})),
               {"[2,0]", "f32[2]"});
}

TEST(Flatten, SplitsAtAxis) {
  TensorType x = f32({2, 3, 4});
  EXPECT_EQ(infer(Op::Flatten, {x}, attrs({{AttrKey::axis, I(1)}})), "f32[2,12]");
  EXPECT_EQ(infer(Op::Flatten, {x}, attrs({{AttrKey::axis, I(0)}})), "f32[1,24]");
  EXPECT_EQ(infer(Op::Flatten, {x}, attrs({{AttrKey::axis, I(3)}})), "f32[24,1]");
  Attrs out;
  EXPECT_EQ(infer(Op::Flatten, {x}, attrs({{AttrKey::axis, I(-1)}}), &out), "f32[6,4]");
  EXPECT_EQ(out.i(AttrKey::axis), 2);
  expect_error(infer(Op::Flatten, {x}, attrs({{AttrKey::axis, I(4)}})), {"axis 4", "f32[2,3,4]"});
}

TEST(Squeeze, RemovesUnitAxes) {
  TensorType x = f32({1, 3, 1, 4});
  Attrs out;
  EXPECT_EQ(infer(Op::Squeeze, {x}, attrs({{AttrKey::axes, V({-2, 0})}}), &out), "f32[3,4]");
  EXPECT_EQ(out.ints(AttrKey::axes), (Ints{0, 2}));
  EXPECT_EQ(infer(Op::Squeeze, {x}, attrs({{AttrKey::axes, V({})}}), &out), "f32[3,4]");
  EXPECT_EQ(out.ints(AttrKey::axes), (Ints{0, 2}));
  expect_error(infer(Op::Squeeze, {x}, attrs({{AttrKey::axes, V({1})}})),
               {"axis 1 of f32[1,3,1,4] has extent 3"});
}

TEST(Unsqueeze, AxesIndexTheOutput) {
  Attrs out;
  EXPECT_EQ(infer(Op::Unsqueeze, {f32({3, 4})}, attrs({{AttrKey::axes, V({-1, 0})}}), &out),
            "f32[1,3,4,1]");
  EXPECT_EQ(out.ints(AttrKey::axes), (Ints{0, 3}));
  EXPECT_EQ(infer(Op::Unsqueeze, {f32({3, 4})}, attrs({{AttrKey::axes, V({1})}})), "f32[3,1,4]");
  expect_error(infer(Op::Unsqueeze, {f32({3, 4})}, attrs({{AttrKey::axes, V({1, 1})}})),
               {"repeat", "f32[3,4]"});
  expect_error(infer(Op::Unsqueeze, {f32({3, 4})}, attrs({{AttrKey::axes, V({3})}})),
               {"axis 3", "f32[3,4]"});
  expect_error(infer(Op::Unsqueeze, {f32({3, 4})}, attrs({{AttrKey::axes, V({})}})), {"empty"});
}

Attrs slice(Ints starts, Ints ends, Ints axes, Ints steps) {
  return attrs({{AttrKey::starts, V(starts)},
                {AttrKey::ends, V(ends)},
                {AttrKey::axes, V(axes)},
                {AttrKey::steps, V(steps)}});
}

TEST(Slice, ClampsAndCanonicalizes) {
  TensorType x = f32({10, 8});
  Attrs out;
  // Rows 1, 4, 7: the end is clamped, then tightened to one past the last.
  EXPECT_EQ(infer(Op::Slice, {x}, slice({1}, {1000}, {0}, {3}), &out), "f32[3,8]");
  EXPECT_EQ(out, slice({1}, {8}, {0}, {3}));
  // All columns backwards; "before the first" is stored as -(d + 1).
  EXPECT_EQ(infer(Op::Slice, {x}, slice({-1}, {INT64_MIN}, {-1}, {-1}), &out), "f32[10,8]");
  EXPECT_EQ(out, slice({7}, {-9}, {1}, {-1}));
  // Axes default to 0.., steps to 1; entries come out sorted by axis.
  EXPECT_EQ(infer(Op::Slice, {x}, slice({0, 2}, {5, 4}, {}, {}), &out), "f32[5,2]");
  EXPECT_EQ(out, slice({0, 2}, {5, 4}, {0, 1}, {1, 1}));
  EXPECT_EQ(infer(Op::Slice, {x}, slice({2, 1}, {4, 3}, {1, 0}, {1, 1}), &out), "f32[2,2]");
  EXPECT_EQ(out, slice({1, 2}, {3, 4}, {0, 1}, {1, 1}));
  // An empty selection and a single element have one spelling each.
  EXPECT_EQ(infer(Op::Slice, {x}, slice({5}, {2}, {0}, {1}), &out), "f32[0,8]");
  EXPECT_EQ(out, slice({0}, {0}, {0}, {1}));
  EXPECT_EQ(infer(Op::Slice, {x}, slice({3}, {0}, {0}, {-5}), &out), "f32[1,8]");
  EXPECT_EQ(out, slice({3}, {4}, {0}, {1}));
}

TEST(Slice, CanonicalFormIsAFixedPoint) {
  TensorType x = f32({10, 8});
  for (const Attrs& a : {slice({1}, {1000}, {0}, {3}), slice({-1}, {INT64_MIN}, {-1}, {-1}),
                         slice({8}, {-20}, {0}, {-3}), slice({-3, 0}, {-1, 7}, {1, 0}, {1, 2})}) {
    Attrs once, twice;
    std::string t1 = infer(Op::Slice, {x}, a, &once);
    std::string t2 = infer(Op::Slice, {x}, once, &twice);
    EXPECT_EQ(t1, t2);
    EXPECT_EQ(once, twice) << t1;
  }
}

TEST(Slice, Errors) {
  TensorType x = f32({10, 8});
  expect_error(infer(Op::Slice, {x}, slice({0}, {5}, {0}, {0})), {"steps [0]"});
  expect_error(infer(Op::Slice, {x}, slice({0, 1}, {5}, {0}, {1})), {"[0,1]", "[5]", "length"});
  expect_error(infer(Op::Slice, {x}, slice({0, 1}, {5, 5}, {0, -2}, {1, 1})), {"repeat"});
  expect_error(infer(Op::Slice, {x}, slice({0}, {5}, {2}, {1})), {"axis 2", "f32[10,8]"});
}

TEST(UpdateSlice, KeepsTheBaseType) {
  Attrs s = attrs({{AttrKey::starts, V({0, 2, 1, 0})}});
  EXPECT_EQ(infer(Op::UpdateSlice, {f32({2, 4, 5, 3}), f32({2, 2, 4, 3})}, s), "f32[2,4,5,3]");
  EXPECT_EQ(infer(Op::UpdateSlice, {f32({2, 4, 5, 3}), f32({0, 0, 0, 0})}, s), "f32[2,4,5,3]");
  EXPECT_EQ(infer(Op::UpdateSlice, {f64({}), f64({})}, attrs({{AttrKey::starts, V({})}})), "f64[]");
}

TEST(UpdateSlice, Errors) {
  const TensorType base = f32({4, 6});
  auto at = [](Ints s) { return attrs({{AttrKey::starts, V(s)}}); };
  EXPECT_EQ(infer(Op::UpdateSlice, {base, f32({2, 3})}, at({3, 0})),
            "error: update_slice: patch f32[2,3] at starts [3,0] does not fit in base f32[4,6]");
  expect_error(infer(Op::UpdateSlice, {base, f32({2, 3})}, at({0, -1})),
               {"[0,-1]", "does not fit"});
  expect_error(infer(Op::UpdateSlice, {base, f32({2, 7})}, at({0, 0})),
               {"f32[2,7]", "does not fit"});
  expect_error(infer(Op::UpdateSlice, {base, f32({1, 1})}, at({INT64_MAX, 0})), {"does not fit"});
  expect_error(infer(Op::UpdateSlice, {base, f32({2, 3})}, at({0})),
               {"starts [0]", "one entry per axis", "f32[4,6]"});
  expect_error(infer(Op::UpdateSlice, {base, f32({2})}, at({0, 0})),
               {"f32[2]", "f32[4,6]", "differ in rank"});
  expect_error(infer(Op::UpdateSlice, {base, f64({2, 3})}, at({0, 0})),
               {"f32[4,6]", "f64[2,3]", "differ"});
  expect_error(infer(Op::UpdateSlice, {base, f32({2, 3})}),
               {"missing required attribute 'starts'"});
  expect_error(infer(Op::UpdateSlice, {base}, at({0, 0})), {"takes 2 inputs, got 1"});
}

TEST(Pad, AddsBeginsAndEnds) {
  EXPECT_EQ(infer(Op::Pad, {f32({1, 3, 4, 4})}, attrs({{AttrKey::pads, V({0, 0, 1, 2, 0, 0, 3, 4})}})),
            "f32[1,3,8,10]");
  expect_error(infer(Op::Pad, {f32({4, 4})}, attrs({{AttrKey::pads, V({0, -1, 0, 0})}})),
               {"[0,-1,0,0]", "non-negative", "f32[4,4]"});
  expect_error(infer(Op::Pad, {f32({4, 4})}, attrs({{AttrKey::pads, V({1, 1})}})), {"4 non-negative"});
}

TEST(RecordedTypes, AreNotInferred) {
  expect_error(infer(Op::Opaque, {f32({2})}, attrs({{AttrKey::op_type, std::string("Foo")}})),
               {"opaque: output types are recorded"});
  expect_error(infer(Op::Input, {}), {"input: types are recorded"});
  expect_error(infer(Op::Weight, {}), {"weight: types are recorded"});
}

// Every operator infers or fails cleanly on rank-4 inputs with its required
// attributes filled with plausible values (no aborts on odd input).
TEST(InferTypes, NeverAbortsOnOddInputs) {
  for (const OpInfo& info : all_ops()) {
    for (int n = 0; n <= 3; ++n) {
      std::vector<TensorType> in(n, f32({1, 2, 3, 4}));
      Attrs a;
      for (int k = 0; k < kNumAttrKeys; ++k) {
        AttrKey key = static_cast<AttrKey>(k);
        if (!info.takes(key) || !attr_info(key).default_text.empty()) continue;
        if (attr_info(key).type == AttrType::Int) a.set(key, I(5));
        if (attr_info(key).type == AttrType::Ints) a.set(key, V({5, -7}));
        if (attr_info(key).type == AttrType::Str) a.set(key, std::string("x"));
      }
      (void)infer(info.op, in, a);
    }
  }
}

// ---------------------------------------------------------------------- flops

int64_t flops_of(Op op, std::vector<TensorType> in, Attrs a = {}) {
  Expected<std::vector<TensorType>> out = infer_types(op, &a, in);
  EXPECT_TRUE(out.ok()) << out.error().message;
  return out.ok() ? flops(op, a, in, *out) : -1;
}

TEST(Flops, CountsMultiplyAccumulatesTwice) {
  TensorType x = f32({1, 3, 8, 8}), w = f32({4, 3, 3, 3});  // output [1,4,6,6]: 144
  EXPECT_EQ(flops_of(Op::Conv2d, {x, w}), 2 * 144 * 27);
  EXPECT_EQ(flops_of(Op::Conv2d, {x, w, f32({4})}, attrs({{AttrKey::act, Act::kRelu}})),
            2 * 144 * 27 + 144 + 144);
  EXPECT_EQ(flops_of(Op::Conv2d, {f32({1, 4, 8, 8}), f32({4, 1, 3, 3})},
                     attrs({{AttrKey::groups, I(4)}})),
            2 * 144 * 9);
  EXPECT_EQ(flops_of(Op::Matmul, {f32({5, 2, 3}), f32({3, 4})}), 2 * 40 * 3);
  EXPECT_EQ(flops_of(Op::Gemm, {f32({3, 2}), f32({3, 4}), f32({4})},
                     attrs({{AttrKey::trans_a, I(1)}})),
            2 * 8 * 3 + 8);
}

TEST(Flops, OtherFamilies) {
  EXPECT_EQ(flops_of(Op::Gather, {f32({10, 4}), {DType::kI64, Shape{3}}},
                     attrs({{AttrKey::axis, I(0)}})),
            0);
  EXPECT_EQ(flops_of(Op::Add, {f32({2, 3}), f32({3})}), 6);
  EXPECT_EQ(flops_of(Op::Relu, {f32({2, 3})}), 6);
  EXPECT_EQ(flops_of(Op::MaxPool, {f32({1, 2, 7, 7})},
                     attrs({{AttrKey::kernel, V({3, 3})}, {AttrKey::stride, V({2, 2})}})),
            18 * 9);
  EXPECT_EQ(flops_of(Op::GlobalAvgPool, {f32({2, 3, 4, 4})}), 96);
  EXPECT_EQ(flops_of(Op::ReduceMean, {f32({2, 3})}, attrs({{AttrKey::axes, V({1})}})), 6);
  EXPECT_GT(flops_of(Op::Softmax, {f32({2, 3})}, attrs({{AttrKey::axis, I(1)}})), 6);
  EXPECT_EQ(flops_of(Op::Transpose, {f32({2, 3})}, attrs({{AttrKey::perm, V({1, 0})}})), 0);
  EXPECT_EQ(flops_of(Op::Reshape, {f32({2, 3})}, attrs({{AttrKey::shape, V({6})}})), 0);
  EXPECT_EQ(flops_of(Op::IsNaN, {f32({2, 3})}), 6);
  EXPECT_EQ(flops_of(Op::Where, {{DType::kBool, Shape{2, 3}}, f32({1}), f32({3})}), 6);
  EXPECT_EQ(
      flops_of(Op::UpdateSlice, {f32({4, 6}), f32({2, 3})}, attrs({{AttrKey::starts, V({1, 1})}})),
      0);
}

// ---------------------------------------------------------------------- sizes

constexpr int64_t k2p31 = int64_t{1} << 31, k2p32 = int64_t{1} << 32;

TEST(Sizes, CountsCheckEveryProductAndSum) {
  EXPECT_EQ((Count(6) * 7 + 1).value(), 43);
  EXPECT_EQ((Count(INT64_MAX) * 1).value(), INT64_MAX);
  EXPECT_FALSE((Count(INT64_MAX) + 1).fits());
  EXPECT_FALSE((Count(k2p32) * k2p32).fits());
  EXPECT_FALSE((Count(k2p32) * k2p32 * 0).fits()) << "an overflowed count stays overflowed";
  EXPECT_FALSE(Count(-1).fits());
}

TEST(Sizes, ShapesAndTypesReportOverflow) {
  EXPECT_EQ(Shape({2, 3, 4}).checked_numel(), 24);
  EXPECT_EQ(Shape{}.checked_numel(), 1);
  EXPECT_EQ(Shape({k2p32, k2p31 - 1}).checked_numel(), k2p32 * (k2p31 - 1));
  EXPECT_EQ(Shape({k2p32, k2p31}).checked_numel(), std::nullopt);
  // A zero extent empties the tensor, but the others must still multiply.
  EXPECT_EQ(Shape({3, 0, 5}).checked_numel(), 0);
  EXPECT_EQ(Shape({k2p32, k2p32, 0}).checked_numel(), std::nullopt);
  EXPECT_EQ(Shape({2, -1}).checked_numel(), std::nullopt);

  EXPECT_EQ(checked_byte_size(f32({2, 3})), 24);
  EXPECT_EQ(checked_byte_size({DType::kBool, Shape{k2p31, k2p31}}), k2p31 * k2p31);
  EXPECT_EQ(checked_byte_size(f32({k2p31, k2p31})), std::nullopt) << "2^62 elements, 2^64 bytes";
  EXPECT_TRUE(check_size(f32({4, 4}), "input 'x'").ok());
  Status s = check_size(f32({k2p32, k2p32, 16}), "input 'x'");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "input 'x': f32[4294967296,4294967296,16] does not fit in memory: its size in bytes "
            "overflows int64");
}

TEST(Sizes, InferenceRefusesOutputsThatDoNotFit) {
  // Each input fits; the result does not.
  expect_error(infer(Op::Concat, {f32({k2p31, k2p31 / 4}), f32({k2p31, k2p31 / 4})},
                     attrs({{AttrKey::axis, I(0)}})),
               {"concat: output 0: f32[4294967296,536870912]", "overflows int64"});
  expect_error(infer(Op::Matmul, {f32({k2p32, 1}), f32({1, k2p31})}),
               {"matmul: output 0", "overflows int64"});
  expect_error(infer(Op::ConstOnes, {}, attrs({{AttrKey::shape, V({k2p31, k2p31})}})),
               {"overflows int64"});
  expect_error(infer(Op::Relu, {f32({k2p32, k2p32, 16})}), {"f32[4294967296,4294967296,16]"});
}

TEST(Sizes, InferenceRefusesFlopCountsThatDoNotFit) {
  // [2^21,2^21] x [2^21,2^21]: the product's 2^42 elements fit, its 2^64
  // FLOPs do not.
  const int64_t n = int64_t{1} << 21;
  expect_error(infer(Op::Matmul, {f32({n, n}), f32({n, n})}),
               {"matmul: its FLOP count overflows int64 for inputs f32[2097152,2097152], "
                "f32[2097152,2097152]"});
  EXPECT_EQ(flops_of(Op::Matmul, {f32({n, n / 4}), f32({n / 4, n})}), 2 * n * n * (n / 4));
}



}  // namespace
}  // namespace tso
