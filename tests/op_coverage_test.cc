// Every operator of core/ops.def has a text spelling, shape inference, a
// printer round trip and an implementation in the reference executor for
// each scalar type (isnan, the comparisons, arg_max and quantization on Mod
// are the deliberate errors: Mod has no NaN, no order and no rounding). A new operator
// without one of them fails here.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

#include "core/checker.h"
#include "core/shape_inference.h"
#include "core/text_format.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

// One small graph per operator: name -> statements between the inputs and
// the output. `x` is f32[2,4,5,5], `m` f32[2,4], `s` a scalar; bool and
// integer inputs (gather's indices) are fed 0 and 1.
const std::map<std::string, std::string> kExamples = {
    {"input", "output y = x"},
    {"weight", "weight w: f32[2,4,5,5]\n%0 = add(x, w)\noutput y = %0"},
    {"const_ones", "%0 = const_ones(shape=[2,4])\n%1 = add(m, %0)\noutput y = %1"},
    {"const_eye", "%0 = const_eye(shape=[4,4])\n%1 = matmul(m, %0)\noutput y = %1"},
    {"const_eye_conv", "%0 = const_eye_conv(shape=[4,4,3,3])\n%1 = conv2d(x, %0, pad=same)\noutput y = %1"},
    {"const_pool", "%0 = const_pool(shape=[4,1,3,3])\n%1 = conv2d(x, %0, pad=same, groups=4)\noutput y = %1"},
    {"conv2d", "weight w: f32[4,2,3,3]\nweight b: f32[4]\n%0 = conv2d(x, w, b, stride=[2,1], pad=[1,0,1,2], dilation=[1,2], groups=2, act=relu)\noutput y = %0"},
    {"matmul", "weight w: f32[4,3]\n%0 = matmul(m, w, act=tanh)\noutput y = %0"},
    {"add", "weight b: f32[5]\n%0 = add(x, b)\noutput y = %0"},
    {"mul", "weight b: f32[4,1,1]\n%0 = mul(x, b)\noutput y = %0"},
    {"smul", "%0 = smul(x, s)\noutput y = %0"},
    {"relu", "%0 = relu(x)\noutput y = %0"},
    {"sigmoid", "%0 = sigmoid(x)\noutput y = %0"},
    {"tanh", "%0 = tanh(x)\noutput y = %0"},
    {"concat", "%0 = concat(x, x, axis=1)\noutput y = %0"},
    {"split", "%0, %1 = split(x, axis=1, sizes=[1,3])\noutput y = %0\noutput z = %1"},
    {"transpose", "%0 = transpose(x, perm=[0,2,3,1])\noutput y = %0"},
    {"avgpool", "%0 = avgpool(x, kernel=[3,3], stride=[2,2], pad=same)\noutput y = %0"},
    {"maxpool", "%0 = maxpool(x, kernel=[3,3], stride=[2,2], ceil_mode=1)\noutput y = %0"},
    {"enlarge", "weight w: f32[4,4,1,3]\n%0 = enlarge(w, kernel=[3,3])\noutput y = %0"},
    {"batchnorm", "weight g: f32[4]\nweight b: f32[4]\nweight mu: f32[4]\nweight v: f32[4]\n%0 = batchnorm(x, g, b, mu, v, epsilon=0.001)\noutput y = %0"},
    {"gemm", "weight w: f32[3,4]\nweight c: f32[3]\n%0 = gemm(m, w, c, trans_b=1, alpha=0.5)\noutput y = %0"},
    {"softmax", "%0 = softmax(x, axis=1)\noutput y = %0"},
    {"layernorm", "weight g: f32[5]\nweight b: f32[5]\n%0 = layernorm(x, g, b, axis=-1)\noutput y = %0"},
    {"erf", "%0 = erf(x)\noutput y = %0"},
    {"gelu", "%0 = gelu(x)\noutput y = %0"},
    {"clip", "%0 = clip(x, min=0.0, max=6.0)\noutput y = %0"},
    {"sub", "%0 = sub(x, x)\noutput y = %0"},
    {"div", "weight d: f32[5]\n%0 = div(x, d)\noutput y = %0"},
    {"pow", "weight e: f32[1]\n%0 = pow(x, e)\noutput y = %0"},
    {"sqrt", "%0 = sqrt(x)\noutput y = %0"},
    {"neg", "%0 = neg(x)\noutput y = %0"},
    {"exp", "%0 = exp(x)\noutput y = %0"},
    {"leaky_relu", "%0 = leaky_relu(x, alpha=0.1)\noutput y = %0"},
    {"softplus", "%0 = softplus(x)\noutput y = %0"},
    {"log", "%0 = abs(x)\n%1 = log(%0)\noutput y = %1"},
    {"abs", "%0 = abs(x)\noutput y = %0"},
    {"sin", "%0 = sin(x)\noutput y = %0"},
    {"cos", "%0 = cos(x)\noutput y = %0"},
    {"max", "%0 = max(x, x)\noutput y = %0"},
    {"min", "%0 = min(x, x)\noutput y = %0"},
    {"log_softmax", "%0 = log_softmax(x, axis=1)\noutput y = %0"},
    {"grid_sample", "weight g: f32[2,3,2,2]\n%0 = grid_sample(x, g, align_corners=1)\noutput y = %0"},
    {"reduce_mean", "%0 = reduce_mean(x, axes=[2,3], keepdims=0)\noutput y = %0"},
    {"reduce_sum", "%0 = reduce_sum(x, axes=[1])\noutput y = %0"},
    {"reduce_max", "%0 = reduce_max(x, axes=[-1,0], keepdims=0)\noutput y = %0"},
    {"reduce_l2", "%0 = reduce_l2(x, axes=[2,3])\noutput y = %0"},
    {"reshape", "%0 = reshape(x, shape=[2,-1])\noutput y = %0"},
    {"flatten", "%0 = flatten(x, axis=2)\noutput y = %0"},
    {"squeeze", "%0 = reshape(x, shape=[2,1,100])\n%1 = squeeze(%0, axes=[1])\noutput y = %1"},
    {"unsqueeze", "%0 = unsqueeze(x, axes=[0])\noutput y = %0"},
    {"slice", "%0 = slice(x, starts=[1,0], ends=[4,5], axes=[1,3], steps=[2,2])\noutput y = %0"},
    {"pad", "%0 = pad(x, pads=[0,0,1,1,0,0,1,1], value=0.5)\noutput y = %0"},
    {"global_avgpool", "%0 = global_avgpool(x)\noutput y = %0"},
    {"isnan", "%0 = isnan(x)\noutput y = %0"},
    {"where", "input c: bool[4,1,5]\n%0 = where(c, x, s)\noutput y = %0"},
    {"update_slice", "%0 = slice(x, starts=[0,1], ends=[1,3], axes=[0,2], steps=[1,1])\n%1 = relu(%0)\n%2 = update_slice(x, %1, starts=[1,0,2,0])\noutput y = %2"},
    {"gather", "input i: i64[3,2]\n%0 = gather(x, i, axis=-3)\noutput y = %0"},
    {"gather_elements", "input i: i64[2,3,5,1]\n%0 = gather_elements(x, i, axis=1)\noutput y = %0"},
    {"expand", "%0 = expand(m, shape=[3,2,1])\noutput y = %0"},
    {"cast", "%0 = cast(x, to=\"i64\")\n%1 = cast(%0, to=\"f32\")\noutput y = %1"},
    {"equal", "%0 = equal(x, s)\noutput y = %0"},
    {"less", "%0 = less(m, s)\noutput y = %0"},
    {"greater", "%0 = greater(x, x)\noutput y = %0"},
    {"not", "input c: bool[4,1,5]\n%0 = not(c)\noutput y = %0"},
    {"and", "input c: bool[4,1,5]\ninput d: bool[5]\n%0 = and(c, d)\noutput y = %0"},
    {"or", "input c: bool[4,1,5]\ninput d: bool[2,1,1,1]\n%0 = or(c, d)\noutput y = %0"},
    {"cumsum", "input i: i64[3,2]\n%0 = cumsum(i, axis=-2, exclusive=1, reverse=1)\noutput y = %0"},
    {"arg_max", "%0 = arg_max(x, axis=-2, keepdims=0, select_last_index=1)\noutput y = %0"},
    {"top_k", "%0, %1 = top_k(x, axis=1, k=2, largest=0)\noutput y = %0\noutput z = %1"},
    {"quantize_linear", "weight sc: f32[4]\nweight z: i8[4]\n%0 = quantize_linear(x, sc, z, axis=1)\n%1 = cast(%0, to=\"f32\")\noutput y = %1"},
    {"dequantize_linear", "weight sc: f32[]\nweight z: u8[]\n%0 = quantize_linear(x, sc, z, axis=0)\n%1 = dequantize_linear(%0, sc, z, axis=0)\noutput y = %1"},
    {"opaque", "%0: f32[2,4,5,5] = opaque(x, op_type=\"Foo\", domain=\"ai.example\", payload=\"\\x01\")\noutput y = %0"},
};

