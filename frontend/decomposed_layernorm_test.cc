// The nine nodes torch.onnx writes for nn.LayerNorm below opset 17 import as
// one layernorm (decomposed_layernorm.h): with the axes as an attribute
// (opset 14) or an input (opset 18), over one axis or two, the square as Pow
// or as Mul, with or without the affine mul and add; an affine operand that
// would broadcast x stays a mul after the layernorm. Each computes, on the
// reference executor, what the nine nodes compute. Close but different
// chains import node by node: means over other axes, another exponent, a
// negative epsilon, an inner value the graph also outputs. Export below
// opset 17 writes the nine nodes back, which import as one layernorm again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/checker.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using testing::add_node;
using testing::declare;

struct Chain {
  int opset = 14;                           // axes an attribute below 18, an input from 18
  std::vector<int64_t> axes = {-1};         // both means'
  std::vector<int64_t> variance_axes = {};  // the second mean's, when they differ
  bool square_by_mul = false;               // Mul(d, d), else Pow(d, exponent)
  float exponent = 2.0f;
  float epsilon = 1e-5f;
  std::vector<int64_t> scale_dims = {4};  // empty: no affine mul and add
  bool bias = true;
  bool d_is_output = false;
};

void initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

// The k-th value of an affine operand: distinct, not 0 or 1.
float scale_at(int64_t k) { return 0.5f + 0.25f * static_cast<float>(k); }
float bias_at(int64_t k) { return -0.3f + 0.1f * static_cast<float>(k); }

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

void reduce_mean(onnx::GraphProto* g, const Chain& c, const std::vector<int64_t>& axes,
                 const char* in, const std::string& out) {
  if (c.opset >= 18) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(out + "_axes");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(axes.size()));
    for (int64_t a : axes) t->add_int64_data(a);
    onnx::NodeProto* n = add_node(g, "ReduceMean", {in}, out);
    n->add_input(out + "_axes");
    return;
  }
  onnx::NodeProto* n = add_node(g, "ReduceMean", {in}, out);
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("axes");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : axes) a->add_ints(v);
}

// x: f32[2,3,4] -> relu -> the chain -> y.
onnx::ModelProto chain_model(const Chain& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(c.opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("layernorm");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 4});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3, 4});
  if (c.d_is_output) declare(g->add_output(), "d", onnx::TensorProto::FLOAT, {2, 3, 4});
  add_node(g, "Relu", {"x"}, "r");
  reduce_mean(g, c, c.axes, "r", "m");
  add_node(g, "Sub", {"r", "m"}, "d");
  if (c.square_by_mul) {
    add_node(g, "Mul", {"d", "d"}, "sq");
  } else {
    initializer(g, "two", {}, {c.exponent});
    add_node(g, "Pow", {"d", "two"}, "sq");
  }
  reduce_mean(g, c, c.variance_axes.empty() ? c.axes : c.variance_axes, "sq", "v");
  initializer(g, "eps", {}, {c.epsilon});
  add_node(g, "Add", {"v", "eps"}, "ve");
  add_node(g, "Sqrt", {"ve"}, "s");
  const bool affine = !c.scale_dims.empty();
  add_node(g, "Div", {"d", "s"}, affine ? "n" : "y");
  if (!affine) return m;
  std::vector<float> scale, bias;
  for (int64_t k = 0; k < numel(c.scale_dims); ++k)
    scale.push_back(scale_at(k)), bias.push_back(bias_at(k));
  initializer(g, "gamma", c.scale_dims, scale);
  add_node(g, "Mul", {"gamma", "n"}, c.bias ? "scaled" : "y");
  if (!c.bias) return m;
  initializer(g, "beta", c.scale_dims, bias);
  add_node(g, "Add", {"scaled", "beta"}, "y");
  return m;
}

Expected<ImportedModel> import_chain(const Chain& c) {
  return import_onnx_bytes(chain_model(c).SerializeAsString(), "layernorm.onnx", ".");
}

std::vector<Op> ops_of(const Graph& g) {
  std::vector<Op> ops;
  for (const Node& n : g.nodes())
    if (n.op != Op::Input && n.op != Op::Weight) ops.push_back(n.op);
  return ops;
}

const std::vector<float> kX = {-1,   0.5f, 2,     3.25f, 0,    1,    1, 1,  4, -2,    0.1f, 0.2f,
                               0.3f, 7,    0.25f, 0.75f, 1.5f, 2.5f, 9, -4, 6, 0.05f, 3,    2};

