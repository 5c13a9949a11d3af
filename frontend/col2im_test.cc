// Col2Im imports as slices, pads and adds (col2im.h). Each case is a one-node
// opset-18 model run on the reference executor against a direct evaluation
// of the operator (every value of every block added at its pixel): VOLO's
// 3x3 blocks at stride 2 with padding, torch's plain fold, dilations with
// uneven strides and pads, one and three spatial axes, blocks that reach only
// into the padding. Malformed geometry is an error naming the node; a shape
// that is not constant leaves the node opaque.
#include "frontend/col2im.h"

#include <gtest/gtest.h>

#include <random>

#include "core/checker.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using Ints = std::vector<int64_t>;

struct Geometry {
  int64_t batch, channels;
  Ints image, block, dilations, strides, pads;
};

int64_t product(const Ints& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

Ints grid(const Geometry& g) {
  Ints out;
  for (size_t d = 0; d < g.image.size(); ++d) {
    const int64_t padded = g.image[d] + g.pads[d] + g.pads[d + g.image.size()];
    out.push_back((padded - g.dilations[d] * (g.block[d] - 1) - 1) / g.strides[d] + 1);
  }
  return out;
}

void add_ints(onnx::AttributeProto* a, const std::string& name, const Ints& v) {
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void add_initializer(onnx::GraphProto* g, const std::string& name, const Ints& v) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

// Input x of `input` dims; image and block shapes constants unless
// `shapes_are_inputs`.
onnx::ModelProto col2im_model(const Geometry& g, const Ints& input,
                              bool shapes_are_inputs = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(18);
  onnx::GraphProto* graph = m.mutable_graph();
  graph->set_name("col2im");
  auto declare = [](onnx::ValueInfoProto* v, const std::string& name, int32_t elem,
                    const Ints& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare(graph->add_input(), "x", onnx::TensorProto::FLOAT, input);
  if (shapes_are_inputs) {
    declare(graph->add_input(), "image", onnx::TensorProto::INT64,
            Ints{static_cast<int64_t>(g.image.size())});
    declare(graph->add_input(), "block", onnx::TensorProto::INT64,
            Ints{static_cast<int64_t>(g.block.size())});
  } else {
    add_initializer(graph, "image", g.image);
    add_initializer(graph, "block", g.block);
  }
  onnx::NodeProto* n = testing::add_node(graph, "fold", "Col2Im", {"x", "image", "block"}, "y");
  add_ints(n->add_attribute(), "dilations", g.dilations);
  add_ints(n->add_attribute(), "strides", g.strides);
  add_ints(n->add_attribute(), "pads", g.pads);
  Ints out = {g.batch, g.channels};
  out.insert(out.end(), g.image.begin(), g.image.end());
  declare(graph->add_output(), "y", onnx::TensorProto::FLOAT, out);
  return m;
}

// Col2Im evaluated directly: for every value of the input, the pixel its
// block and block element put it on, when inside the image.
std::vector<double> evaluate(const Geometry& g, const std::vector<float>& x) {
  const int n = static_cast<int>(g.image.size());
  const Ints blocks = grid(g);
  const int64_t elements = product(g.block), positions = product(blocks), pixels = product(g.image);
  std::vector<double> y(static_cast<size_t>(g.batch * g.channels * pixels), 0.0);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t c = 0; c < g.channels; ++c)
      for (int64_t e = 0; e < elements; ++e)
        for (int64_t l = 0; l < positions; ++l) {
          int64_t pixel = 0, ei = e, li = l, ep = elements, lp = positions;
          bool inside = true;
          for (int d = 0; d < n; ++d) {
            ep /= g.block[d], lp /= blocks[d];
            const int64_t at = (li / lp) * g.strides[d] - g.pads[d] + (ei / ep) * g.dilations[d];
            ei %= ep, li %= lp;
            inside &= at >= 0 && at < g.image[d];
            pixel = pixel * g.image[d] + at;
          }
          if (inside)
            y[static_cast<size_t>((b * g.channels + c) * pixels + pixel)] +=
                x[static_cast<size_t>(((b * g.channels + c) * elements + e) * positions + l)];
        }
  return y;
}

void expect_col2im(const Geometry& g) {
  const Ints input = {g.batch, g.channels * product(g.block), product(grid(g))};
  Expected<ImportedModel> m =
      import_onnx_bytes(col2im_model(g, input).SerializeAsString(), "col2im.onnx", ".");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(check(m->graph).ok());
  for (const Node& node : m->graph.nodes()) ASSERT_NE(node.op, Op::Opaque) << print(m->graph);

  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(product(input)));
  for (float& v : x) v = u(rng);
  auto y = ref::evaluate<float>(m->graph, {{"x", ref::Tensor<float>(Shape(input), x)}});
  ASSERT_TRUE(y.ok()) << y.error().message;
  Ints out = {g.batch, g.channels};
  out.insert(out.end(), g.image.begin(), g.image.end());
  EXPECT_EQ((*y)[0].shape, Shape(out));
  const std::vector<double> want = evaluate(g, x);
  ASSERT_EQ((*y)[0].data.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR((*y)[0].data[k], want[k], 1e-5) << k;
}

TEST(Col2Im, VolosStridedPaddedBlocks) {
  expect_col2im({1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}});
  expect_col2im({2, 3, {7, 5}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}});  // odd extents, batch 2
}