std::string example_graph(const std::string& body) {
  return "graph example {\n  input x: f32[2,4,5,5]\n  input m: f32[2,4]\n  input s: f32[]\n" + body +
         "\n}\n";
}

TEST(OpCoverage, EveryOperatorHasAnExample) {
  for (const OpInfo& info : all_ops())
    EXPECT_TRUE(kExamples.count(std::string(info.name))) << "no example for " << info.name;
  for (const auto& [name, body] : kExamples) {
    Op op;
    EXPECT_TRUE(find_op(name, &op)) << name << " is not an operator";
  }
}

TEST(OpCoverage, ParsesInfersChecksAndRoundTrips) {
  for (const auto& [name, body] : kExamples) {
    SCOPED_TRACE(name);
    Expected<Graph> g = parse_graph(example_graph(body), name);
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_TRUE(check(*g).ok());
    Expected<Graph> again = parse_graph(print(*g), name);
    ASSERT_TRUE(again.ok()) << again.error().message << "\n" << print(*g);
    EXPECT_TRUE(*again == *g) << print(*g);
    for (int i = 0; i < g->size(); ++i) {
      const Node& n = g->node(i);
      std::vector<TensorType> in;
      for (const TensorRef& a : n.args) in.push_back(g->type(a));
      EXPECT_GE(flops(n.op, n.attrs, in, n.outs), 0);
    }
  }
}

