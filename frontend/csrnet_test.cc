// PET's CSRNet as build_csrnet writes it: the layer structure of the paper's
// configuration B, output shapes at batch 1 and 16, seeded weights, and an
// ONNX round trip that computes the same density map on the reference
// executor.
#include "frontend/csrnet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/checker.h"
#include "frontend/onnx.h"
#include "frontend/zoo_test_util.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

std::vector<const Node*> nodes_of(const Graph& g, Op op) {
  std::vector<const Node*> r;
  for (const Node& n : g.nodes())
    if (n.op == op) r.push_back(&n);
  return r;
}

Graph build(const CsrNetOptions& o) {
  Expected<Graph> g = build_csrnet(o);
  EXPECT_TRUE(g.ok()) << (g ? "" : g.error().message);
  return g ? *g : Graph{};
}

TEST(CsrNet, LayersAreVggFrontEndDilatedBackEndAndOneByOneOutput) {
  Graph g = build({});
  ASSERT_TRUE(check(g).ok());
  std::vector<const Node*> convs = nodes_of(g, Op::Conv2d);
  ASSERT_EQ(convs.size(), 17u);
  EXPECT_EQ(nodes_of(g, Op::MaxPool).size(), 3u);
  EXPECT_EQ(nodes_of(g, Op::Relu).size(), 16u);
  EXPECT_EQ(g.num_operators(), 36);

  const std::vector<int64_t> channels = {64,  64,  128, 128, 256, 256, 256, 512, 512,
                                         512, 512, 512, 512, 256, 128, 64,  1};
  int dilated = 0;
  for (size_t k = 0; k < convs.size(); ++k) {
    const Node& c = *convs[k];
    SCOPED_TRACE("convolution " + std::to_string(k) + " '" + c.name + "'");
    EXPECT_EQ(c.outs[0].shape[1], channels[k]);
    EXPECT_EQ(c.args.size(), 3u);  // with a bias
    const int64_t kernel = k == 16 ? 1 : 3, d = k >= 10 && k < 16 ? 2 : 1;
    EXPECT_EQ(g.type(c.args[1]).shape[2], kernel);
    EXPECT_EQ(c.attrs.ints(AttrKey::dilation), (std::vector<int64_t>{d, d}));
    EXPECT_EQ(c.attrs.ints(AttrKey::stride), (std::vector<int64_t>{1, 1}));
    // Every convolution keeps the spatial size: only the pools shrink it.
    EXPECT_EQ(c.outs[0].shape[2], g.type(c.args[0]).shape[2]);
    dilated += c.attrs.ints(AttrKey::dilation)[0] == 2;
  }
  EXPECT_EQ(dilated, 6);
  for (const Node* p : nodes_of(g, Op::MaxPool)) {
    EXPECT_EQ(p->attrs.ints(AttrKey::kernel), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(p->attrs.ints(AttrKey::stride), (std::vector<int64_t>{2, 2}));
  }
  // The density map has no ReLU: the output is the last convolution itself.
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(&g.node(g.outputs()[0].ref.node), convs.back());
  EXPECT_EQ(g.type(g.outputs()[0].ref), (TensorType{DType::kF32, Shape{1, 1, 28, 28}}));
}

TEST(CsrNet, OutputIsAnEighthOfTheImageAtBatchOneAndSixteen) {
  struct Case {
    CsrNetOptions options;
    Shape density;
  };
  for (const Case& c : {Case{{.batch = 16}, Shape{16, 1, 28, 28}},
                        Case{{.batch = 1, .height = 100, .width = 60}, Shape{1, 1, 12, 7}},
                        Case{{.batch = 16, .height = 8, .width = 8}, Shape{16, 1, 1, 1}}}) {
    Graph g = build(c.options);
    ASSERT_TRUE(check(g).ok());
    EXPECT_EQ(g.type(g.outputs()[0].ref).shape, c.density) << to_string(g.type(g.outputs()[0].ref));
  }
}

using testing::weight_named;

TEST(CsrNet, WeightsDependOnTheSeedOnly) {
  Graph a = build({.seed = 7}), b = build({.batch = 16, .seed = 7}), c = build({.seed = 8});
  for (const char* w : {"frontend.1.weight", "backend.6.weight", "output.bias"}) {
    SCOPED_TRACE(w);
    EXPECT_EQ(weight_named(a, w).bytes, weight_named(b, w).bytes);
    EXPECT_NE(weight_named(a, w).bytes, weight_named(c, w).bytes);
  }
}

TEST(CsrNet, BadSizesAreErrors) {
  for (const CsrNetOptions& o :
       {CsrNetOptions{.batch = 0}, CsrNetOptions{.height = 7}, CsrNetOptions{.width = -224},
        CsrNetOptions{
            .batch = int64_t{1} << 20, .height = int64_t{1} << 20, .width = int64_t{1} << 20}}) {
    Expected<Graph> g = build_csrnet(o);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().message.find("csrnet: "), std::string::npos) << g.error().message;
    EXPECT_NE(g.error().message.find("batch " + std::to_string(o.batch) + " of " +
                                     std::to_string(o.height) + "x" + std::to_string(o.width)),
              std::string::npos)
        << g.error().message;
  }
}

// 32x24 leaves a 4x3 map in the back end, so its dilated taps reach inside
// the map and not only into the padding.
TEST(CsrNet, OnnxRoundTripComputesTheSameDensityMap) {
  Graph g = build({.batch = 2, .height = 32, .width = 24, .seed = 3});
  Expected<std::string> bytes = export_onnx_bytes(g, OnnxModelInfo{});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  Expected<ImportedModel> back = import_onnx_bytes(*bytes, "csrnet.onnx", ".");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->graph == g);
  EXPECT_TRUE(back->opaque_nodes.empty());

  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ref::Tensor<double> image(Shape{2, 3, 32, 24});
  for (double& v : image.data) v = u(rng);
  auto run = [&](const Graph& graph) {
    auto out = ref::evaluate<double>(graph, {{"image", image}});
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out ? (*out)[0] : ref::Tensor<double>{};
  };
  ref::Tensor<double> want = run(g), got = run(back->graph);
  ASSERT_EQ(want.shape, (Shape{2, 1, 4, 3}));
  ASSERT_EQ(got.shape, want.shape);
  // The seeded He-style weights keep the map finite and the two images apart.
  double scale = 0;
  for (double v : want.data) {
    ASSERT_TRUE(std::isfinite(v));
    scale = std::max(scale, std::abs(v));
  }
  EXPECT_GT(scale, 0);
  EXPECT_NE(std::vector<double>(want.data.begin(), want.data.begin() + 12),
            std::vector<double>(want.data.begin() + 12, want.data.end()));
  // Weights round-trip as f32 bytes, so the two graphs compute the same thing.
  for (size_t k = 0; k < want.data.size(); ++k)
    EXPECT_NEAR(got.data[k], want.data[k], 1e-12 * scale) << "position " << k;
}

}  // namespace
}  // namespace tso
