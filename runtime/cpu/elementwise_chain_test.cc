// Chains of elementwise nodes on one own step: which nodes join, and that
// the chain computes the unfused plan's values exactly (and the reference
// executor's, within f32 rounding).
#include "runtime/cpu/elementwise_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "core/testing/stored_weights.h"
#include "runtime/cpu/dnnl_util.h"
#include "runtime/cpu/executor.h"
#include "runtime/cpu/executor_testing.h"
#include "runtime/reference/executor.h"

namespace tso::cpu {
namespace {

using tso::testing::with_values;

// The GELU of a quantized BERT as ONNX Runtime's quantizer writes it: the
// input's pair, then div, erf, add, mul and mul with a quantize pair after
// each but the div (the constants dequantized from stored levels), and a
// last pair that an int8 product reads.
const char* kQuantizedGelu = R"(graph gelu {
  input x: f32[3,40,67]
  weight s: f32[]
  weight z: u8[]
  weight es: f32[]
  weight ez: i8[]
  weight root2: f32[]
  weight oneq: u8[]
  weight half: f32[]
  weight wq: i8[67,5]
  weight ws: f32[5]
  weight wz: i8[5]
  %xq = quantize_linear(x, s, z, axis=0)
  %xd = dequantize_linear(%xq, s, z, axis=0)
  %one = dequantize_linear(oneq, s, z, axis=0)
  %d = div(%xd, root2)
  %e = erf(%d)
  %eq = quantize_linear(%e, es, ez, axis=0)
  %ed = dequantize_linear(%eq, es, ez, axis=0)
  %a = add(%ed, %one)
  %aq = quantize_linear(%a, s, z, axis=0)
  %ad = dequantize_linear(%aq, s, z, axis=0)
  %m = mul(%xd, %ad)
  %mq = quantize_linear(%m, s, z, axis=0)
  %md = dequantize_linear(%mq, s, z, axis=0)
  %h = mul(%md, half)
  %hq = quantize_linear(%h, s, z, axis=0)
  %hd = dequantize_linear(%hq, s, z, axis=0)
  %wd = dequantize_linear(wq, ws, wz, axis=1)
  %p = matmul(%hd, %wd)
  output h = %h
  output p = %p
})";

Graph quantized_gelu() {
  std::map<std::string, std::vector<double>> v = {
      {"s", {0.03}},           {"z", {100}},    {"es", {0.008}}, {"ez", {0}},
      {"root2", {1.41421356}}, {"oneq", {133}}, {"half", {0.5}}};
  for (int k = 0; k < 67 * 5; ++k) v["wq"].push_back(k % 19 - 9);
  for (int k = 0; k < 5; ++k) v["ws"].push_back(0.01), v["wz"].push_back(0);
  return with_values(kQuantizedGelu, v);
}

std::vector<float> seeded_input(const Graph& g, float lo, float hi) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> x(g.node(g.input_nodes()[0]).outs[0].shape.numel());
  for (float& v : x) v = d(rng);
  return x;
}

// Every output of `g` for input "x" = `x` on a plan of `o`.
std::vector<std::vector<float>> run(const Graph& g, const std::vector<float>& x,
                                    ExecutorOptions o) {
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!ex || !(*ex)->set_input("x", std::span<const float>(x)).ok() || !(*ex)->run().ok())
    return {};
  std::vector<std::vector<float>> outs;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(k));
    EXPECT_TRUE(got.ok()) << got.error().message;
    outs.push_back(got ? std::move(*got) : std::vector<float>{});
  }
  return outs;
}