template <class S>
S random_scalar(std::mt19937_64& rng, DType dtype) {
  if (dtype == DType::kBool || dtype == DType::kI64 || dtype == DType::kI32 ||
      dtype == DType::kU8 || dtype == DType::kI8) {
    if constexpr (std::is_same_v<S, ref::Mod>)
      return ref::Mod(rng() % 2);
    else
      return static_cast<S>(rng() % 2);
  }
  if constexpr (std::is_same_v<S, ref::Mod>) {
    return ref::Mod(rng());
  } else {
    // Positive, away from zero: keeps sqrt, div and pow defined.
    return static_cast<S>(std::uniform_real_distribution<double>(0.5, 1.5)(rng));
  }
}

template <class S>
std::map<std::string, ref::Tensor<S>> random_feeds(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, ref::Tensor<S>> feeds;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    ref::Tensor<S> t(n.outs[0].shape);
    for (S& v : t.data) v = random_scalar<S>(rng, n.outs[0].dtype);
    feeds.emplace(n.name, std::move(t));
  }
  return feeds;
}

template <class S>
void run_every_example() {
  for (const auto& [name, body] : kExamples) {
    SCOPED_TRACE(name);
    Expected<Graph> g = parse_graph(example_graph(body), name);
    ASSERT_TRUE(g.ok()) << g.error().message;
    auto out = ref::evaluate<S>(*g, random_feeds<S>(*g, 7));
    if (name == "opaque") {
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.error().message.find("Foo"), std::string::npos) << out.error().message;
      continue;
    }
    const bool no_mod_image =
        name == "isnan" || name == "equal" || name == "less" || name == "greater" ||
        name == "leaky_relu" || name == "softplus" || name == "arg_max" || name == "log" ||
        name == "abs" || name == "max" || name == "min" || name == "log_softmax" ||
        name == "grid_sample" || name == "sin" || name == "cos" || name == "top_k" ||
        name == "quantize_linear" || name == "dequantize_linear";
    if (no_mod_image && std::is_same_v<S, ref::Mod>) {  // Mod has no NaN and no order (executor.h)
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.error().message.find("no Mod image"), std::string::npos) << out.error().message;
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.error().message;
    ASSERT_EQ(out->size(), g->outputs().size());
    for (size_t k = 0; k < out->size(); ++k)
      EXPECT_EQ((*out)[k].shape, g->type(g->outputs()[k].ref).shape);
  }
}

TEST(OpCoverage, ReferenceExecutorRunsEveryOperatorInFloat) { run_every_example<float>(); }
TEST(OpCoverage, ReferenceExecutorRunsEveryOperatorInDouble) { run_every_example<double>(); }
TEST(OpCoverage, ReferenceExecutorRunsEveryOperatorInMod) { run_every_example<ref::Mod>(); }

}  // namespace
}  // namespace tso
