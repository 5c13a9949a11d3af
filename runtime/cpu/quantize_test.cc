// quantize_linear and dequantize_linear on the CPU runtime: the own steps
// and the pair step against the reference executor, value for value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "core/quantized.h"
#include "core/testing/stored_weights.h"
#include "core/text_format.h"
#include "runtime/cpu/dnnl_util.h"
#include "runtime/cpu/executor.h"
#include "runtime/cpu/executor_testing.h"
#include "runtime/reference/executor.h"

namespace tso::cpu {
namespace {

using tso::testing::with_values;

// Runs `g` on input "x" = `x` on `threads` threads and expects every output
// to equal the reference executor's, element for element (as f32, integer
// outputs converted); returns them. Not on Winograd: where products run in
// f32 (int8_sums_exact()), its 4x4 tiles' transforms round (by 1/6, 1/24),
// which flips a level now and then; every other kernel sums these values
// exactly.
std::vector<std::vector<float>> expect_equal_to_reference(const Graph& g, std::vector<float> x,
                                                          int threads) {
  const Shape shape = g.node(g.input_nodes()[0]).outs[0].shape;
  std::map<std::string, ref::Tensor<float>> feed;
  feed["x"] = ref::Tensor<float>(shape, x);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feed);
  EXPECT_TRUE(want.ok()) << want.error().message;
  ExecutorOptions o;
  o.threads = threads;
  o.winograd = ExecutorOptions::Choice::kOff;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!want || !ex) return {};
  EXPECT_TRUE((*ex)->set_input("x", std::span<const float>(x)).ok());
  const Status s = (*ex)->run();
  EXPECT_TRUE(s.ok()) << s.error().message;
  std::vector<std::vector<float>> outs;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    Expected<std::vector<std::byte>> bytes = (*ex)->output_bytes(static_cast<int>(k));
    EXPECT_TRUE(bytes.ok()) << bytes.error().message;
    if (!bytes) return {};
    const DType t = g.type(g.outputs()[k].ref).dtype;
    std::vector<float> got;
    for (size_t i = 0; i < bytes->size() / dtype_bytes(t); ++i) {
      const std::byte* p = bytes->data() + i * dtype_bytes(t);
      float v = 0;
      if (t == DType::kF32)
        std::memcpy(&v, p, 4);
      else if (t == DType::kU8)
        v = static_cast<float>(static_cast<uint8_t>(*p));
      else
        v = static_cast<float>(static_cast<int8_t>(*p));
      got.push_back(v);
    }
    const std::vector<float>& w = (*want)[k].data;
    EXPECT_EQ(got.size(), w.size()) << g.outputs()[k].name;
    for (size_t i = 0; i < std::min(got.size(), w.size()); ++i) {
      if (std::isnan(w[i]))
        EXPECT_TRUE(std::isnan(got[i])) << g.outputs()[k].name << " " << i;
      else
        EXPECT_EQ(got[i], w[i]) << g.outputs()[k].name << " at " << i;
    }
    outs.push_back(std::move(got));
  }
  return outs;
}

// `g`'s f32 outputs for input "x" = `x` on the CPU runtime, and the
// reference executor's; empty after a failure, which it reports.
struct Runs {
  std::vector<std::vector<float>> cpu;
  std::vector<ref::Tensor<float>> reference;
};

Runs run_both(const Graph& g, const std::vector<float>& x) {
  std::map<std::string, ref::Tensor<float>> feed;
  feed["x"] = ref::Tensor<float>(g.node(g.input_nodes()[0]).outs[0].shape, x);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feed);
  EXPECT_TRUE(want.ok()) << want.error().message;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!want || !ex || !(*ex)->set_input("x", std::span<const float>(x)).ok() || !(*ex)->run().ok())
    return {};
  Runs r{{}, std::move(*want)};
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(k));
    EXPECT_TRUE(got.ok()) << got.error().message;
    if (!got) return {};
    r.cpu.push_back(std::move(*got));
  }
  return r;
}

// Whether output k agrees with the reference to `tolerance` of its largest
// magnitude.
void expect_close(const Runs& r, size_t k, float tolerance) {
  float largest = 0;
  for (float v : r.reference[k].data) largest = std::max(largest, std::abs(v));
  for (size_t i = 0; i < r.cpu[k].size(); ++i)
    EXPECT_NEAR(r.cpu[k][i], r.reference[k].data[i], tolerance * largest) << k << " at " << i;
}

// Where oneDNN's int8 sums saturate (no VNNI, int8_sums_exact()), products
// run in f32 and no step is an int8 kernel; the values must agree either way.
int int8_steps(int n) { return int8_sums_exact() ? n : 0; }

constexpr const char* kNoExactInt8 =
    "this host's int8 kernels saturate (no VNNI): products run in f32, without int8 steps";

int steps_named(const Graph& g, const std::string& prefix) {
  int count = 0;
  for (const StepTime& s : testing::profiled_steps(g, {})) count += s.what.starts_with(prefix);
  return count;
}

