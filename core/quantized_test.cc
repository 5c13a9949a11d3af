// What runs in a form of its own in a quantized model: quantize and
// dequantize pairs, and products on int8 kernels, found where they hold and
// not where a reader, a value or an axis differs.
#include "core/quantized.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/testing/stored_weights.h"

namespace tso {
namespace {

using testing::with_values;

int find(const Graph& g, Op op, int nth = 0) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == op && nth-- == 0) return i;
  ADD_FAILURE() << "no " << op_name(op);
  return -1;
}

// A quantized convolution as a QDQ model writes it: its input quantized and
// dequantized, its weights stored i8 and dequantized per output channel.
const char* kConv = R"(graph q {
  input x: f32[1,8,10,10]
  weight s: f32[]
  weight z: u8[]
  weight w: i8[16,8,3,3]
  weight ws: f32[16]
  weight wz: i8[16]
  weight b: f32[16]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %wd = dequantize_linear(w, ws, wz, axis=0)
  %c = conv2d(%d, %wd, b, pad=same)
  output y = %c
})";

std::map<std::string, std::vector<double>> conv_values(double weight_zero = 0) {
  return {{"s", {0.05}},
          {"z", {128}},
          {"ws", std::vector<double>(16, 0.01)},
          {"wz", std::vector<double>(16, weight_zero)}};
}

TEST(Quantized, AConvolutionOfDequantizedInputAndI8WeightsRunsOnInt8) {
  const Graph g = with_values(kConv, conv_values());
  const int conv = find(g, Op::Conv2d);
  std::optional<Int8Form> f = int8_form(g, g.node(conv));
  ASSERT_TRUE(f);
  EXPECT_FLOAT_EQ(f->sx, 0.05f);
  EXPECT_EQ(f->zx, 128);
  EXPECT_EQ(f->x_type, DType::kU8);
  EXPECT_TRUE(f->per_channel);
  EXPECT_EQ(g.node(f->wq.node).name, "w");
  std::vector<TensorType> in;
  for (TensorRef a : g.node(conv).args) in.push_back(g.type(a));
  to_run_types(g, g.node(conv), in);
  EXPECT_EQ(in[0], (TensorType{DType::kU8, Shape{1, 8, 10, 10}}));
  EXPECT_EQ(in[1], (TensorType{DType::kI8, Shape{16, 8, 3, 3}}));
  EXPECT_EQ(in[2].dtype, DType::kF32);
}

TEST(Quantized, WeightsWithAZeroPointOrScalesAlongAnotherAxisStayF32) {
  const Graph asymmetric = with_values(kConv, conv_values(1));
  EXPECT_FALSE(int8_form(asymmetric, asymmetric.node(find(asymmetric, Op::Conv2d))));
  // Scales per input channel (axis 1) are no scales per output channel.
  std::string text = kConv;
  text.replace(text.find("w: i8[16,8,3,3]"), 15, "w: i8[8,8,3,3]");
  text.replace(text.find("ws: f32[16]"), 11, "ws: f32[8]");
  text.replace(text.find("wz: i8[16]"), 10, "wz: i8[8]");
  text.replace(text.find("b: f32[16]"), 10, "b: f32[8]");
  text.replace(text.find("%wd = dequantize_linear(w, ws, wz, axis=0)"), 42,
               "%wd = dequantize_linear(w, ws, wz, axis=1)");
  const Graph other_axis = with_values(text, {{"s", {0.05}},
                                              {"z", {128}},
                                              {"ws", std::vector<double>(8, 0.01)},
                                              {"wz", {0, 0, 0, 0, 0, 0, 0, 0}}});
  EXPECT_FALSE(int8_form(other_axis, other_axis.node(find(other_axis, Op::Conv2d))));
  // f32 weights: no int8 kernel.
  const Graph f32 = with_values(R"(graph f {
  input x: f32[1,8,10,10]
  weight s: f32[]
  weight z: u8[]
  weight w: f32[16,8,3,3]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %c = conv2d(%d, w, pad=same)
  output y = %c
})",
                                {{"s", {0.05}}, {"z", {128}}});
  EXPECT_FALSE(int8_form(f32, f32.node(find(f32, Op::Conv2d))));
}

