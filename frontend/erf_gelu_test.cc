// The five nodes exporters write for GELU below opset 20 import as one gelu
// (erf_gelu.h): PyTorch's form with Constant nodes, as in BERT, and the form
// with x * 0.5 first and a multiplication by 1 / sqrt 2, operands swapped,
// from initializers; both compute what the five nodes compute on the
// reference executor, and leave no weight behind. Close but different
// chains import node by node: another divisor, another factor, a scalar of
// higher rank than x (it would broadcast x), an inner value the graph also
// outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/checker.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using testing::declare;

struct Chain {
  bool torch_form = true;         // Div, Erf, Add, Mul(x, .), Mul(., 0.5); else Mul(0.5, x) first
  float scale = std::sqrt(2.0f);  // the Div's divisor, or the Mul's 1 / sqrt 2
  float half = 0.5f;
  bool constant_nodes = true;  // the scalars as Constant nodes, else initializers
  bool rank3_half = false;     // the 0.5 of shape [1,1,1]
  bool erf_is_output = false;  // the Erf's output a graph output too
};

void scalar(onnx::GraphProto* g, const std::string& name, float v, bool as_node,
            bool rank3 = false) {
  onnx::TensorProto* t;
  if (as_node) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Constant");
    n->add_output(name);
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    t = a->mutable_t();
  } else {
    t = g->add_initializer();
    t->set_name(name);
  }
  t->set_data_type(onnx::TensorProto::FLOAT);
  if (rank3)
    for (int k = 0; k < 3; ++k) t->add_dims(1);
  t->add_float_data(v);
}

void add_node(onnx::GraphProto* g, const std::string& type, std::initializer_list<const char*> in,
              const std::string& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_name(out);
  n->set_op_type(type);
  for (const char* i : in) n->add_input(i);
  n->add_output(out);
}

// x: f32[2,3] -> relu -> the chain -> y.
onnx::ModelProto chain_model(const Chain& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("gelu");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  if (c.rank3_half)
    declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 2, 3});
  else
    declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  if (c.erf_is_output) declare(g->add_output(), "e", onnx::TensorProto::FLOAT, {2, 3});
  add_node(g, "Relu", {"x"}, "r");
  scalar(g, "scale", c.scale, c.constant_nodes);
  if (c.torch_form) {
    add_node(g, "Div", {"r", "scale"}, "d");
  } else {
    scalar(g, "half", c.half, c.constant_nodes, c.rank3_half);
    add_node(g, "Mul", {"half", "r"}, "h");
    add_node(g, "Mul", {"scale", "r"}, "d");
  }
  add_node(g, "Erf", {"d"}, "e");
  scalar(g, "one", 1.0f, c.constant_nodes);
  if (c.torch_form) {
    add_node(g, "Add", {"e", "one"}, "a");
    add_node(g, "Mul", {"r", "a"}, "m");
    scalar(g, "half", c.half, c.constant_nodes, c.rank3_half);
    add_node(g, "Mul", {"m", "half"}, "y");
  } else {
    add_node(g, "Add", {"one", "e"}, "a");
    add_node(g, "Mul", {"a", "h"}, "y");
  }
  return m;
}

Expected<ImportedModel> import_chain(const Chain& c) {
  return import_onnx_bytes(chain_model(c).SerializeAsString(), "gelu.onnx", ".");
}

std::vector<Op> ops_of(const Graph& g) {
  std::vector<Op> ops;
  for (const Node& n : g.nodes())
    if (n.op != Op::Input) ops.push_back(n.op);
  return ops;
}

// y on the reference executor, against the chain's formula with `scale`
// (a divisor in the torch form) and `half`.
void expect_chain_values(const Graph& g, const Chain& c) {
  const std::vector<float> xs = {-3, -1, -0.25f, 0.5f, 1, 2.5f};
  std::map<std::string, ref::Tensor<float>> feeds;
  feeds["x"] = ref::Tensor<float>(Shape{2, 3}, xs);
  auto y = ref::evaluate<float>(g, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  for (size_t k = 0; k < xs.size(); ++k) {
    const double r = std::max(0.0, double(xs[k]));
    const double arg = c.torch_form ? r / c.scale : r * c.scale;
    EXPECT_NEAR((*y)[0].data[k], r * c.half * (1 + std::erf(arg)), 1e-6) << k;
  }
}

TEST(ErfGelu, PyTorchsFiveNodesImportAsOneGelu) {
  const Chain c;
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.erf_gelus, 1);
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::Gelu}));
  EXPECT_EQ(m->graph.node(m->graph.outputs()[0].ref.node).name, "y");
  EXPECT_TRUE(check(m->graph).ok());
  expect_chain_values(m->graph, c);
}

TEST(ErfGelu, TheHalfFirstFormWithInitializersImportsAsOneGelu) {
  Chain c;
  c.torch_form = false;
  c.scale = 1 / std::sqrt(2.0f);
  c.constant_nodes = false;
  Expected<ImportedModel> m = import_chain(c);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.erf_gelus, 1);
  // The initializers the chain read are no weights of the graph.
  EXPECT_EQ(ops_of(m->graph), (std::vector<Op>{Op::Relu, Op::Gelu})) << print(m->graph);
  expect_chain_values(m->graph, c);
}

TEST(ErfGelu, CloseButDifferentChainsImportNodeByNode) {
  Chain divisor, factor, broadcast, output;
  divisor.scale = 2;
  factor.half = 0.6f;
  broadcast.rank3_half = true;
  output.erf_is_output = true;
  for (const Chain& c : {divisor, factor, output}) {
    Expected<ImportedModel> m = import_chain(c);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->stats.erf_gelus, 0);
    std::vector<Op> ops = ops_of(m->graph);
    ops.erase(std::remove(ops.begin(), ops.end(), Op::Weight), ops.end());
    EXPECT_EQ(ops, (std::vector<Op>{Op::Relu, Op::Div, Op::Erf, Op::Add, Op::Mul, Op::Mul}))
        << print(m->graph);
    expect_chain_values(m->graph, c);
  }
  Expected<ImportedModel> m = import_chain(broadcast);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->stats.erf_gelus, 0);
  EXPECT_EQ(m->graph.type(m->graph.outputs()[0].ref).shape, (Shape{1, 2, 3}));
}

}  // namespace
}  // namespace tso
