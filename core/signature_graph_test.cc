// One-node graphs of operator signatures: which arguments are weights, the
// weights' seeded values, and a graph whose node has the signature asked for.
#include "core/signature_graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "core/quantized.h"
#include "core/signature.h"
#include "core/text_format.h"

namespace tso {
namespace {

Graph parse(std::string_view text) {
  Expected<Graph> g = parse_graph(text, "<test>");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

int find_op(const Graph& g, Op op) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == op) return i;
  ADD_FAILURE() << "no " << op_name(op);
  return -1;
}

std::vector<TensorType> arg_types(const Graph& g, int i) {
  std::vector<TensorType> t;
  for (TensorRef a : g.node(i).args) t.push_back(g.type(a));
  return t;
}

const char* kModel = R"(graph m {
  input x: f32[1,8,10,10]
  input v: f32[4,16]
  weight w: f32[8,8,3,3]
  weight b: f32[8]
  weight s: f32[1,8,1,1]
  weight p: f32[16,32]
  %c = conv2d(x, w, b, pad=same)
  %r = relu(%c)
  %m = mul(%r, s)
  %a = add(%m, %r)
  %q = matmul(v, p)
  output y = %a
  output z = %q
})";

// smul and mul by a scalar share a signature; their scalars are weights
// alike, or a cost cache would key them apart with weights cached and read
// two timings of one kernel as a gain (MobileNetV3-small: 26 HardSwish
// scalings rewritten to smul for 25 us that no run showed).
TEST(SignatureGraph, AScalarMultiplicationsScalarIsAWeightAsMulsIs) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,16,32,32]
  weight s: f32[]
  %a = smul(x, s)
  %b = mul(x, s)
  output y = %a
  output z = %b
})");
  auto weights_of = [&](Op op) {
    const int i = find_op(g, op);
    return weight_args(g.node(i), arg_types(g, i));
  };
  EXPECT_EQ(weights_of(Op::ScalarMul), (std::vector<bool>{false, true}));
  EXPECT_EQ(weights_of(Op::ScalarMul), weights_of(Op::Mul));
}

TEST(SignatureGraph, WeightArgsFollowTheConvention) {
  const Graph g = parse(kModel);
  auto weights_of = [&](Op op) {
    const int i = find_op(g, op);
    return weight_args(g.node(i), arg_types(g, i));
  };
  EXPECT_EQ(weights_of(Op::Conv2d), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(weights_of(Op::Relu), std::vector<bool>{false});
  EXPECT_EQ(weights_of(Op::Mul), (std::vector<bool>{false, true}));     // the broadcast scale
  EXPECT_EQ(weights_of(Op::Add), (std::vector<bool>{false, false}));    // equal sizes
  EXPECT_EQ(weights_of(Op::Matmul), (std::vector<bool>{false, true}));  // a linear layer
  // The layer transposed, a matrix by a column (the search's W'·x'): the
  // matrix is the weight; a row by a column stays a layer.
  Node mm;
  mm.op = Op::Matmul;
  const TensorType matrix{DType::kF32, Shape{512, 1024}}, column{DType::kF32, Shape{1024, 1}},
      row{DType::kF32, Shape{1, 1024}};
  EXPECT_EQ(weight_args(mm, std::vector<TensorType>{matrix, column}),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(weight_args(mm, std::vector<TensorType>{row, column}),
            (std::vector<bool>{false, true}));
}

TEST(SignatureGraph, StoresSeededWeightsAndKeepsTheSignature) {
  const Graph g = parse(kModel);
  const int conv = find_op(g, Op::Conv2d);
  const std::vector<TensorType> in = arg_types(g, conv);
  Expected<Graph> one = signature_graph(g.node(conv), in, weight_args(g.node(conv), in), 7);
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_EQ(one->size(), 4);
  EXPECT_EQ(one->node(0).op, Op::Input);
  EXPECT_EQ(one->node(0).name, "in0");
  ASSERT_EQ(one->node(1).op, Op::Weight);
  ASSERT_NE(one->node(1).data, nullptr);
  EXPECT_EQ(one->node(1).data->bytes, random_tensor_bytes(in[1], 7 + 1));
  EXPECT_EQ(op_signature(*one, 3), op_signature(g, conv));
  ASSERT_EQ(one->outputs().size(), 1u);
  EXPECT_EQ(one->outputs()[0].name, "out0");
}

// An int8 kernel's signature is a graph of a quantized model: its input an
// f32 one quantized and dequantized (a pair), its weights stored i8
// dequantized; the product there runs on int8 and has the signature.
TEST(SignatureGraph, AnInt8ProductsSignatureIsAQuantizedGraph) {
  const Graph g = parse(kModel);
  const int conv = find_op(g, Op::Conv2d);
  std::vector<TensorType> in = arg_types(g, conv);
  in[0].dtype = DType::kU8;
  in[1].dtype = DType::kI8;
  Expected<Graph> one = signature_graph(g.node(conv), in, weight_args(g.node(conv), in), 7);
  ASSERT_TRUE(one.ok()) << one.error().message;
  const int c = find_op(*one, Op::Conv2d);
  ASSERT_TRUE(int8_form(*one, one->node(c)));
  // Full-range levels, which a host without exact int8 sums runs in f32.
  const Node& w = one->node(one->node(one->node(c).args[1].node).args[0].node);
  ASSERT_TRUE(w.data);
  EXPECT_TRUE(std::all_of(w.data->bytes.begin(), w.data->bytes.end(),
                          [](std::byte v) { return v == std::byte{127}; }));
  std::vector<TensorType> run = arg_types(*one, c);
  to_run_types(*one, one->node(c), run);
  EXPECT_EQ(op_signature(one->node(c), run), op_signature(g.node(conv), in));
  EXPECT_EQ(one->node(find_op(*one, Op::Input)).outs[0], (TensorType{DType::kF32, in[0].shape}));
  const std::vector<int> pairs = quantize_pairs(*one);
  EXPECT_GE(pairs[find_op(*one, Op::QuantizeLinear)], 0);
  // Its pair alone: what the product's time leaves out.
  Expected<Graph> pair = quantized_inputs_graph(in, weight_args(g.node(conv), in));
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  EXPECT_EQ(pair->outputs().size(), 1u);
  EXPECT_GE(quantize_pairs(*pair)[find_op(*pair, Op::QuantizeLinear)], 0);
  Expected<Graph> q = quantize_graph(TensorType{DType::kI8, Shape{4, 4}}, false);
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->type(q->outputs()[0].ref), (TensorType{DType::kI8, Shape{4, 4}}));
}

TEST(SignatureGraph, RandomBytesAreSeededFloatsInRange) {
  const TensorType t{DType::kF32, Shape({3, 5})};
  const std::vector<std::byte> a = random_tensor_bytes(t, 1);
  ASSERT_EQ(a.size(), 15u * 4);
  EXPECT_EQ(a, random_tensor_bytes(t, 1));
  EXPECT_NE(a, random_tensor_bytes(t, 2));
  std::vector<float> v(15);
  std::memcpy(v.data(), a.data(), a.size());
  for (float x : v) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LE(x, 1.0f);
  }
  const std::vector<std::byte> idx = random_tensor_bytes({DType::kI64, Shape({4})}, 1);
  EXPECT_EQ(idx, std::vector<std::byte>(32, std::byte{0}));
}

}  // namespace
}  // namespace tso
