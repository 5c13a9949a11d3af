// Einsum imports as the IR's products, sums and data movement (einsum.h).
// Each equation is imported from a one-node ONNX model and run on the
// reference executor against a direct evaluation of the equation (a loop
// over every assignment of the labels): the forms transformers' and timm's
// exports carry (BERT's relative_key scores "bhld,lrd->bhlr", ALBERT's
// "bfnd,ndh->bfh", batched products, transposes, sums), ellipses, implicit
// outputs, outer and elementwise products, broadcasting, three operands.
// A diagonal stays opaque; malformed equations are errors.
#include "frontend/einsum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/checker.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using onnx_frontend::parse_einsum;
using testing::declare;

using Dims = std::vector<int64_t>;

onnx::ModelProto einsum_model(const std::string& equation, const std::vector<Dims>& inputs,
                              const Dims& output) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("einsum");
  onnx::NodeProto* n = g->add_node();
  n->set_name("e");
  n->set_op_type("Einsum");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : inputs[i]) t->mutable_shape()->add_dim()->set_dim_value(d);
    n->add_input(name);
  }
  n->add_output("y");
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  auto* t = y->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : output) t->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// The equation evaluated directly: for every assignment of the labels, the
// product of the operands' elements added into the output's. Terms are as
// parse_einsum gives them; an axis of extent 1 broadcasts.
std::vector<double> evaluate(const onnx_frontend::EinsumTerms& terms, const std::vector<Dims>& dims,
                             const std::vector<std::vector<float>>& values, const Dims& out) {
  std::map<char, int64_t> extent;
  for (size_t i = 0; i < dims.size(); ++i)
    for (size_t j = 0; j < dims[i].size(); ++j)
      extent[terms.inputs[i][j]] = std::max(extent[terms.inputs[i][j]], dims[i][j]);
  std::vector<char> labels;
  for (const auto& [c, n] : extent) labels.push_back(c);
  std::vector<double> y(static_cast<size_t>(numel(out)), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  auto offset = [&](const std::string& term, const Dims& d) {
    int64_t o = 0;
    for (size_t j = 0; j < term.size(); ++j) o = o * d[j] + (d[j] == 1 ? 0 : at[term[j]]);
    return o;
  };
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < dims.size(); ++i) p *= values[i][offset(terms.inputs[i], dims[i])];
    y[offset(terms.output, out)] += p;
    size_t k = 0;
    for (; k < labels.size(); ++k) {
      if (++at[labels[k]] < extent[labels[k]]) break;
      at[labels[k]] = 0;
    }
    if (k == labels.size()) return y;
  }
}