TEST(Col2Im, PlainFoldDilationsUnevenStridesAndPads) {
  expect_col2im({1, 2, {5, 7}, {2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}});
  expect_col2im({1, 2, {9, 8}, {2, 3}, {2, 1}, {1, 3}, {0, 1, 2, 0}});
  expect_col2im({1, 1, {4, 4}, {4, 4}, {1, 1}, {4, 4}, {0, 0, 0, 0}});  // blocks that tile
}

TEST(Col2Im, OneAndThreeSpatialAxes) {
  expect_col2im({2, 3, {7}, {3}, {1}, {2}, {1, 0}});
  expect_col2im({1, 2, {3, 4, 5}, {2, 2, 2}, {1, 1, 1}, {1, 2, 1}, {0, 0, 1, 0, 0, 0}});
}

TEST(Col2Im, BlocksReachingOnlyIntoThePaddingAddNothing) {
  // Element 0 of each block sits 3 pixels before the image, in the padding.
  expect_col2im({1, 2, {1}, {2}, {3}, {1}, {3, 0}});
  expect_col2im({1, 1, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {2, 2, 2, 2}});
}

TEST(Col2Im, ShapesThatAreNotConstantStayOpaque) {
  const Geometry g{1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}};
  Expected<ImportedModel> m =
      import_onnx_bytes(col2im_model(g, {1, 18, 9}, true).SerializeAsString(), "col2im.onnx", ".");
  ASSERT_TRUE(m.ok()) << m.error().message;
  bool opaque = false;
  for (const Node& n : m->graph.nodes()) opaque |= n.op == Op::Opaque;
  EXPECT_TRUE(opaque) << print(m->graph);
}

TEST(Col2Im, ABlockOfMoreThan1024ElementsStaysOpaque) {
  const Geometry g{1, 1, {33, 33}, {33, 33}, {1, 1}, {1, 1}, {0, 0, 0, 0}};
  Expected<ImportedModel> m =
      import_onnx_bytes(col2im_model(g, {1, 33 * 33, 1}).SerializeAsString(), "col2im.onnx", ".");
  ASSERT_TRUE(m.ok()) << m.error().message;
  bool opaque = false;
  for (const Node& n : m->graph.nodes()) opaque |= n.op == Op::Opaque;
  EXPECT_TRUE(opaque) << print(m->graph);
}

TEST(Col2Im, MalformedGeometryIsAnErrorNamingTheNode) {
  struct Case {
    Geometry g;
    Ints input;
    std::string message;
  };
  const Case cases[] = {
      {{1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}}, {1, 18, 8}, "number of blocks"},
      {{1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}}, {1, 17, 9}, "multiple of the block"},
      {{1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}}, {18, 9}, "reads [N, C * block, L]"},
      {{1, 2, {2, 2}, {5, 5}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, {1, 50, 1}, "more than the padded"},
      {{1, 2, {6, 6}, {3, 3}, {1, 1}, {0, 2}, {1, 1, 1, 1}}, {1, 18, 9}, "must be >= 1"},
      {{1, 2, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1}}, {1, 18, 9}, "for 2 spatial axes"},
      {{1, 2, {6, 6}, {3}, {1, 1}, {2, 2}, {1, 1, 1, 1}}, {1, 18, 9}, "one extent per spatial"},
  };
  for (const Case& c : cases) {
    Expected<ImportedModel> m =
        import_onnx_bytes(col2im_model(c.g, c.input).SerializeAsString(), "col2im.onnx", ".");
    ASSERT_FALSE(m.ok()) << c.message;
    EXPECT_NE(m.error().message.find("'fold'"), std::string::npos) << m.error().message;
    EXPECT_NE(m.error().message.find(c.message), std::string::npos) << m.error().message;
  }
}

}  // namespace
}  // namespace tso