// Ties round to even, values past the range saturate, NaN takes the zero
// point; u8 and i8, with a zero point and without. 19 elements: two vectors
// of eight and three by the scalar loop.
TEST(CpuQuantize, RoundsTiesToEvenSaturatesAndMapsNaNToTheZeroPoint) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const Graph g = with_values(R"(graph q {
  input x: f32[19]
  weight s: f32[]
  weight z: u8[]
  weight zi: i8[1]
  %u = quantize_linear(x, s, z, axis=0)
  %i = quantize_linear(x, s, zi, axis=0)
  %du = dequantize_linear(%u, s, z, axis=0)
  %di = dequantize_linear(%i, s, zi, axis=0)
  output u = %u
  output i = %i
  output du = %du
  output di = %di
})",
                              {{"s", {0.5}}, {"z", {10}}, {"zi", {-3}}});
  const std::vector<float> x = {0.25f, 0.75f, 1.25f,      -0.25f, -0.75f, 1e10f,   -1e10f,
                                nan,   inf,   -inf,       63.75f, 63.25f, -64.25f, -65.75f,
                                0.f,   1.f,   0.2499999f, 2.f,    -3.f};
  for (int threads : {1, 2}) {
    const std::vector<std::vector<float>> out = expect_equal_to_reference(g, x, threads);
    ASSERT_EQ(out.size(), 4u);
    // x / 0.5 = 0.5, 1.5, 2.5, -0.5, -1.5 round to 0, 2, 2, -0, -2.
    // 63.75 / 0.5 = 127.5 rounds to 128, 63.25 / 0.5 = 126.5 to 126.
    EXPECT_EQ(out[0], (std::vector<float>{10, 12, 12, 10, 8, 255, 0, 10, 255, 0, 138, 136, 0, 0, 10,
                                          12, 10, 14, 4}));
    EXPECT_EQ(out[1], (std::vector<float>{-3, -1, -1, -3, -5, 127, -128, -3, 127, -128, 125, 123,
                                          -128, -128, -3, -1, -3, 1, -9}));
  }
}

// A quantize_linear whose only reader is a dequantize_linear of the same
// parameters runs with it as one step on the convolution's output in the
// layout the convolution wrote (no reorder between the two convolutions);
// one per axis, or read twice, runs as two own steps on row-major tensors.
// Integer inputs and weights keep the 1x1 convolutions exact, and a scale
// of 2 puts every odd sum on a tie.
TEST(CpuQuantize, APairRunsAsOneStepInTheConvolutionsLayout) {
  std::map<std::string, std::vector<double>> values = {{"s", {2}}, {"z", {128}}, {"zi", {0}},
                                                       {"cs", {}}, {"cz", {}},   {"w", {}}};
  std::mt19937_64 rng(7);
  for (int k = 0; k < 32; ++k) {
    values["cs"].push_back(0.25 * (1 + k % 3));
    values["cz"].push_back(k % 5 - 2);
  }
  for (int k = 0; k < 32 * 32; ++k) values["w"].push_back(static_cast<int>(rng() % 5) - 2);
  const Graph g = with_values(R"(graph pair {
  input x: f32[1,32,9,9]
  weight w: f32[32,32,1,1]
  weight s: f32[]
  weight z: u8[]
  weight zi: i8[]
  weight cs: f32[32]
  weight cz: i8[32]
  %c = conv2d(x, w)
  %q = quantize_linear(%c, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %c2 = conv2d(%d, w)
  %q2 = quantize_linear(x, cs, cz, axis=1)
  %d2 = dequantize_linear(%q2, cs, cz, axis=1)
  %q3 = quantize_linear(%c2, s, zi, axis=0)
  %d3 = dequantize_linear(%q3, s, zi, axis=0)
  output y = %c2
  output d2 = %d2
  output q3 = %q3
  output d3 = %d3
})",
                              values);
  std::vector<float> x(32 * 81);
  for (float& v : x) v = static_cast<float>(static_cast<int>(rng() % 41) - 20);
  for (int threads : {1, 2}) expect_equal_to_reference(g, x, threads);
  int pairs = 0, own = 0;
  for (const StepTime& s : testing::profiled_steps(g, {})) {
    pairs += s.what == "quantize and dequantize (own)";
    own += s.what == "quantize_linear (own)" || s.what == "dequantize_linear (own)";
  }
  EXPECT_EQ(pairs, 1);
  EXPECT_EQ(own, 4);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().fused_nodes, 1);
  // x into the convolution's layout, %c2 to row-major for its own steps and
  // the output; none around the pair (two more if it ran row-major).
  EXPECT_EQ((*ex)->stats().reorders, 2);
}