// y on the reference executor, against the chain's formula over the last
// `norm_axes` axes (the affine operands broadcast right-aligned).
void expect_chain_values(const Graph& g, const Chain& c, int norm_axes) {
  std::map<std::string, ref::Tensor<float>> feeds;
  feeds["x"] = ref::Tensor<float>(Shape{2, 3, 4}, kX);
  auto y = ref::evaluate<float>(g, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  const int64_t cols = norm_axes == 1 ? 4 : 12, rows = 24 / cols;
  const int64_t scale_n = c.scale_dims.empty() ? 0 : numel(c.scale_dims);
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < cols; ++k) mean += std::max(0.0f, kX[row * cols + k]);
    mean /= cols;
    for (int64_t k = 0; k < cols; ++k) {
      const double d = std::max(0.0f, kX[row * cols + k]) - mean;
      var += d * d;
    }
    var /= cols;
    for (int64_t k = 0; k < cols; ++k) {
      const int64_t at = row * cols + k;
      double want = (std::max(0.0f, kX[at]) - mean) / std::sqrt(var + c.epsilon);
      if (scale_n > 0) {
        const int64_t p = at % scale_n;  // right-aligned broadcast of a suffix shape
        want = want * scale_at(p) + (c.bias ? bias_at(p) : 0.0);
      }
      EXPECT_NEAR((*y)[0].data[at], want, 1e-5) << at;
    }
  }
}

TEST(DecomposedLayerNorm, TorchsNineNodesImportAsOneLayerNorm) {
  const Chain c;
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.layernorms, 1);
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::LayerNorm})) << print(m->graph);
  const Node& norm = m->graph.node(m->graph.outputs()[0].ref.node);
  EXPECT_EQ(norm.name, "y");
  EXPECT_EQ(norm.attrs.i(AttrKey::axis), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(norm.attrs.f(AttrKey::epsilon)), 1e-5f);
  EXPECT_TRUE(check(m->graph).ok());
  expect_chain_values(m->graph, c, 1);
}

TEST(DecomposedLayerNorm, AxesAsAnInputTwoAxesAndASquareByMulImportAsOneLayerNorm) {
  Chain c;
  c.opset = 18;
  c.axes = {-2, 2};
  c.square_by_mul = true;
  c.scale_dims = {3, 4};
  c.bias = false;
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.layernorms, 1);
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::LayerNorm})) << print(m->graph);
  EXPECT_EQ(m->graph.node(m->graph.outputs()[0].ref.node).attrs.i(AttrKey::axis), 1);
  expect_chain_values(m->graph, c, 2);
}

TEST(DecomposedLayerNorm, WithoutAffineOperandsTheNormalizationIsOneLayerNorm) {
  Chain c;
  c.scale_dims = {};
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::LayerNorm})) << print(m->graph);
  expect_chain_values(m->graph, c, 1);
}

TEST(DecomposedLayerNorm, AnAffineOperandThatWouldBroadcastXStaysAfterTheLayerNorm) {
  Chain c;
  c.scale_dims = {3, 4};  // the normalized shape is [4]
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.layernorms, 1);
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::LayerNorm, Op::Mul, Op::Add}))
      << print(m->graph);
  expect_chain_values(m->graph, c, 1);
}

TEST(DecomposedLayerNorm, CloseButDifferentChainsImportNodeByNode) {
  Chain other_axes, exponent, negative, output;
  other_axes.variance_axes = {1, 2};
  exponent.exponent = 3;
  negative.epsilon = -1e-5f;
  output.d_is_output = true;
  for (const Chain& c : {other_axes, exponent, negative, output}) {
    Expected<ImportedModel> m = import_chain(c);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->stats.layernorms, 0);
    EXPECT_EQ(
        ops_of(m->graph),
        (std::vector<Op>{Op::Relu, Op::ReduceMean, Op::Sub, c.square_by_mul ? Op::Mul : Op::Pow,
                         Op::ReduceMean, Op::Add, Op::Sqrt, Op::Div, Op::Mul, Op::Add}))
        << print(m->graph);
  }
  Expected<ImportedModel> m = import_chain(output);
  ASSERT_TRUE(m.ok()) << m.error().message;
  expect_chain_values(m->graph, output, 1);
}

TEST(DecomposedLayerNorm, ExportBelowOpset17WritesTheNineNodesThatImportAsOne) {
  Chain c;
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  Expected<std::string> bytes = export_onnx_bytes(m->graph, m->info);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(*bytes));
  std::vector<std::string> types;
  for (const onnx::NodeProto& n : written.graph().node()) types.push_back(n.op_type());
  EXPECT_EQ(types, (std::vector<std::string>{"Relu", "ReduceMean", "Sub", "Pow", "ReduceMean",
                                             "Add", "Sqrt", "Div", "Mul", "Add"}));
  Expected<ImportedModel> again = import_onnx_bytes(*bytes, "written.onnx", ".");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->stats.layernorms, 1);
  EXPECT_EQ(ops_of(again->graph), (std::vector<Op>{Op::Relu, Op::LayerNorm}));
  expect_chain_values(again->graph, c, 1);
}

}  // namespace
}  // namespace tso