// The chain's values are the unfused plan's, value for value (-0 and 0
// alike), NaN where it has NaN; and near the reference executor's.
void expect_as_unfused(const Graph& g, const std::vector<float>& x, double tolerance) {
  ExecutorOptions unfused;
  unfused.fuse = false;
  const std::vector<std::vector<float>> got = run(g, x, {}), want = run(g, x, unfused);
  std::map<std::string, ref::Tensor<float>> feed;
  feed["x"] = ref::Tensor<float>(g.node(g.input_nodes()[0]).outs[0].shape, x);
  Expected<std::vector<ref::Tensor<float>>> reference = ref::evaluate<float>(g, feed);
  ASSERT_TRUE(reference.ok()) << reference.error().message;
  ASSERT_EQ(got.size(), g.outputs().size());
  ASSERT_EQ(want.size(), g.outputs().size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].size(), want[k].size());
    for (size_t i = 0; i < got[k].size(); ++i) {
      if (std::isnan(want[k][i]))
        ASSERT_TRUE(std::isnan(got[k][i])) << "output " << k << " at " << i;
      else
        ASSERT_EQ(got[k][i], want[k][i]) << "output " << k << " at " << i;
      const float r = (*reference)[k].data[i];
      if (!std::isnan(r)) {
        EXPECT_NEAR(got[k][i], r, tolerance * std::max(1.f, std::abs(r)))
            << "output " << k << " at " << i;
      }
    }
  }
}

std::vector<std::string> step_nodes(const Graph& g, const std::string& what) {
  std::vector<std::string> nodes;
  for (const StepTime& s : testing::profiled_steps(g, {}))
    if (s.what.starts_with(what)) nodes.push_back(s.nodes);
  return nodes;
}

TEST(ElementwiseChain, AQuantizedGeluRunsAsOneStep) {
  const Graph g = quantized_gelu();
  const std::vector<std::string> chains = step_nodes(g, "elementwise chain");
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0],
            "node '%d' (div) + erf + quantize pair + add + quantize pair + mul + quantize pair "
            "+ mul");
  // The last pair stays out, after a graph output. The int8 product
  // quantizes the chain's result itself; where products run in f32
  // (int8_sums_exact()) the pair is a step. The input's pair, read by the
  // div and a mul, is a step of its own.
  const bool int8 = int8_sums_exact();
  std::vector<std::string> pairs = {"node '%xq' (quantize_linear), node '%xd' (dequantize_linear)"};
  if (!int8) pairs.push_back("node '%hq' (quantize_linear), node '%hd' (dequantize_linear)");
  EXPECT_EQ(step_nodes(g, "quantize and dequantize"), pairs);
  EXPECT_EQ(step_nodes(g, "matmul int8").size(), int8 ? 1u : 0u);
  // Levels an erf near 1 rounds across, and ties of the quantize pairs.
  expect_as_unfused(g, seeded_input(g, -4.f, 4.f), 1e-5);
}

// A value with a second reader or that is a graph output ends the chain; an
// operand broadcast along an axis and a product of the chain by itself join
// none.
TEST(ElementwiseChain, StopsAtAValueReadTwiceAnOutputAndABroadcast) {
  const Graph g = with_values(R"(graph stops {
  input x: f32[4,33]
  weight c: f32[]
  weight row: f32[33]
  %a = add(x, c)
  %b = erf(%a)
  %m = mul(%b, x)
  %n = sub(c, %m)
  %o = div(%n, row)
  %p = erf(%o)
  %q = mul(%p, %p)
  output n = %n
  output q = %q
})",
                              {{"c", {0.25}}});
  const std::vector<std::string> chains = step_nodes(g, "elementwise chain");
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0], "node '%a' (add) + erf + mul + sub");
  expect_as_unfused(g, seeded_input(g, -2.f, 2.f), 1e-5);
}

// Operands of the chain's shape in a convolution's layout (NHWC) keep it:
// no reorder to row-major and back. The chain on the right of a sub and a
// div.
TEST(ElementwiseChain, RunsInItsOperandsLayout) {
  const Graph g = with_values(R"(graph layout {
  input x: f32[1,16,9,9]
  weight w: f32[16,16,1,1]
  weight v: f32[16,16,1,1]
  weight c: f32[]
  %p = conv2d(x, w)
  %q = conv2d(x, v)
  %s = sub(%p, %q)
  %e = erf(%s)
  %r = sub(c, %e)
  %d = div(%q, %r)
  %t = conv2d(%d, w)
  %u = conv2d(%p, v)
  output t = %t
  output u = %u
})",
                              {{"c", {2.0}}});
  const std::vector<std::string> chains = step_nodes(g, "elementwise chain");
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0], "node '%s' (sub) + erf + sub + div");
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().reorders, 3) << "x into NHWC, t and u out of it: none for the chain";
  expect_as_unfused(g, seeded_input(g, -1.f, 1.f), 1e-4);
}

