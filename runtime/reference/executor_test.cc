// Hand-computed cases, one or more per operator. Cases whose results are
// integers run for float, double and Mod alike; non-linear operators are
// checked against their real values (float, double) and their surrogates (Mod).
#include <climits>
#include <cmath>
#include <limits>

#include "core/text_format.h"
#include "runtime/reference/test_util.h"

namespace tso::ref {
namespace {

using namespace tso::ref::testing;
using Ints = std::vector<int64_t>;

template <class S>
class Exact : public ::testing::Test {};
using Scalars = ::testing::Types<float, double, Mod>;
TYPED_TEST_SUITE(Exact, Scalars);

TYPED_TEST(Exact, Conv2dValid) {
  using S = TypeParam;
  // y[i][j] = x[i][j] + x[i+1][j+1]
  auto y = eval1<S>(node(Op::Conv2d), {T<S>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                       T<S>({1, 1, 2, 2}, {1, 0, 0, 1})});
  EXPECT_TRUE(close(y, T<S>({1, 1, 2, 2}, {6, 8, 12, 14})));
}

TYPED_TEST(Exact, Conv2dBias) {
  using S = TypeParam;
  // Two output channels (identity and negated 1x1 kernels), bias [1, 2].
  auto y = eval1<S>(node(Op::Conv2d), {T<S>({1, 1, 2, 2}, {1, 2, 3, 4}), T<S>({2, 1, 1, 1}, {1, -1}),
                                       T<S>({2}, {1, 2})});
  EXPECT_TRUE(close(y, T<S>({1, 2, 2, 2}, {2, 3, 4, 5, 1, 0, -1, -2})));
}

TEST(Conv2d, BiasBeforeActivation) {
  auto y = eval1<double>(node(Op::Conv2d, attrs({{AttrKey::act, Act::kRelu}})),
                         {T<double>({1, 1, 2, 2}, {1, 2, 3, 4}), T<double>({2, 1, 1, 1}, {1, -1}),
                          T<double>({2}, {1, 2})});
  EXPECT_TRUE(close(y, T<double>({1, 2, 2, 2}, {2, 3, 4, 5, 1, 0, 0, 0})));
}

TYPED_TEST(Exact, Conv2dSameStride2) {
  using S = TypeParam;
  // out = ceil(4/2) = 2; total padding 1 goes to the end (bottom, right).
  Tensor<S> x(Shape{1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.data[i] = T<S>({}, {double(i + 1)}).data[0];
  Node n = node(Op::Conv2d, attrs({{AttrKey::pad, Padding{Padding::kSame}},
                                   {AttrKey::stride, Ints{2, 2}}}));
  auto y = eval1<S>(n, {x, T<S>({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})});
  EXPECT_TRUE(close(y, T<S>({1, 1, 2, 2}, {54, 45, 72, 54})));
}

TYPED_TEST(Exact, Conv2dExplicitPadAndDilation) {
  using S = TypeParam;
  Padding top_left{Padding::kExplicit, {1, 1, 0, 0}};
  auto y = eval1<S>(node(Op::Conv2d, attrs({{AttrKey::pad, top_left}})),
                    {T<S>({1, 1, 2, 2}, {1, 2, 3, 4}), T<S>({1, 1, 2, 2}, {1, 1, 1, 1})});
  EXPECT_TRUE(close(y, T<S>({1, 1, 2, 2}, {1, 3, 4, 10})));
  // Dilation 2 spreads a 2x2 kernel over the corners of a 3x3 window.
  auto z = eval1<S>(node(Op::Conv2d, attrs({{AttrKey::dilation, Ints{2, 2}}})),
                    {T<S>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                     T<S>({1, 1, 2, 2}, {1, 2, 3, 4})});
  EXPECT_TRUE(close(z, T<S>({1, 1, 1, 1}, {1 * 1 + 2 * 3 + 3 * 7 + 4 * 9})));
}

TYPED_TEST(Exact, Conv2dGroups) {
  using S = TypeParam;
  auto y = eval1<S>(node(Op::Conv2d, attrs({{AttrKey::groups, int64_t{2}}})),
                    {T<S>({1, 2, 1, 1}, {2, 3}), T<S>({2, 1, 1, 1}, {10, 100})});
  EXPECT_TRUE(close(y, T<S>({1, 2, 1, 1}, {20, 300})));
}

TEST(Conv2d, FusedRelu) {
  auto y = eval1<float>(node(Op::Conv2d, attrs({{AttrKey::groups, int64_t{2}}, {AttrKey::act, Act::kRelu}})),
                        {T<float>({1, 2, 1, 1}, {2, 3}), T<float>({2, 1, 1, 1}, {-10, 100})});
  EXPECT_TRUE(close(y, T<float>({1, 2, 1, 1}, {0, 300})));
}

TYPED_TEST(Exact, Matmul) {
  using S = TypeParam;
  auto y = eval1<S>(node(Op::Matmul), {T<S>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                       T<S>({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_TRUE(close(y, T<S>({2, 2}, {58, 64, 139, 154})));
  // Leading dimensions broadcast: [2,1,2] x [2,1] -> [2,1,1].
  auto b = eval1<S>(node(Op::Matmul), {T<S>({2, 1, 2}, {1, 2, 3, 4}), T<S>({2, 1}, {5, 6})});
  EXPECT_TRUE(close(b, T<S>({2, 1, 1}, {17, 39})));
}

TEST(Matmul, FusedRelu) {
  auto y = eval1<double>(node(Op::Matmul, attrs({{AttrKey::act, Act::kRelu}})),
                         {T<double>({1, 2}, {1, -1}), T<double>({2, 2}, {1, 2, 3, 1})});
  EXPECT_TRUE(close(y, T<double>({1, 2}, {0, 1})));
}

// A fused clip or gelu computes what the standalone operator computes, for
// every scalar (Mod: the same surrogate and the same signed-order clip).
TYPED_TEST(Exact, FusedClipAndGeluAreTheStandaloneOperators) {
  using S = TypeParam;
  const Tensor<S> a = T<S>({2, 2}, {1, -2, 3, 2}), b = T<S>({2, 3}, {2, 1, -1, 3, -2, 4});
  const Tensor<S> plain = eval1<S>(node(Op::Matmul), {a, b});  // [-4, 5, -9, 12, -1, 5]
  auto clipped =
      eval1<S>(node(Op::Matmul,
                    attrs({{AttrKey::act, Act::kClip}, {AttrKey::min, 0.0}, {AttrKey::max, 6.0}})),
               {a, b});
  EXPECT_TRUE(close(clipped, T<S>({2, 3}, {0, 5, 0, 6, 0, 5})));
  EXPECT_TRUE(
      close(clipped,
            eval1<S>(node(Op::Clip, attrs({{AttrKey::min, 0.0}, {AttrKey::max, 6.0}})), {plain})));
  auto gelu = eval1<S>(node(Op::Matmul, attrs({{AttrKey::act, Act::kGelu}})), {a, b});
  EXPECT_TRUE(close(gelu, eval1<S>(node(Op::Gelu), {plain})));
}

TYPED_TEST(Exact, Gemm) {
  using S = TypeParam;
  // 2 * A B^T + 3 * [1,1]
  Node n = node(Op::Gemm, attrs({{AttrKey::alpha, 2.0}, {AttrKey::beta, 3.0},
                                 {AttrKey::trans_b, int64_t{1}}}));
  auto y = eval1<S>(n, {T<S>({2, 2}, {1, 2, 3, 4}), T<S>({2, 2}, {5, 6, 7, 8}), T<S>({2}, {1, 1})});
  EXPECT_TRUE(close(y, T<S>({2, 2}, {37, 49, 81, 109})));
  auto ta = eval1<S>(node(Op::Gemm, attrs({{AttrKey::trans_a, int64_t{1}}})),
                     {T<S>({2, 1}, {1, 2}), T<S>({2, 1}, {3, 4})});
  EXPECT_TRUE(close(ta, T<S>({1, 1}, {11})));
}

TYPED_TEST(Exact, BroadcastBinary) {
  using S = TypeParam;
  auto sum = eval1<S>(node(Op::Add), {T<S>({2, 3}, {1, 2, 3, 4, 5, 6}), T<S>({3}, {10, 20, 30})});
  EXPECT_TRUE(close(sum, T<S>({2, 3}, {11, 22, 33, 14, 25, 36})));
  auto outer = eval1<S>(node(Op::Mul), {T<S>({2, 1}, {2, 3}), T<S>({1, 3}, {1, 10, 100})});
  EXPECT_TRUE(close(outer, T<S>({2, 3}, {2, 20, 200, 3, 30, 300})));
  auto diff = eval1<S>(node(Op::Sub), {T<S>({1, 2, 1, 2}, {5, 6, 7, 8}), T<S>({1, 2, 1, 1}, {1, 2})});
  EXPECT_TRUE(close(diff, T<S>({1, 2, 1, 2}, {4, 5, 5, 6})));
  auto quot = eval1<S>(node(Op::Div), {T<S>({3}, {6, -9, 12}), T<S>({}, {3})});
  EXPECT_TRUE(close(quot, T<S>({3}, {2, -3, 4})));
  auto power = eval1<S>(node(Op::Pow), {T<S>({3}, {3, -2, 5}), T<S>({3}, {4, 3, 0})});
  EXPECT_TRUE(close(power, T<S>({3}, {81, -8, 1})));
  auto scaled = eval1<S>(node(Op::ScalarMul), {T<S>({2}, {3, -4}), T<S>({}, {5})});
  EXPECT_TRUE(close(scaled, T<S>({2}, {15, -20})));
  auto neg = eval1<S>(node(Op::Neg), {T<S>({2}, {3, -4})});
  EXPECT_TRUE(close(neg, T<S>({2}, {-3, 4})));
}

TEST(Binary, IncompatibleShapesAreAnError) {
  Tensor<float> a = T<float>({2, 3}, {1, 2, 3, 4, 5, 6}), b = T<float>({2}, {1, 2});
  const Tensor<float>* args[] = {&a, &b};
  auto r = eval_node<float>(node(Op::Add, {}, "sum"), args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("node 'sum' (add)"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("[2,3]"), std::string::npos) << r.error().message;
}

TYPED_TEST(Exact, ConcatSplitTranspose) {
  using S = TypeParam;
  auto c = eval1<S>(node(Op::Concat, attrs({{AttrKey::axis, int64_t{1}}})),
                    {T<S>({2, 2}, {1, 2, 3, 4}), T<S>({2, 1}, {5, 6})});
  EXPECT_TRUE(close(c, T<S>({2, 3}, {1, 2, 5, 3, 4, 6})));
  auto parts = eval<S>(node(Op::Split, attrs({{AttrKey::axis, int64_t{1}}, {AttrKey::sizes, Ints{2, 1}}})),
                       {T<S>({2, 3}, {1, 2, 5, 3, 4, 6})});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(close(parts[0], T<S>({2, 2}, {1, 2, 3, 4})));
  EXPECT_TRUE(close(parts[1], T<S>({2, 1}, {5, 6})));
  auto t = eval1<S>(node(Op::Transpose, attrs({{AttrKey::perm, Ints{1, 0}}})),
                    {T<S>({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(close(t, T<S>({3, 2}, {1, 4, 2, 5, 3, 6})));
  auto t3 = eval1<S>(node(Op::Transpose, attrs({{AttrKey::perm, Ints{2, 0, 1}}})),
                     {T<S>({1, 2, 2}, {1, 2, 3, 4})});
  EXPECT_TRUE(close(t3, T<S>({2, 1, 2}, {1, 3, 2, 4})));
}

TYPED_TEST(Exact, Pooling) {
  using S = TypeParam;
  Tensor<S> x = T<S>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto avg = eval1<S>(node(Op::AvgPool, attrs({{AttrKey::kernel, Ints{2, 2}}})), {x});
  EXPECT_TRUE(close(avg, T<S>({1, 1, 2, 2}, {3, 4, 6, 7})));
  auto mx = eval1<S>(node(Op::MaxPool, attrs({{AttrKey::kernel, Ints{2, 2}}})), {x});
  EXPECT_TRUE(close(mx, T<S>({1, 1, 2, 2}, {5, 6, 8, 9})));
  // Padded positions never win a max, even against negative values.
  auto neg = eval1<S>(node(Op::MaxPool, attrs({{AttrKey::kernel, Ints{2, 2}},
                                               {AttrKey::pad, Padding{Padding::kExplicit, {1, 1, 0, 0}}}})),
                      {T<S>({1, 1, 2, 2}, {-4, -3, -2, -1})});
  EXPECT_TRUE(close(neg, T<S>({1, 1, 2, 2}, {-4, -3, -2, -1})));
  auto g = eval1<S>(node(Op::GlobalAvgPool), {T<S>({1, 2, 2, 2}, {1, 2, 3, 6, 0, 4, 8, 8})});
  EXPECT_TRUE(close(g, T<S>({1, 2, 1, 1}, {3, 5})));
}

TEST(AvgPool, CeilModeAndPaddingCounts) {
  Tensor<double> x = T<double>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto floor = eval1<double>(node(Op::AvgPool, attrs({{AttrKey::kernel, Ints{2, 2}}, {AttrKey::stride, Ints{2, 2}}})), {x});
  EXPECT_TRUE(close(floor, T<double>({1, 1, 1, 1}, {3})));
  auto ceil = eval1<double>(node(Op::AvgPool, attrs({{AttrKey::kernel, Ints{2, 2}}, {AttrKey::stride, Ints{2, 2}},
                                                     {AttrKey::ceil_mode, int64_t{1}}})), {x});
  EXPECT_TRUE(close(ceil, T<double>({1, 1, 2, 2}, {3, 4.5, 7.5, 9})));
  // same padding with kernel 2, stride 1: one padded row and column at the end.
  Attrs same = attrs({{AttrKey::kernel, Ints{2, 2}}, {AttrKey::pad, Padding{Padding::kSame}}});
  auto excl = eval1<double>(node(Op::AvgPool, same), {x});
  EXPECT_TRUE(close(excl, T<double>({1, 1, 3, 3}, {3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9})));
  same.set(AttrKey::count_include_pad, int64_t{1});
  auto incl = eval1<double>(node(Op::AvgPool, same), {x});
  EXPECT_TRUE(close(incl, T<double>({1, 1, 3, 3}, {3, 4, 2.25, 6, 7, 3.75, 3.75, 4.25, 2.25})));
  // On Mod the mean divides by the window count exactly: with the padding
  // counted, (3 + 6 + 0 + 0) / 4; without it, (3 + 6) / 2.
  Tensor<Mod> xm = T<Mod>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(eval1<Mod>(node(Op::AvgPool, same), {xm}).data[2], Mod(9) * Mod(4).inverse());
  same.set(AttrKey::count_include_pad, int64_t{0});
  EXPECT_EQ(eval1<Mod>(node(Op::AvgPool, same), {xm}).data[2], Mod(9) * Mod(2).inverse());
}

TYPED_TEST(Exact, ShapeOps) {
  using S = TypeParam;
  Tensor<S> x = T<S>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(close(eval1<S>(node(Op::Reshape, attrs({{AttrKey::shape, Ints{3, -1}}})), {x}),
                    T<S>({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_TRUE(close(eval1<S>(node(Op::Flatten, attrs({{AttrKey::axis, int64_t{0}}})), {x}),
                    T<S>({1, 6}, {1, 2, 3, 4, 5, 6})));
  EXPECT_TRUE(close(eval1<S>(node(Op::Squeeze, attrs({{AttrKey::axes, Ints{0}}})), {T<S>({1, 2, 1}, {7, 8})}),
                    T<S>({2, 1}, {7, 8})));
  EXPECT_TRUE(close(eval1<S>(node(Op::Unsqueeze, attrs({{AttrKey::axes, Ints{0, 2}}})), {T<S>({2}, {7, 8})}),
                    T<S>({1, 2, 1}, {7, 8})));
  Node backwards = node(Op::Slice, attrs({{AttrKey::starts, Ints{8}}, {AttrKey::ends, Ints{2}},
                                          {AttrKey::axes, Ints{0}}, {AttrKey::steps, Ints{-2}}}));
  EXPECT_TRUE(close(eval1<S>(backwards, {T<S>({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}), T<S>({3}, {8, 6, 4})));
  Node window = node(Op::Slice, attrs({{AttrKey::starts, Ints{1, -2}}, {AttrKey::ends, Ints{INT64_MAX, 3}},
                                       {AttrKey::axes, Ints{0, 1}}, {AttrKey::steps, Ints{1, 1}}}));
  EXPECT_TRUE(close(eval1<S>(window, {x}), T<S>({1, 2}, {5, 6})));
  Node pad = node(Op::Pad, attrs({{AttrKey::pads, Ints{1, 0, 0, 1}}, {AttrKey::value, 9.0}}));
  EXPECT_TRUE(close(eval1<S>(pad, {T<S>({2, 2}, {1, 2, 3, 4})}), T<S>({3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9})));
  Node crop = node(Op::Pad, attrs({{AttrKey::pads, Ints{0, -1, 0, 0}}}));
  EXPECT_TRUE(close(eval1<S>(crop, {T<S>({2, 2}, {1, 2, 3, 4})}), T<S>({2, 1}, {2, 4})));
  Node enlarge = node(Op::Enlarge, attrs({{AttrKey::kernel, Ints{3, 3}}}));
  EXPECT_TRUE(close(eval1<S>(enlarge, {T<S>({1, 1, 1, 1}, {5})}),
                    T<S>({1, 1, 3, 3}, {0, 0, 0, 0, 5, 0, 0, 0, 0})));
}

TYPED_TEST(Exact, UpdateSliceReplacesOnlyTheBox) {
  using S = TypeParam;
  Tensor<S> base = T<S>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Node at = node(Op::UpdateSlice, attrs({{AttrKey::starts, Ints{1, 2}}}));
  EXPECT_TRUE(close(eval1<S>(at, {base, T<S>({2, 2}, {-1, -2, -3, -4})}),
                    T<S>({3, 4}, {1, 2, 3, 4, 5, 6, -1, -2, 9, 10, -3, -4})));
  // A patch as large as the base replaces it whole; an empty one changes nothing.
  Node origin = node(Op::UpdateSlice, attrs({{AttrKey::starts, Ints{0, 0}}}));
  Tensor<S> all = T<S>({3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(close(eval1<S>(origin, {base, all}), all));
  EXPECT_TRUE(close(eval1<S>(at, {base, T<S>({0, 2}, {})}), base));
  // Rank 4, a box touching the last row and column.
  Tensor<S> y4 = T<S>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Node corner = node(Op::UpdateSlice, attrs({{AttrKey::starts, Ints{0, 1, 1, 1}}}));
  EXPECT_TRUE(close(eval1<S>(corner, {y4, T<S>({1, 1, 1, 1}, {9})}),
                    T<S>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 9})));
}

TEST(Errors, UpdateSliceOutsideTheBase) {
  std::vector<Tensor<float>> args = {T<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                     T<float>({2, 2}, {0, 0, 0, 0})};
  const Tensor<float>* ptrs[] = {&args[0], &args[1]};
  auto r =
      eval_node<float>(node(Op::UpdateSlice, attrs({{AttrKey::starts, Ints{0, 2}}}), "fix"), ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.error().message,
      "node 'fix' (update_slice): update_slice: patch [2,2] does not fit in base [2,3] at the "
      "given starts");
}

TYPED_TEST(Exact, GatherPicksRowsAlongTheAxis) {
  using S = TypeParam;
  Tensor<S> table = T<S>({4, 2}, {10, 11, 20, 21, 30, 31, 40, 41});
  // An embedding lookup: [2,3] ids into a [4,2] table, -1 the last row.
  Node rows = node(Op::Gather, attrs({{AttrKey::axis, int64_t{0}}}));
  EXPECT_TRUE(close(eval1<S>(rows, {table, T<S>({2, 3}, {3, 0, -1, 1, 1, -4})}),
                    T<S>({2, 3, 2}, {40, 41, 10, 11, 40, 41, 20, 21, 20, 21, 10, 11})));
  // ViT's class token: a scalar index along axis 1 drops that axis.
  Tensor<S> x = T<S>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Node token = node(Op::Gather, attrs({{AttrKey::axis, int64_t{-2}}}));
  EXPECT_TRUE(close(eval1<S>(token, {x, T<S>({}, {0})}), T<S>({2, 2}, {1, 2, 7, 8})));
  // The last axis, indices repeated; no indices give an empty result.
  Node cols = node(Op::Gather, attrs({{AttrKey::axis, int64_t{2}}}));
  EXPECT_TRUE(close(eval1<S>(cols, {x, T<S>({3}, {1, 1, 0})}),
                    T<S>({2, 3, 3}, {2, 2, 1, 4, 4, 3, 6, 6, 5, 8, 8, 7, 10, 10, 9, 12, 12, 11})));
  EXPECT_EQ(eval1<S>(rows, {table, T<S>({0}, {})}).shape, Shape({0, 2}));
}

TEST(Errors, GatherIndexOutOfRange) {
  std::vector<Tensor<float>> args = {T<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
                                     T<float>({3}, {0, 4, 1})};
  const Tensor<float>* ptrs[] = {&args[0], &args[1]};
  auto r = eval_node<float>(node(Op::Gather, attrs({{AttrKey::axis, int64_t{0}}}), "emb"), ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "node 'emb' (gather): gather: index 4 at position 1 is out of range for axis 0 of "
            "[4,2]");
  args[1] = T<float>({2}, {-5, 0});
  r = eval_node<float>(node(Op::Gather, attrs({{AttrKey::axis, int64_t{0}}}), "emb"), ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("index -5 at position 0"), std::string::npos);
  args[1] = T<float>({1}, {0.5});  // a feed that is no integer
  r = eval_node<float>(node(Op::Gather, attrs({{AttrKey::axis, int64_t{0}}}), "emb"), ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("index 0.5"), std::string::npos) << r.error().message;
}

TYPED_TEST(Exact, ExpandBroadcastsAndCastConverts) {
  using S = TypeParam;
  Node expand = node(Op::Expand, attrs({{AttrKey::shape, Ints{2, 2, 3}}}));
  EXPECT_TRUE(close(eval1<S>(expand, {T<S>({2, 1}, {1, -2})}),
                    T<S>({2, 2, 3}, {1, 1, 1, -2, -2, -2, 1, 1, 1, -2, -2, -2})));
  Node to_bool = node(Op::Cast, attrs({{AttrKey::to, std::string("bool")}}));
  EXPECT_TRUE(close(eval1<S>(to_bool, {T<S>({4}, {0, 3, -1, 0})}), T<S>({4}, {0, 1, 1, 0})));
  Node to_f32 = node(Op::Cast, attrs({{AttrKey::to, std::string("f32")}}));
  EXPECT_TRUE(close(eval1<S>(to_f32, {T<S>({2}, {7, -3})}), T<S>({2}, {7, -3})));
}

// Floats to integers truncate toward zero (ONNX Cast).
TEST(Cast, FloatsToIntegersTruncate) {
  Node to_i64 = node(Op::Cast, attrs({{AttrKey::to, std::string("i64")}}));
  EXPECT_TRUE(close(eval1<double>(to_i64, {T<double>({4}, {2.75, -2.75, 0.5, -0.5})}),
                    T<double>({4}, {2, -2, 0, 0})));
}

TYPED_TEST(Exact, ReduceMean) {
  using S = TypeParam;
  Tensor<S> x = T<S>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(close(eval1<S>(node(Op::ReduceMean, attrs({{AttrKey::axes, Ints{1}}})), {x}),
                    T<S>({2, 1}, {2, 5})));
  Tensor<S> y = T<S>({2, 2}, {1, 3, 5, 7});
  EXPECT_TRUE(close(eval1<S>(node(Op::ReduceMean, attrs({{AttrKey::axes, Ints{0}}, {AttrKey::keepdims, int64_t{0}}})), {y}),
                    T<S>({2}, {3, 5})));
}

TYPED_TEST(Exact, Constants) {
  using S = TypeParam;
  EXPECT_TRUE(close(eval1<S>(node(Op::ConstOnes, attrs({{AttrKey::shape, Ints{2}}})), {}), T<S>({2}, {1, 1})));
  EXPECT_TRUE(close(eval1<S>(node(Op::ConstEye, attrs({{AttrKey::shape, Ints{2, 2}}})), {}),
                    T<S>({2, 2}, {1, 0, 0, 1})));
  EXPECT_TRUE(close(eval1<S>(node(Op::ConstPool, attrs({{AttrKey::shape, Ints{2, 1, 1, 2}}})), {}),
                    T<S>({2, 1, 1, 2}, {1, 1, 1, 1})));
  Tensor<S> eye = eval1<S>(node(Op::ConstEyeConv, attrs({{AttrKey::shape, Ints{2, 2, 3, 1}}})), {});
  EXPECT_TRUE(close(eye, T<S>({2, 2, 3, 1}, {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0})));
  // Their defining properties: the identity convolution and the window sum.
  Tensor<S> x = T<S>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  Node same = node(Op::Conv2d, attrs({{AttrKey::pad, Padding{Padding::kSame}}}));
  EXPECT_TRUE(close(eval1<S>(same, {x, eye}), x));
  Tensor<S> ones = eval1<S>(node(Op::ConstPool, attrs({{AttrKey::shape, Ints{2, 1, 2, 1}}})), {});
  Node pool = node(Op::Conv2d, attrs({{AttrKey::groups, int64_t{2}}}));
  EXPECT_TRUE(close(eval1<S>(pool, {x, ones}), T<S>({1, 2, 2, 1}, {3, 5, 9, 11})));
}

TEST(Clip, FloatAndSignedModOrder) {
  Node n = node(Op::Clip, attrs({{AttrKey::min, -1.0}, {AttrKey::max, 1.0}}));
  EXPECT_TRUE(close(eval1<float>(n, {T<float>({3}, {-2, 0.5, 3})}), T<float>({3}, {-1, 0.5, 1})));
  EXPECT_TRUE(close(eval1<Mod>(n, {T<Mod>({3}, {-2, 0, 3})}), T<Mod>({3}, {-1, 0, 1})));
  Node open = node(Op::Clip);  // -inf, inf: nothing clips
  EXPECT_TRUE(close(eval1<Mod>(open, {T<Mod>({2}, {-7, 7})}), T<Mod>({2}, {-7, 7})));
}

TEST(Unary, RealValues) {
  auto f = [](Op op, double x) { return eval1<double>(node(op), {T<double>({1}, {x})}).data.at(0); };
  EXPECT_EQ(f(Op::Relu, -1), 0);
  EXPECT_EQ(f(Op::Relu, 2), 2);
  EXPECT_NEAR(f(Op::Sigmoid, std::log(3.0)), 0.75, 1e-12);
  EXPECT_NEAR(f(Op::Tanh, std::atanh(0.5)), 0.5, 1e-12);
  EXPECT_NEAR(f(Op::Erf, 1), 0.8427007929497149, 1e-12);
  EXPECT_NEAR(f(Op::Gelu, 1), 0.8413447460685429, 1e-12);
  EXPECT_NEAR(f(Op::Gelu, -1), -0.15865525393145707, 1e-12);
  EXPECT_NEAR(f(Op::Exp, 1), 2.718281828459045, 1e-12);
  EXPECT_EQ(f(Op::Sqrt, 6.25), 2.5);
}

TEST(Unary, ModSurrogates) {
  auto f = [](Op op, int64_t x) {
    return eval1<Mod>(node(op), {T<Mod>({1}, {double(x)})}).data.at(0);
  };
  auto q = [](int64_t num, int64_t den) { return Mod::from_signed(num) * Mod::from_signed(den).inverse(); };
  EXPECT_EQ(f(Op::Relu, 3), q(6, 1));        // (9 + 3) / 2
  EXPECT_EQ(f(Op::Relu, -1), q(0, 1));
  EXPECT_EQ(f(Op::Sigmoid, 2), q(5, 6));     // 1/2 + 2/4 - 8/48
  EXPECT_EQ(f(Op::Tanh, 3), q(-6, 1));       // 3 - 27/3
  EXPECT_EQ(f(Op::Erf, 1), q(23, 30));       // 1 - 1/3 + 1/10
  EXPECT_EQ(f(Op::Gelu, 1), q(53, 60));      // (1 + 23/30) / 2
  EXPECT_EQ(f(Op::Exp, 1), q(8, 3));         // 1 + 1 + 1/2 + 1/6
  EXPECT_EQ(f(Op::Sqrt, 3), q(3, 2));        // (3 + 18 - 9) / 8
}

template <class S>
class RealScalars : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RealScalars, Reals);

TYPED_TEST(RealScalars, IsNaNFindsOnlyNaN) {
  using S = TypeParam;
  const S inf = std::numeric_limits<S>::infinity(), nan = std::numeric_limits<S>::quiet_NaN();
  Tensor<S> x(Shape{2, 3}, {nan, 0, -inf, inf, -nan, S(1e-30)});
  Tensor<S> y = eval1<S>(node(Op::IsNaN), {x});
  EXPECT_EQ(y, Tensor<S>(Shape{2, 3}, {1, 0, 0, 0, 1, 0}));
}

// BERT's guard: where(isnan(p), 0, p) zeroes exactly the NaN probabilities.
TYPED_TEST(RealScalars, WhereReplacesNaNWithABroadcastZero) {
  using S = TypeParam;
  const S nan = std::numeric_limits<S>::quiet_NaN();
  Tensor<S> p(Shape{1, 2, 2}, {S(0.25), nan, nan, S(0.75)});
  Tensor<S> mask = eval1<S>(node(Op::IsNaN), {p});
  Tensor<S> y = eval1<S>(node(Op::Where), {mask, T<S>({1}, {0}), p});
  EXPECT_EQ(y, Tensor<S>(Shape{1, 2, 2}, {S(0.25), 0, 0, S(0.75)}));
  // A false scalar condition takes b everywhere, NaN included.
  Tensor<S> keep = eval1<S>(node(Op::Where), {T<S>({}, {0}), T<S>({}, {5}), p});
  EXPECT_TRUE(std::isnan(keep.data[1]));
  EXPECT_EQ(keep.data[3], S(0.75));
}

TYPED_TEST(Exact, WhereBroadcastsConditionAndBothBranches) {
  using S = TypeParam;
  // c [2,1,1] picks a row of a [1,3] or a column of b [2,1], over [2,2,3].
  Tensor<S> c = T<S>({2, 1, 1}, {1, 0});
  Tensor<S> a = T<S>({1, 3}, {1, 2, 3});
  Tensor<S> b = T<S>({2, 1}, {-1, -2});
  Tensor<S> y = eval1<S>(node(Op::Where), {c, a, b});
  EXPECT_TRUE(close(y, T<S>({2, 2, 3}, {1, 2, 3, 1, 2, 3, -1, -1, -1, -2, -2, -2})));
  // A condition along the last axis only; a scalar b.
  Tensor<S> z = eval1<S>(node(Op::Where),
                         {T<S>({3}, {0, 1, 0}), T<S>({2, 3}, {1, 2, 3, 4, 5, 6}), T<S>({}, {9})});
  EXPECT_TRUE(close(z, T<S>({2, 3}, {9, 2, 9, 9, 5, 9})));
}

TEST(Errors, WhereShapesThatDoNotBroadcast) {
  std::vector<Tensor<float>> args = {T<float>({2}, {1, 0}), T<float>({3}, {1, 2, 3}),
                                     T<float>({1}, {0})};
  const Tensor<float>* ptrs[] = {&args[0], &args[1], &args[2]};
  auto r = eval_node<float>(node(Op::Where, {}, "w"), ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "node 'w' (where): where: shapes [2] and [3] do not broadcast");
}

TEST(Errors, IsNaNHasNoModImage) {
  Tensor<Mod> x = T<Mod>({2}, {1, 2});
  const Tensor<Mod>* one[] = {&x};
  auto r = eval_node<Mod>(node(Op::IsNaN, {}, "m"), one);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("node 'm' (isnan): isnan: has no Mod image"), std::string::npos)
      << r.error().message;
}

TEST(Softmax, RealAndMod) {
  auto y = eval1<double>(node(Op::Softmax, attrs({{AttrKey::axis, int64_t{1}}})), {T<double>({1, 3}, {1, 2, 3})});
  EXPECT_TRUE(close(y, T<double>({1, 3}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}), 1e-12));
  auto cols = eval1<float>(node(Op::Softmax, attrs({{AttrKey::axis, int64_t{0}}})), {T<float>({2, 2}, {0, 5, 0, 5})});
  EXPECT_TRUE(close(cols, T<float>({2, 2}, {0.5, 0.5, 0.5, 0.5})));
  // exp_s(0) = 1, exp_s(1) = 8/3: softmax_s([0, 1]) = [3/11, 8/11].
  auto m = eval1<Mod>(node(Op::Softmax, attrs({{AttrKey::axis, int64_t{0}}})), {T<Mod>({2}, {0, 1})});
  EXPECT_EQ(m.data.at(0), Mod(3) * Mod(11).inverse());
  EXPECT_EQ(m.data.at(1), Mod(8) * Mod(11).inverse());
}

TEST(Normalization, BatchNorm) {
  Node n = node(Op::BatchNorm, attrs({{AttrKey::epsilon, 0.0}}));
  // channel 0: (x - 1) / 2; channel 1: (x - 3) * 2 + 1
  std::vector<Tensor<double>> args = {T<double>({1, 2, 1, 2}, {1, 2, 3, 4}), T<double>({2}, {1, 2}),
                                      T<double>({2}, {0, 1}), T<double>({2}, {1, 3}), T<double>({2}, {4, 1})};
  EXPECT_TRUE(close(eval1<double>(n, args), T<double>({1, 2, 1, 2}, {0, 0.5, 1, 3}), 1e-12));
  // Mod: sqrt_s(4) = 11/8, so channel 0 is (x - 1) * 8/11.
  std::vector<Tensor<Mod>> margs = {T<Mod>({1, 2, 1, 2}, {1, 2, 3, 4}), T<Mod>({2}, {1, 2}),
                                    T<Mod>({2}, {0, 1}), T<Mod>({2}, {1, 3}), T<Mod>({2}, {4, 1})};
  Tensor<Mod> m = eval1<Mod>(n, margs);
  EXPECT_EQ(m.data.at(1), Mod(8) * Mod(11).inverse());
  EXPECT_EQ(m.data.at(3), Mod(3));  // sqrt_s(1) = 1: the real value
}

TEST(Normalization, LayerNorm) {
  Node n = node(Op::LayerNorm, attrs({{AttrKey::axis, int64_t{1}}, {AttrKey::epsilon, 0.0}}));
  auto y = eval1<double>(n, {T<double>({1, 4}, {1, 2, 3, 4}), T<double>({4}, {1, 1, 2, 2}),
                             T<double>({4}, {0, 0, 0, 1})});
  // mean 2.5, variance 1.25
  EXPECT_TRUE(close(y, T<double>({1, 4}, {-1.3416407864998738, -0.4472135954999579,
                                          0.8944271909999159, 3.6832815729997477}), 1e-12));
}

TEST(Errors, OpaqueNamesOperatorAndNode) {
  Node n = node(Op::Opaque, attrs({{AttrKey::op_type, std::string("NonMaxSuppression")}}), "nms_1");
  auto r = eval_node<float>(n, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("NonMaxSuppression"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("nms_1"), std::string::npos) << r.error().message;
}

TEST(Errors, WrongArityAndBadConv) {
  Tensor<float> x = T<float>({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor<float>* one[] = {&x};
  EXPECT_FALSE(eval_node<float>(node(Op::Conv2d), one).ok());
  Tensor<float> w(Shape{1, 3, 1, 1});  // 3 input channels against 2
  const Tensor<float>* two[] = {&x, &w};
  auto r = eval_node<float>(node(Op::Conv2d, {}, "c"), two);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("do not match"), std::string::npos) << r.error().message;
  Tensor<float> big(Shape{1, 2, 5, 5});  // kernel larger than the input
  const Tensor<float>* three[] = {&x, &big};
  EXPECT_FALSE(eval_node<float>(node(Op::Conv2d), three).ok());
}

// Integer division truncates toward zero; float division does not.
TEST(Div, IntegerQuotientsTruncateTowardZero) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input a: i64[4]
  input b: i64[4]
  input x: f32[2]
  input y: f32[2]
  %q = div(a, b)
  %h = div(x, y)
  output q = %q
  output h = %h
})");
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::map<std::string, Tensor<double>> feeds;
  feeds.emplace("a", T<double>({4}, {7, -7, 6, 1}));
  feeds.emplace("b", T<double>({4}, {2, 2, 3, 4}));
  feeds.emplace("x", T<double>({2}, {0.5, -3}));
  feeds.emplace("y", T<double>({2}, {2, 2}));
  auto r = evaluate<double>(*g, feeds);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(close((*r)[0], T<double>({4}, {3, -3, 2, 0})));
  EXPECT_TRUE(close((*r)[1], T<double>({2}, {0.25, -1.5})));
}

// A small input padded to 360 GB: the evaluation needs more than the
// machine has and says so before allocating anything.
TEST(Errors, AGraphLargerThanTheMachineIsRefusedBeforeEvaluating) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[1,1,1,1]
  %p = pad(x, pads=[0,0,0,0,0,0,300000,300000])
  %r = relu(%p)
  output y = %r
})");
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::map<std::string, Tensor<float>> feeds;
  feeds.emplace("x", T<float>({1, 1, 1, 1}, {1}));
  auto r = evaluate<float>(*g, feeds);
  ASSERT_FALSE(r.ok());
  // %p and %r, 335.3 GiB each, are alive together.
  EXPECT_EQ(r.error().message.rfind("needs 670.6 GiB for the reference executor's tensors but the "
                                    "machine has ",
                                    0),
            0u)
      << r.error().message;
}

}  // namespace
}  // namespace tso::ref