// A convolution of a quantized model (its input and its i8 weights, per
// output channel, dequantized; an i32 bias) runs on oneDNN's int8 kernels,
// with its padding read as the input's zero point. It sums in int32, exactly,
// where the reference sums the dequantized values in f32: the convolution's
// output agrees to rounding, and the quantized output to one quantum.
TEST(CpuQuantize, AQuantizedConvolutionRunsOnInt8Kernels) {
  std::mt19937_64 rng(11);
  std::map<std::string, std::vector<double>> values = {
      {"s", {0.05}}, {"z", {120}}, {"ys", {0.1}}, {"yz", {3}}};
  for (int k = 0; k < 32 * 16 * 9; ++k) values["wq"].push_back(static_cast<int>(rng() % 255) - 127);
  for (int k = 0; k < 32; ++k) {
    values["ws"].push_back(0.001 * (1 + k % 7));
    values["wz"].push_back(0);
    values["bq"].push_back(static_cast<int>(rng() % 20001) - 10000);
    values["bs"].push_back(0.05 * values["ws"].back());
    values["bz"].push_back(0);
  }
  const Graph g = with_values(R"(graph int8 {
  input x: f32[1,16,10,10]
  weight s: f32[]
  weight z: u8[]
  weight wq: i8[32,16,3,3]
  weight ws: f32[32]
  weight wz: i8[32]
  weight bq: i32[32]
  weight bs: f32[32]
  weight bz: i32[32]
  weight ys: f32[]
  weight yz: u8[]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=0)
  %bd = dequantize_linear(bq, bs, bz, axis=0)
  %c = conv2d(%xd, %wd, %bd, pad=same, act=relu)
  %yq = quantize_linear(%c, ys, yz, axis=0)
  %y = dequantize_linear(%yq, ys, yz, axis=0)
  output c = %c
  output y = %y
})",
                              values);
  std::vector<float> x(16 * 100);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (float& v : x) v = normal(rng);
  const Runs r = run_both(g, x);
  ASSERT_EQ(r.cpu.size(), 2u);
  expect_close(r, 0, 1e-5f);
  int off = 0;
  for (size_t i = 0; i < r.cpu[1].size(); ++i) {
    EXPECT_NEAR(r.cpu[1][i], r.reference[1].data[i], 0.1f * 1.0001f) << i;
    off += r.cpu[1][i] != r.reference[1].data[i];
  }
  EXPECT_LE(off, static_cast<int>(r.cpu[1].size() / 100));
  EXPECT_EQ(steps_named(g, "conv int8"), int8_steps(1));
}

// Two int8 convolutions of one dequantized input (SqueezeNet's expand pair)
// read one quantized copy of it: the pair's input quantized once by the
// pair's own formula, not the pair's floats quantized back by a reorder;
// the pair step, read by nothing else, is dropped. Where the dequantized
// values are read too (a graph output here), the pair step stays.
TEST(CpuQuantize, ConvolutionsOfOneInputShareItsQuantizedCopy) {
  if (!int8_sums_exact()) GTEST_SKIP() << kNoExactInt8;
  std::map<std::string, std::vector<double>> values = {
      {"s", {0.05}}, {"z", {128}}, {"ws", {0.01}}, {"wz", {0}}};
  for (int k = 0; k < 8 * 8 * 9; ++k) values["w3"].push_back(k % 7 - 3);
  for (int k = 0; k < 8 * 8; ++k) values["w1"].push_back(k % 5 - 2);
  const std::string text = R"(graph expand {
  input x: f32[1,8,6,6]
  weight s: f32[]
  weight z: u8[]
  weight w1: i8[8,8,1,1]
  weight w3: i8[8,8,3,3]
  weight ws: f32[]
  weight wz: i8[]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %d1 = dequantize_linear(w1, ws, wz, axis=0)
  %d3 = dequantize_linear(w3, ws, wz, axis=0)
  %a = conv2d(%xd, %d1)
  %b = conv2d(%xd, %d3, pad=same)
  output a = %a
  output b = %b
)";
  std::vector<float> x(8 * 36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 23) - 1.f;
  for (bool read_too : {false, true}) {
    SCOPED_TRACE(read_too ? "dequantized values read too" : "read by int8 kernels only");
    const Graph g = with_values(text + (read_too ? "  output d = %xd\n}" : "}"), values);
    const Runs r = run_both(g, x);
    ASSERT_EQ(r.cpu.size(), read_too ? 3u : 2u);
    for (size_t k = 0; k < r.cpu.size(); ++k) expect_close(r, k, 1e-5f);
    EXPECT_EQ(steps_named(g, "conv int8"), 2);
    EXPECT_EQ(steps_named(g, "quantize (own)"), 1);
    EXPECT_EQ(steps_named(g, "quantize and dequantize"), read_too ? 1 : 0);
    EXPECT_EQ(steps_named(g, "quantize jit"), 0);
  }
}

// Grouped convolutions (ResNeXt's 32 groups, a depthwise one) of a quantized
// model, with a scale per output channel, on int8 kernels too: the weights
// seen as [groups, O/groups, I/groups, KH, KW], their scales along both
// first dimensions.
TEST(CpuQuantize, GroupedAndDepthwiseConvolutionsRunOnInt8Kernels) {
  std::mt19937_64 rng(17);
  std::map<std::string, std::vector<double>> values = {{"s", {0.05}}, {"z", {100}}};
  for (int k = 0; k < 32 * 4 * 9; ++k) values["wg"].push_back(static_cast<int>(rng() % 255) - 127);
  for (int k = 0; k < 32 * 9; ++k) values["wd"].push_back(static_cast<int>(rng() % 255) - 127);
  for (int k = 0; k < 32; ++k) {
    values["ws"].push_back(0.001 * (1 + k % 5));
    values["wz"].push_back(0);
  }
  const Graph g = with_values(R"(graph grouped {
  input x: f32[1,32,9,9]
  weight s: f32[]
  weight z: u8[]
  weight wg: i8[32,4,3,3]
  weight wd: i8[32,1,3,3]
  weight ws: f32[32]
  weight wz: i8[32]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %gd = dequantize_linear(wg, ws, wz, axis=0)
  %dd = dequantize_linear(wd, ws, wz, axis=0)
  %a = conv2d(%xd, %gd, pad=same, groups=8)
  %b = conv2d(%xd, %dd, stride=[2,2], pad=same, groups=32)
  output a = %a
  output b = %b
})",
                              values);
  std::vector<float> x(32 * 81);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (float& v : x) v = normal(rng);
  const Runs r = run_both(g, x);
  ASSERT_EQ(r.cpu.size(), 2u);
  for (size_t k = 0; k < 2; ++k) expect_close(r, k, 1e-5f);
  EXPECT_EQ(steps_named(g, "conv int8"), int8_steps(2));
}