// Imports the one-node model, checks the graph has no opaque node, and
// compares its output on the reference executor with `evaluate`.
void expect_einsum(const std::string& equation, const std::vector<Dims>& inputs,
                   const Dims& output) {
  SCOPED_TRACE(equation);
  Expected<ImportedModel> m = import_onnx_bytes(
      einsum_model(equation, inputs, output).SerializeAsString(), "einsum.onnx", ".");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(check(m->graph).ok());
  for (const Node& n : m->graph.nodes()) ASSERT_NE(n.op, Op::Opaque) << print(m->graph);
  std::vector<int> ranks;
  for (const Dims& d : inputs) ranks.push_back(static_cast<int>(d.size()));
  Expected<onnx_frontend::EinsumTerms> terms = parse_einsum(equation, ranks);
  ASSERT_TRUE(terms.ok());

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::map<std::string, ref::Tensor<float>> feeds;
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<float> v(static_cast<size_t>(numel(inputs[i])));
    for (float& x : v) x = u(rng);
    feeds["x" + std::to_string(i)] = ref::Tensor<float>(Shape(inputs[i]), v);
    values.push_back(v);
  }
  auto y = ref::evaluate<float>(m->graph, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  EXPECT_EQ((*y)[0].shape, Shape(output));
  const std::vector<double> want = evaluate(*terms, inputs, values, output);
  ASSERT_EQ((*y)[0].data.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR((*y)[0].data[k], want[k], 1e-5) << k;
}

TEST(Einsum, ProductsOfRealExports) {
  expect_einsum("bhld,lrd->bhlr", {{1, 2, 5, 4}, {5, 5, 4}}, {1, 2, 5, 5});  // relative_key
  expect_einsum("bhrd,lrd->bhlr", {{1, 2, 5, 4}, {5, 5, 4}}, {1, 2, 5, 5});  // relative_key_query
  expect_einsum("bfnd,ndh->bfh", {{1, 3, 2, 4}, {2, 4, 6}}, {1, 3, 6});      // ALBERT's output
  expect_einsum("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5});
  expect_einsum("bhqd,bhkd->bhqk", {{1, 2, 3, 4}, {1, 2, 5, 4}}, {1, 2, 3, 5});
  expect_einsum("...qd,...kd->...qk", {{2, 2, 3, 4}, {2, 5, 4}}, {2, 2, 3, 5});
}

TEST(Einsum, SingleOperandsTransposeAndSum) {
  expect_einsum("ij->ji", {{3, 4}}, {4, 3});
  expect_einsum("ijk->k", {{2, 3, 4}}, {4});
  expect_einsum("ijk->", {{2, 3, 4}}, {});
  expect_einsum("nchw->nhwc", {{1, 2, 3, 4}}, {1, 3, 4, 2});
  expect_einsum("...ij->...ji", {{2, 3, 4}}, {2, 4, 3});
}

TEST(Einsum, ImplicitOutputsAreTheLabelsReadOnceInOrder) {
  expect_einsum("ij,jk", {{3, 4}, {4, 5}}, {3, 5});
  expect_einsum("ba", {{3, 4}}, {4, 3});
  expect_einsum("...ij,...jk", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5});
}

TEST(Einsum, OuterElementwiseBroadcastingAndThreeOperands) {
  expect_einsum("i,j->ij", {{3}, {4}}, {3, 4});
  expect_einsum("ij,ij->ij", {{3, 4}, {3, 4}}, {3, 4});
  expect_einsum("i,i->", {{5}, {5}}, {});
  expect_einsum("bij,jk->bik", {{2, 3, 4}, {4, 5}}, {2, 3, 5});
  expect_einsum("bij,bjk->bik", {{1, 3, 4}, {2, 4, 5}}, {2, 3, 5});  // batch 1 against 2
  expect_einsum("ij,jk->ik", {{3, 1}, {4, 5}}, {3, 5});              // summed 1 against 4
  expect_einsum("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {2, 5});
  expect_einsum("ij,jk,ik->i", {{2, 3}, {3, 4}, {2, 4}}, {2});
}

TEST(Einsum, ADiagonalStaysOpaque) {
  Expected<ImportedModel> m = import_onnx_bytes(
      einsum_model("ii->i", {{3, 3}}, {3}).SerializeAsString(), "einsum.onnx", ".");
  ASSERT_TRUE(m.ok()) << m.error().message;
  bool opaque = false;
  for (const Node& n : m->graph.nodes()) opaque |= n.op == Op::Opaque;
  EXPECT_TRUE(opaque) << print(m->graph);
}

TEST(Einsum, MalformedEquationsAreErrorsNamingTheNode) {
  struct Case {
    std::string equation;
    std::vector<Dims> inputs;
    std::string message;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{3, 4}}, "2 input terms for 1 inputs"},
      {"ijk->k", {{3, 4}}, "names 3 axes of an input of rank 2"},
      {"ij->iz", {{3, 4}}, "output label 'z'"},
      {"ij->ii", {{3, 4}}, "is repeated"},
      {"i1->i", {{3, 4}}, "neither a letter nor an ellipsis"},
      {"ij,jk->ik", {{3, 4}, {5, 6}}, "label 'j' has extents 4 and 5"},
  };
  for (const Case& c : cases) {
    Expected<ImportedModel> m = import_onnx_bytes(
        einsum_model(c.equation, c.inputs, {}).SerializeAsString(), "einsum.onnx", ".");
    ASSERT_FALSE(m.ok()) << c.equation;
    EXPECT_NE(m.error().message.find("'e'"), std::string::npos) << m.error().message;
    EXPECT_NE(m.error().message.find(c.message), std::string::npos) << m.error().message;
  }
}

}  // namespace
}  // namespace tso