// A gemm's transposed [N, K] weights take their scales along axis 0, a
// matmul's [K, N] ones along axis 1.
TEST(Quantized, ProductsTakeScalesAlongTheirOutputAxis) {
  const char* text = R"(graph p {
  input x: f32[4,32]
  weight s: f32[]
  weight z: i8[]
  weight t: i8[16,32]
  weight ts: f32[16]
  weight tz: i8[16]
  weight m: i8[32,16]
  weight ms: f32[16]
  weight mz: i8[16]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %td = dequantize_linear(t, ts, tz, axis=0)
  %md = dequantize_linear(m, ms, mz, axis=1)
  %g = gemm(%d, %td, trans_b=1)
  %h = matmul(%d, %md)
  output y = %g
  output v = %h
})";
  const std::vector<double> zeros(16, 0), scales(16, 0.01);
  const Graph g = with_values(
      text,
      {{"s", {0.1}}, {"z", {0}}, {"ts", scales}, {"tz", zeros}, {"ms", scales}, {"mz", zeros}});
  const Node& gemm = g.node(find(g, Op::Gemm));
  const Node& matmul = g.node(find(g, Op::Matmul));
  EXPECT_EQ(int8_weights_axis(gemm), 0);
  EXPECT_EQ(int8_weights_axis(matmul), 1);
  std::optional<Int8Form> a = int8_form(g, gemm), b = int8_form(g, matmul);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->x_type, DType::kI8);
  EXPECT_TRUE(a->per_channel && b->per_channel);
}

TEST(Quantized, APairIsAQuantizeWhoseOnlyReaderUndoesIt) {
  const Graph g = with_values(kConv, conv_values());
  const int q = find(g, Op::QuantizeLinear), d = find(g, Op::DequantizeLinear);
  const std::vector<int> pairs = quantize_pairs(g);
  EXPECT_EQ(pairs[q], d);
  EXPECT_EQ(pairs[d], q);
  EXPECT_TRUE(undoes(g, g.node(q), g.node(d)));
  int paired = 0;
  for (int p : pairs) paired += p >= 0;
  EXPECT_EQ(paired, 2);  // the weights' dequantize_linear reads no quantize_linear
}

TEST(Quantized, NoPairWhereTheQuantizedTensorIsReadTwiceOrOtherValuesUndoIt) {
  const char* text = R"(graph q {
  input x: f32[1,8,4,4]
  weight s: f32[]
  weight z: u8[]
  weight t: f32[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, t, z, axis=0)
  %r = quantize_linear(x, s, z, axis=0)
  %e = dequantize_linear(%r, s, z, axis=0)
  output y = %d
  output v = %e
  output w = %r
})";
  const Graph g = with_values(text, {{"s", {0.05}}, {"z", {3}}, {"t", {0.1}}});
  const std::vector<int> pairs = quantize_pairs(g);
  for (int i = 0; i < g.size(); ++i) EXPECT_EQ(pairs[i], -1) << g.node(i).name;
  // The same scale stored twice is the same scale.
  const Graph same = with_values(text, {{"s", {0.05}}, {"z", {3}}, {"t", {0.05}}});
  const int q = find(same, Op::QuantizeLinear), d = find(same, Op::DequantizeLinear);
  EXPECT_EQ(quantize_pairs(same)[d], q);
}