// A transposed dequantized tensor quantized again with its parameters (a
// QDQ model's transpose) is left as it is: no step, and the reference's
// values, bit for bit (near-ties and saturated values included).
TEST(CpuQuantize, APairOfMovedLevelsRunsNothing) {
  const Graph g = with_values(R"(graph moved {
  input x: f32[2,3,40]
  weight s: f32[]
  weight z: i8[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %t = transpose(%d, perm=[0,2,1])
  %r = quantize_linear(%t, s, z, axis=0)
  %e = dequantize_linear(%r, s, z, axis=0)
  output y = %e
})",
                              {{"s", {0.0173}}, {"z", {-5}}});
  std::vector<float> x(240);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> level(-140, 140);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (static_cast<float>(level(rng)) + (i % 3 == 0 ? 0.5f : 0.f)) * 0.0173f;
  for (int threads : {1, 2}) expect_equal_to_reference(g, x, threads);
  EXPECT_EQ(steps_named(g, "quantize and dequantize"), 1);
}

// Products by quantized weights, [K, N] with a scale per column and [N, K]
// (gemm, trans_b) with a scale per row, of a dequantized input with a zero
// point, run on oneDNN's int8 matmul: its exact int32 sums agree with the
// reference's f32 sums to rounding.
TEST(CpuQuantize, QuantizedProductsRunOnInt8Kernels) {
  std::mt19937_64 rng(13);
  std::map<std::string, std::vector<double>> values = {{"s", {0.02}}, {"z", {7}}};
  for (int k = 0; k < 32 * 16; ++k) {
    values["wq"].push_back(static_cast<int>(rng() % 255) - 127);
    values["tq"].push_back(static_cast<int>(rng() % 255) - 127);
  }
  for (int k = 0; k < 16; ++k) {
    values["ws"].push_back(0.001 * (1 + k % 5));
    values["wz"].push_back(0);
    values["c"].push_back(0.1 * (k % 3));
  }
  const Graph g = with_values(R"(graph products {
  input x: f32[2,8,32]
  weight s: f32[]
  weight z: u8[]
  weight wq: i8[32,16]
  weight tq: i8[16,32]
  weight ws: f32[16]
  weight wz: i8[16]
  weight c: f32[16]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=1)
  %td = dequantize_linear(tq, ws, wz, axis=0)
  %m = matmul(%xd, %wd)
  %a = add(%m, c)
  %r = reshape(x, shape=[16,32])
  %rq = quantize_linear(%r, s, z, axis=0)
  %rd = dequantize_linear(%rq, s, z, axis=0)
  %t = gemm(%rd, %td, c, trans_b=1)
  output a = %a
  output t = %t
})",
                              values);
  std::vector<float> x(2 * 8 * 32);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (float& v : x) v = normal(rng);
  const Runs r = run_both(g, x);
  ASSERT_EQ(r.cpu.size(), 2u);
  for (size_t k = 0; k < 2; ++k) expect_close(r, k, 1e-5f);
  EXPECT_EQ(steps_named(g, "matmul int8"), int8_steps(2));
}


// Products by weights within [-64, 64] (ONNX Runtime's reduce_range) run on
// int8 kernels on every host, without VNNI too, where two products of the
// largest u8 level by such weights fit int16 (int8_kernel_exact). The
// input's levels are mostly 0 and 255 and the weights mostly -64 and 64, so
// that neighbouring products sum to 32,640: the sums agree with the
// reference's to rounding. A convolution with one weight of 65 runs on int8
// kernels only where int8 sums are exact, and so does the gemm: oneDNN's
// only int8 matmul without VNNI is its gemm one, which the runtime leaves
// for the f32 kernels (lower_int8.cc's slow).
TEST(CpuQuantize, ProductsByWeightsWithinSevenBitsRunOnInt8KernelsOnEveryHost) {
  std::mt19937_64 rng(17);
  const auto extreme = [&rng](int most) {
    const uint64_t r = rng() % 10;
    return r < 9 ? (r % 2 ? most : -most) : static_cast<int>(rng() % (2 * most + 1)) - most;
  };
  std::map<std::string, std::vector<double>> values = {{"s", {0.05}}, {"z", {120}}};
  for (int k = 0; k < 32 * 16 * 9; ++k) {
    values["wq"].push_back(extreme(64));
    values["vq"].push_back(k == 100 ? 65 : extreme(64));
  }
  for (int k = 0; k < 32 * 16; ++k) values["tq"].push_back(extreme(64));
  for (int k = 0; k < 32; ++k) {
    values["ws"].push_back(0.001 * (1 + k % 7));
    values["wz"].push_back(0);
  }
  const Graph g = with_values(R"(graph seven_bits {
  input x: f32[1,16,10,10]
  weight s: f32[]
  weight z: u8[]
  weight wq: i8[32,16,3,3]
  weight vq: i8[32,16,3,3]
  weight tq: i8[32,16]
  weight ws: f32[32]
  weight wz: i8[32]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=0)
  %vd = dequantize_linear(vq, ws, wz, axis=0)
  %td = dequantize_linear(tq, ws, wz, axis=0)
  %c = conv2d(%xd, %wd, pad=same)
  %v = conv2d(%xd, %vd, pad=same)
  %rows = reshape(x, shape=[100,16])
  %rq = quantize_linear(%rows, s, z, axis=0)
  %rd = dequantize_linear(%rq, s, z, axis=0)
  %t = gemm(%rd, %td, trans_b=1)
  output c = %c
  output v = %v
  output t = %t
})",
                              values);
  std::vector<float> x(16 * 100);
  for (float& v : x) v = rng() % 5 == 0 ? 0.05f * static_cast<float>(rng() % 256) : 20.f;
  const Runs r = run_both(g, x);
  ASSERT_EQ(r.cpu.size(), 3u);
  for (size_t k = 0; k < 3; ++k) expect_close(r, k, 1e-5f);
  EXPECT_EQ(steps_named(g, "conv int8"), 1 + int8_steps(1));
  EXPECT_EQ(steps_named(g, "matmul int8"), int8_steps(1));
}