// Seeded random chains of 2 to 9 nodes on random shapes (sizes past one
// block and not a multiple of any vector width among them): add, sub, mul
// and div by a scalar or a tensor of the chain's shape (the input itself
// among them), on either side; erf; quantize pairs, u8 and i8. Each runs as
// one chain step and equals the unfused plan value for value.
TEST(ElementwiseChain, RandomChainsEqualTheUnfusedPlan) {
  std::mt19937 rng(1201);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    const std::vector<int> dims = {pick(1, 3), pick(1, 40), pick(1, 130)};
    const std::string shape = "[" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," +
                              std::to_string(dims[2]) + "]";
    std::string text = "graph random {\n  input x: f32" + shape + "\n";
    std::map<std::string, std::vector<double>> values;
    std::string cur = "x";
    const int nodes = pick(2, 9);
    for (int k = 0; k < nodes; ++k) {
      const std::string id = std::to_string(k), out = "%n" + id;
      const int kind = pick(0, 5);
      if (kind == 4) {
        text += "  " + out + " = erf(" + cur + ")\n";
      } else if (kind == 5) {
        const bool u8 = pick(0, 1) == 1;
        text += "  weight s" + id + ": f32[]\n  weight z" + id + ": " + (u8 ? "u8" : "i8") +
                "[]\n  %q" + id + " = quantize_linear(" + cur + ", s" + id + ", z" + id +
                ", axis=0)\n  " + out + " = dequantize_linear(%q" + id + ", s" + id + ", z" + id +
                ", axis=0)\n";
        values["s" + id] = {0.001 * pick(1, 60)};
        values["z" + id] = {double(u8 ? pick(0, 255) : pick(-128, 127))};
      } else {
        const char* op = std::vector<const char*>{"add", "sub", "mul", "div"}[kind];
        // A scalar, a tensor, or the input (but not as the chain itself).
        const int operand = pick(0, cur == "x" ? 1 : 2);
        std::string other = operand == 2 ? "x" : "c" + id;
        if (operand == 0) text += "  weight c" + id + ": f32[]\n";
        if (operand == 1) text += "  weight c" + id + ": f32" + shape + "\n";
        const bool left = pick(0, 1) == 1;
        text += "  " + out + " = " + op + "(" + (left ? cur : other) + ", " + (left ? other : cur) +
                ")\n";
      }
      cur = out;
    }
    text += "  output y = " + cur + "\n}";
    SCOPED_TRACE(text);
    const Graph g = with_values(text, values);
    const std::vector<std::string> chains = step_nodes(g, "elementwise chain");
    EXPECT_EQ(chains.size(), 1u);
    ExecutorOptions unfused;
    unfused.fuse = false;
    const std::vector<float> x = seeded_input(g, -3.f, 3.f);
    const std::vector<std::vector<float>> got = run(g, x, {}), want = run(g, x, unfused);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(want.size(), 1u);
    for (size_t i = 0; i < got[0].size(); ++i) {
      if (std::isnan(want[0][i]))
        ASSERT_TRUE(std::isnan(got[0][i])) << "at " << i;
      else
        ASSERT_EQ(got[0][i], want[0][i]) << "at " << i;
    }
  }
}

TEST(ElementwiseChain, NoneUnfused) {
  const Graph g = quantized_gelu();
  ExecutorOptions o;
  o.fuse = false;
  for (const StepTime& s : testing::profiled_steps(g, o))
    EXPECT_FALSE(s.what.starts_with("elementwise chain")) << s.nodes;
}

}  // namespace
}  // namespace tso::cpu