// A pair whose input holds its levels already (a dequantized tensor moved,
// not computed on) is the identity; computed on, or of other parameters,
// it is not.
TEST(Quantized, APairOfMovedLevelsKeepsThem) {
  const char* text = R"(graph moved {
  input x: f32[1,4,6,6]
  weight s: f32[]
  weight z: u8[]
  weight t: f32[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %r = reshape(%d, shape=[1,4,36])
  %p = transpose(%r, perm=[0,2,1])
  %m = maxpool(%d, kernel=[2,2], stride=[2,2])
  %n = maxpool(%d, kernel=[3,3], pad=[1,1,1,1])
  %c = concat(%d, %d, axis=1)
  %a = add(%d, %d)
  %q1 = quantize_linear(%p, s, z, axis=0)
  %q2 = quantize_linear(%m, s, z, axis=0)
  %q3 = quantize_linear(%c, s, z, axis=0)
  %q4 = quantize_linear(%p, t, z, axis=0)
  %q5 = quantize_linear(%a, s, z, axis=0)
  %q6 = quantize_linear(%n, s, z, axis=0)
  output a = %q1
  output b = %q2
  output c = %q3
  output d = %q4
  output e = %q5
  output f = %q6
})";
  const Graph g = with_values(text, {{"s", {0.05}}, {"z", {7}}, {"t", {0.1}}});
  const std::vector<bool> keeps = {true, true, true, false, false, false};
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(keeps_levels(g, g.node(find(g, Op::QuantizeLinear, k + 1))), keeps[k]) << k;
  EXPECT_FALSE(keeps_levels(g, g.node(find(g, Op::QuantizeLinear))));  // reads an input
  // A scale whose levels are subnormal floats is not trusted.
  const Graph tiny = with_values(text, {{"s", {1e-40}}, {"z", {7}}, {"t", {0.1}}});
  EXPECT_FALSE(keeps_levels(tiny, tiny.node(find(tiny, Op::QuantizeLinear, 1))));
}

// A pair runs as post-ops where its scale is one stored value in range;
// a chain stays free of NaN through relu, clip, adds of finite weights or of
// dequantized tensors and products by finite non-zero weights, not through
// a product by a tensor, a weight holding 0 or inf, or an exp.
TEST(Quantized, PairsAsPostOpsAndChainsFreeOfNaN) {
  const Graph g = with_values(R"(graph chain {
  input x: f32[4,8]
  input t: f32[4,8]
  weight s: f32[]
  weight z: u8[]
  weight tiny: f32[]
  weight c: f32[8]
  weight zero: f32[8]
  weight inf: f32[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %tq = quantize_linear(x, tiny, z, axis=0)
  %r = relu(x)
  %a = add(c, %r)
  %ad = add(%a, %d)
  %m = mul(%ad, c)
  %mz = mul(%m, zero)
  %mt = mul(%m, t)
  %mi = add(%m, inf)
  %e = exp(%m)
  output a = %mz
  output b = %mt
  output c = %mi
  output d = %e
  output e = %tq
})",
                              {{"s", {0.02}},
                               {"z", {3}},
                               {"tiny", {1e-31}},
                               {"c", {1, 2, 3, 4, 5, 6, 7, 8}},
                               {"zero", {1, 1, 1, 0, 1, 1, 1, 1}},
                               {"inf", {INFINITY}}});
  const std::optional<Quantization> p = post_op_pair(g, g.node(find(g, Op::QuantizeLinear)));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->type, DType::kU8);
  EXPECT_FLOAT_EQ(p->scale, 0.02f);
  EXPECT_EQ(p->zero, 3);
  EXPECT_FALSE(post_op_pair(g, g.node(find(g, Op::QuantizeLinear, 1))));  // scale below 1e-30
  EXPECT_TRUE(keeps_nan_free(g, g.node(find(g, Op::Relu)), 0));
  EXPECT_TRUE(keeps_nan_free(g, g.node(find(g, Op::Add)), 1));     // + c
  EXPECT_TRUE(keeps_nan_free(g, g.node(find(g, Op::Add, 1)), 0));  // + dequantized
  EXPECT_TRUE(keeps_nan_free(g, g.node(find(g, Op::Mul)), 0));     // * c
  EXPECT_FALSE(keeps_nan_free(g, g.node(find(g, Op::Mul, 1)), 0));  // * a weight with 0
  EXPECT_FALSE(keeps_nan_free(g, g.node(find(g, Op::Mul, 2)), 0));  // * a tensor
  EXPECT_FALSE(keeps_nan_free(g, g.node(find(g, Op::Add, 2)), 0));  // + inf
  EXPECT_FALSE(keeps_nan_free(g, g.node(find(g, Op::Exp)), 0));
  EXPECT_FALSE(runs_int8(g, g.node(find(g, Op::Mul))));
}

}  // namespace
}  // namespace tso