// `g`'s outputs for input "x" = `x` on the CPU runtime with `o`, as bytes.
std::vector<std::vector<std::byte>> output_bytes(const Graph& g, const std::vector<float>& x,
                                                 const ExecutorOptions& o) {
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!ex || !(*ex)->set_input("x", std::span<const float>(x)).ok() || !(*ex)->run().ok())
    return {};
  std::vector<std::vector<std::byte>> outs;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    Expected<std::vector<std::byte>> bytes = (*ex)->output_bytes(static_cast<int>(k));
    EXPECT_TRUE(bytes.ok()) << bytes.error().message;
    if (bytes) outs.push_back(std::move(*bytes));
  }
  return outs;
}

int steps_with(const std::vector<StepTime>& steps, const std::string& part) {
  int count = 0;
  for (const StepTime& s : steps) count += s.nodes.find(part) != std::string::npos;
  return count;
}

// A transformer's projection as ONNX Runtime's quantizer writes it: the
// int8 product, its bias and the residual add (a dequantized tensor), each
// quantized and dequantized again. The three pairs run in the product's
// kernel (divide, round, clip, scale): the same bytes as the steps of an
// unfused plan, where each pair is a step of its own. The pairs' scales are
// odd multiples of powers of two (3, 5 and 7), the other scales powers of
// two and the bias on their grid, so that many quotients are exact ties,
// which round to even: multiplying by the scale's reciprocal instead of
// dividing rounds some of them the other way.
TEST(CpuQuantize, PairsAfterAnInt8KernelRunInItsPostOps) {
  if (!int8_sums_exact()) GTEST_SKIP() << kNoExactInt8;
  constexpr int kRows = 2048, kDepth = 48, kCols = 512;
  std::mt19937_64 rng(29);
  std::map<std::string, std::vector<double>> values = {
      {"s", {0.0625}},    {"z", {131}}, {"s1", {3.0 / 512}}, {"z1", {120}},
      {"s2", {5.0 / 256}}, {"z2", {0}}, {"s3", {7.0 / 128}}, {"z3", {-3}},
      {"ws", {1.0 / 64}},  {"wz", {0}}};
  for (int k = 0; k < kDepth * kCols; ++k)
    values["wq"].push_back(static_cast<int>(rng() % 7) - 3);
  for (int k = 0; k < kRows * kCols; ++k)
    values["e"].push_back(static_cast<double>(100 + rng() % 61));
  for (int k = 0; k < kCols; ++k) values["b"].push_back((static_cast<int>(k % 9) - 4) / 512.0);
  const std::string d = std::to_string(kDepth), c = std::to_string(kCols);
  const Graph g = with_values(R"(graph projection {
  input x: f32[1,)" + std::to_string(kRows) + "," + d + R"(]
  weight s: f32[]
  weight z: u8[]
  weight s1: f32[]
  weight z1: u8[]
  weight s2: f32[]
  weight z2: u8[]
  weight s3: f32[]
  weight z3: i8[]
  weight wq: i8[)" + d + "," + c + R"(]
  weight ws: f32[]
  weight wz: i8[]
  weight b: f32[)" + c + R"(]
  weight e: u8[1,)" + std::to_string(kRows) + "," + c + R"(]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=1)
  %m = matmul(%xd, %wd)
  %mq = quantize_linear(%m, s1, z1, axis=0)
  %md = dequantize_linear(%mq, s1, z1, axis=0)
  %a = add(%md, b)
  %aq = quantize_linear(%a, s2, z2, axis=0)
  %ad = dequantize_linear(%aq, s2, z2, axis=0)
  %ed = dequantize_linear(e, s, z, axis=0)
  %r = add(%ad, %ed)
  %rq = quantize_linear(%r, s3, z3, axis=0)
  %rd = dequantize_linear(%rq, s3, z3, axis=0)
  output y = %rd
})",
                              values);
  std::vector<float> x(kRows * kDepth);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (float& v : x) v = normal(rng);
  ExecutorOptions unfused;
  unfused.fuse = false;
  const std::vector<std::vector<std::byte>> fused = output_bytes(g, x, {}),
                                            apart = output_bytes(g, x, unfused);
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(apart.size(), 1u);
  EXPECT_TRUE(fused[0] == apart[0]);
  const std::vector<StepTime> steps = testing::profiled_steps(g, {});
  EXPECT_EQ(steps_with(steps, "(matmul) + quantize pair + add + quantize pair + add + quantize pair"),
            1);
  EXPECT_EQ(steps_named(g, "quantize and dequantize"), 0);
}

// An int8 convolution whose result, past its pair, only int8 convolutions
// read (SqueezeNet's squeeze and its two expands) writes the pair's levels,
// u8, which they read as they are: no step quantizes its floats back. The
// bytes equal the unfused plan's, where the pair is a step of its own and
// each expand quantizes its floats. Where the floats are read too (a graph
// output here) it writes them, and the expands quantize them.
TEST(CpuQuantize, AnInt8ConvolutionWritesTheLevelsItsInt8ReadersRead) {
  if (!int8_sums_exact()) GTEST_SKIP() << kNoExactInt8;
  std::mt19937_64 rng(31);
  std::map<std::string, std::vector<double>> values = {
      {"s", {0.05}},  {"z", {128}}, {"s1", {3.0 / 64}},  {"z1", {7}},
      {"s2", {0.25}}, {"z2", {-2}}, {"ws", {1.0 / 128}}, {"wz", {0}}};
  for (int k = 0; k < 16 * 8; ++k) values["wq"].push_back(static_cast<int>(rng() % 15) - 7);
  for (int k = 0; k < 8 * 16; ++k) values["w1"].push_back(static_cast<int>(rng() % 15) - 7);
  for (int k = 0; k < 8 * 16 * 9; ++k) values["w3"].push_back(static_cast<int>(rng() % 15) - 7);
  const std::string text = R"(graph fire {
  input x: f32[1,8,12,12]
  weight s: f32[]
  weight z: u8[]
  weight s1: f32[]
  weight z1: u8[]
  weight s2: f32[]
  weight z2: i8[]
  weight wq: i8[16,8,1,1]
  weight w1: i8[8,16,1,1]
  weight w3: i8[8,16,3,3]
  weight ws: f32[]
  weight wz: i8[]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=0)
  %d1 = dequantize_linear(w1, ws, wz, axis=0)
  %d3 = dequantize_linear(w3, ws, wz, axis=0)
  %c = conv2d(%xd, %wd, act=relu)
  %cq = quantize_linear(%c, s1, z1, axis=0)
  %cd = dequantize_linear(%cq, s1, z1, axis=0)
  %a = conv2d(%cd, %d1)
  %aq = quantize_linear(%a, s2, z2, axis=0)
  %ad = dequantize_linear(%aq, s2, z2, axis=0)
  %b = conv2d(%cd, %d3, pad=same)
  %bq = quantize_linear(%b, s2, z2, axis=0)
  %bd = dequantize_linear(%bq, s2, z2, axis=0)
  output a = %ad
  output b = %bd
)";
  std::vector<float> x(8 * 144);
  std::normal_distribution<float> normal(0.f, 2.f);
  for (float& v : x) v = normal(rng);
  ExecutorOptions unfused;
  unfused.fuse = false;
  for (bool read_too : {false, true}) {
    SCOPED_TRACE(read_too ? "its floats read too" : "read by int8 kernels only");
    const Graph g = with_values(text + (read_too ? "  output c = %cd\n}" : "}"), values);
    const std::vector<std::vector<std::byte>> fused = output_bytes(g, x, {}),
                                              apart = output_bytes(g, x, unfused);
    ASSERT_EQ(fused.size(), read_too ? 3u : 2u);
    EXPECT_TRUE(fused == apart);
    const std::vector<StepTime> steps = testing::profiled_steps(g, {});
    EXPECT_EQ(steps_with(steps, "(conv2d) + relu + quantize pair"), read_too ? 1 : 0);
    EXPECT_EQ(steps_named(g, "conv int8"), 3);
    // x's quantization, and the expands' input unless it holds levels.
    EXPECT_EQ(steps_named(g, "quantize (own)"), read_too ? 2 : 1);
    EXPECT_EQ(steps_named(g, "dequantize (own)"), 0);
  }
}

// Where a NaN could reach a pair, or no int8 kernel computes its chain, the
// pair stays a step of its own: a product by a tensor (0 times inf), an f32
// product.
TEST(CpuQuantize, APairWhereNaNCouldReachItIsAStep) {
  std::map<std::string, std::vector<double>> values = {{"s", {0.02}}, {"z", {128}}};
  for (int k = 0; k < 16 * 16; ++k) {
    values["wq"].push_back(k % 17 - 8);
    values["wf"].push_back(0.01 * (k % 13));
  }
  for (int k = 0; k < 16; ++k) values["ws"].push_back(0.001), values["wz"].push_back(0);
  const Graph g = with_values(R"(graph near_misses {
  input x: f32[4,16]
  weight s: f32[]
  weight z: u8[]
  weight wq: i8[16,16]
  weight ws: f32[16]
  weight wz: i8[16]
  weight wf: f32[16,16]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=1)
  %m = matmul(%xd, %wd)
  %p = mul(%m, x)
  %pq = quantize_linear(%p, s, z, axis=0)
  %pd = dequantize_linear(%pq, s, z, axis=0)
  %f = matmul(%xd, wf)
  %fq = quantize_linear(%f, s, z, axis=0)
  %fd = dequantize_linear(%fq, s, z, axis=0)
  output p = %pd
  output f = %fd
})",
                              values);
  const std::vector<StepTime> steps = testing::profiled_steps(g, {});
  EXPECT_EQ(steps_with(steps, "quantize pair"), 0);
  EXPECT_EQ(steps_named(g, "quantize and dequantize"), 3);
  std::vector<float> x(4 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 9) - 0.4f;
  expect_equal_to_reference(g, x, 2);
}

// Attention's products of two dequantized activations, batched, run on
// oneDNN's int8 matmul: u8 operands (the second read as s8, its levels and
// zero point less 128) and i8 ones. Powers-of-two scales keep the
// reference's f32 sums exact, so the values agree bit for bit.
TEST(CpuQuantize, ProductsOfTwoDequantizedActivationsRunOnInt8Kernels) {
  for (const char* type : {"u8", "i8"}) {
    SCOPED_TRACE(type);
    const std::string t = type;
    const Graph g = with_values(R"(graph attention {
  input x: f32[2,3,4,5]
  weight s: f32[]
  weight za: )" + t + R"([]
  weight zb: )" + t + R"([]
  weight ys: f32[]
  weight yz: )" + t + R"([]
  %aq = quantize_linear(x, s, za, axis=0)
  %a = dequantize_linear(%aq, s, za, axis=0)
  %t = transpose(x, perm=[0,1,3,2])
  %bq = quantize_linear(%t, s, zb, axis=0)
  %b = dequantize_linear(%bq, s, zb, axis=0)
  %m = matmul(%a, %b)
  %yq = quantize_linear(%m, ys, yz, axis=0)
  %y = dequantize_linear(%yq, ys, yz, axis=0)
  output m = %m
  output y = %y
})",
                                {{"s", {0.125}},
                                 {"za", {t == "u8" ? 131. : 3.}},
                                 {"zb", {t == "u8" ? 120. : -7.}},
                                 {"ys", {0.5}},
                                 {"yz", {t == "u8" ? 128. : 0.}}});
    std::vector<float> x(120);
    std::mt19937_64 rng(21);
    std::normal_distribution<float> normal(0.f, 4.f);
    for (float& v : x) v = normal(rng);
    for (int threads : {1, 2}) expect_equal_to_reference(g, x, threads);
    EXPECT_EQ(steps_named(g, "matmul int8"), int8_steps(1));
  }
}

// Random quantized networks, SqueezeNet- and transformer-like: int8
// convolutions (plain, grouped, depthwise; a scale per tensor or per output
// channel), concatenated branches of shared parameters, reshapes and
// transposes quantized again with their input's parameters (pairs that keep
// their levels), max-pools, relus and a gemm head, with a quantize and
// dequantize pair after each. Scales are powers of two and weights small
// integers, so every f32 sum of the reference executor is exact, as the
// int8 kernels' int32 sums are: the CPU runtime must give the reference's
// values bit for bit, on one thread and two.
class QuantizedNetwork {
 public:
  explicit QuantizedNetwork(uint64_t seed) : rng_(seed) {}

  Graph build() {
    const int64_t c = pick({4, 8, 16}), h = pick({4, 6, 8});
    text_ = "graph net {\n  input x: f32[1," + std::to_string(c) + "," + std::to_string(h) + "," +
            std::to_string(h) + "]\n";
    Tensor t = pair(Tensor{"x", c, h, {}}, fresh_params());
    const int layers = static_cast<int>(range(3, 6));
    for (int l = 0; l < layers; ++l) {
      const int kind = static_cast<int>(range(0, 9));
      if (kind < 4)
        t = pair(conv(t), fresh_params());
      else if (kind < 6)
        t = moved(t);
      else if (kind < 7 && t.h % 2 == 0)
        t = pair(op("maxpool", t.name, "kernel=[2,2], stride=[2,2]", t.c, t.h / 2), t.params);
      else
        t = branches(t);
    }
    const int64_t n = pick({3, 10});
    const std::string w = int8_weights({n, t.c * t.h * t.h}, true, 0);
    const std::string f = op("flatten", t.name, "axis=1", 0, 0).name;
    text_ += "  %y = gemm(" + f + ", " + w + ", trans_b=1)\n  output y = %y\n}\n";
    return with_values(text_, values_);
  }

 private:
  struct Params {
    std::string scale, zero;
  };
  struct Tensor {
    std::string name;
    int64_t c = 0, h = 0;
    Params params;
  };

  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  int64_t pick(std::initializer_list<int64_t> v) {
    return *(v.begin() + range(0, static_cast<int64_t>(v.size()) - 1));
  }
  std::string name(const char* prefix) { return prefix + std::to_string(next_++); }

  std::string weight(const std::string& type, std::vector<double> v) {
    const std::string n = name("w");
    text_ += "  weight " + n + ": " + type + "\n";
    values_[n] = std::move(v);
    return n;
  }
  // A scale of 2^-k and a zero point, u8 or i8.
  Params fresh_params() {
    const bool u8 = range(0, 1) == 1;
    const double zero = static_cast<double>(u8 ? range(0, 255) : range(-20, 20));
    return {weight("f32[]", {std::ldexp(1.0, -static_cast<int>(range(2, 5)))}),
            weight(u8 ? "u8[]" : "i8[]", {zero})};
  }
  Tensor op(const std::string& what, const std::string& args, const std::string& attrs,
            int64_t c, int64_t h) {
    const std::string n = name("%t");
    text_ += "  " + n + " = " + what + "(" + args + (attrs.empty() ? "" : ", " + attrs) + ")\n";
    return {n, c, h, {}};
  }
  Tensor pair(const Tensor& t, const Params& p) {
    const std::string q = op("quantize_linear", t.name + ", " + p.scale + ", " + p.zero,
                             "axis=0", 0, 0).name;
    Tensor d = op("dequantize_linear", q + ", " + p.scale + ", " + p.zero, "axis=0", t.c, t.h);
    d.params = p;
    return d;
  }
  // Stored i8 weights of small values, dequantized with powers of two, per
  // output channel (along `axis`) or per tensor.
  std::string int8_weights(const std::vector<int64_t>& shape, bool per_channel, int axis) {
    int64_t count = 1;
    std::string dims;
    for (int64_t d : shape) count *= d, dims += (dims.empty() ? "" : ",") + std::to_string(d);
    std::vector<double> q(count);
    for (double& v : q) v = static_cast<double>(range(-8, 8));
    const std::string wq = weight("i8[" + dims + "]", std::move(q));
    const int64_t channels = per_channel ? shape[axis] : 1;
    std::vector<double> s(channels), z(channels, 0);
    for (double& v : s) v = std::ldexp(1.0, -static_cast<int>(range(3, 6)));
    const std::string shape_of = per_channel ? "[" + std::to_string(channels) + "]" : "[]";
    const std::string ws = weight("f32" + shape_of, std::move(s));
    const std::string wz = weight("i8" + shape_of, std::move(z));
    return op("dequantize_linear", wq + ", " + ws + ", " + wz, "axis=" + std::to_string(axis), 0,
              0)
        .name;
  }
  Tensor conv(const Tensor& t) {
    const int64_t groups = pick({1, 1, 2, t.c});
    const int64_t out = groups == t.c ? t.c : groups * pick({2, 4});
    const int64_t k = pick({1, 3});
    const std::string w = int8_weights({out, t.c / groups, k, k}, range(0, 1) == 1, 0);
    std::string args = t.name + ", " + w;
    if (range(0, 1) == 1) {  // a bias on the sums' grid, 2^-11
      std::vector<double> b(out);
      for (double& v : b) v = std::ldexp(static_cast<double>(range(-64, 64)), -11);
      args += ", " + weight("f32[" + std::to_string(out) + "]", std::move(b));
    }
    const std::string attrs =
        (k == 3 ? std::string("pad=same, ") : std::string()) + "groups=" + std::to_string(groups);
    Tensor c = op("conv2d", args, attrs, out, t.h);
    return range(0, 2) == 0 ? c : op("relu", c.name, "", out, t.h);
  }
  // Reshaped and transposed, quantized again with the same parameters, and
  // back: pairs that keep their levels.
  Tensor moved(const Tensor& t) {
    const std::string c = std::to_string(t.c), hw = std::to_string(t.h * t.h);
    Tensor r = op("reshape", t.name, "shape=[1," + c + "," + hw + "]", t.c, t.h);
    Tensor p = pair(op("transpose", r.name, "perm=[0,2,1]", t.c, t.h), t.params);
    Tensor b = op("transpose", p.name, "perm=[0,2,1]", t.c, t.h);
    const std::string h = std::to_string(t.h);
    return pair(op("reshape", b.name, "shape=[1," + c + "," + h + "," + h + "]", t.c, t.h),
                t.params);
  }
  // Two convolutions of `t` quantized alike and concatenated (SqueezeNet's
  // expand pair), quantized again with their parameters.
  Tensor branches(const Tensor& t) {
    const Params p = fresh_params();
    const Tensor a = pair(conv(t), p), b = pair(conv(t), p);
    return pair(op("concat", a.name + ", " + b.name, "axis=1", a.c + b.c, t.h), p);
  }

  std::mt19937_64 rng_;
  std::string text_;
  std::map<std::string, std::vector<double>> values_;
  int next_ = 0;
};

TEST(CpuQuantize, RandomQuantizedNetworksMatchTheReferenceBitForBit) {
  int int8 = 0, fused_pairs = 0, kept_levels = 0, built = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Graph g = QuantizedNetwork(seed).build();
    if (g.size() == 0) continue;  // with_values reported why
    ++built;
    const Shape shape = g.node(g.input_nodes()[0]).outs[0].shape;
    std::vector<float> x(shape.numel());
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.f, 2.f);
    for (float& v : x) v = normal(rng);
    for (int threads : {1, 2}) expect_equal_to_reference(g, x, threads);
    int8 += steps_named(g, "conv int8") + steps_named(g, "matmul int8");
    fused_pairs += steps_with(testing::profiled_steps(g, {}), "quantize pair");
    for (const Node& n : g.nodes()) kept_levels += keeps_levels(g, n);
  }
  EXPECT_EQ(built, 24);
  // The int8 kernels ran, with pairs in their post-ops; where int8 sums
  // saturate, only the ungrouped convolutions of u8 inputs, by weights
  // within [-64, 64] (int8_kernel_exact).
  EXPECT_GT(int8, int8_sums_exact() ? 48 : 20);
  EXPECT_GT(fused_pairs, int8_sums_exact() ? 24 : 20);
  EXPECT_GT(kept_levels, 10);
}

}  // namespace
}  // namespace tso::cpu
