// torchvision's ResNet-18 as build_resnet18 writes it: the layer structure,
// torchvision's parameter count and the published multiply-accumulates,
// shapes at batch 1 and 16, seeded weights, bad sizes, and an ONNX round
// trip that computes the same logits on the reference executor.
#include "frontend/resnet18.h"

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

Graph build(const ResNet18Options& o) {
  Expected<Graph> g = build_resnet18(o);
  EXPECT_TRUE(g.ok()) << (g ? "" : g.error().message);
  return g ? *g : Graph{};
}

TEST(ResNet18, LayersAreTorchvisionsBasicBlocks) {
  Graph g = build({});
  ASSERT_TRUE(check(g).ok());
  std::vector<const Node*> convs = nodes_of(g, Op::Conv2d);
  ASSERT_EQ(convs.size(), 20u);  // conv1, 16 in the blocks, 3 shortcuts
  EXPECT_EQ(nodes_of(g, Op::BatchNorm).size(), 20u);
  EXPECT_EQ(nodes_of(g, Op::Relu).size(), 17u);
  EXPECT_EQ(nodes_of(g, Op::Add).size(), 8u);
  EXPECT_EQ(nodes_of(g, Op::MaxPool).size(), 1u);
  EXPECT_EQ(nodes_of(g, Op::GlobalAvgPool).size(), 1u);
  EXPECT_EQ(nodes_of(g, Op::Gemm).size(), 1u);
  EXPECT_EQ(g.num_operators(), 69);

  int strided = 0, shortcuts = 0;
  for (const Node* c : convs) {
    SCOPED_TRACE(c->name);
    EXPECT_EQ(c->args.size(), 2u);  // no bias: batchnorm follows
    const int64_t k = g.type(c->args[1]).shape[2], s = c->attrs.ints(AttrKey::stride)[0];
    EXPECT_EQ(c->attrs.pad(AttrKey::pad).pads,
              (std::array<int64_t, 4>{k / 2, k / 2, k / 2, k / 2}));
    strided += s == 2;
    if (c->name.find("downsample") != std::string::npos) {
      ++shortcuts;
      EXPECT_EQ(k, 1);
      EXPECT_EQ(s, 2);
    }
  }
  EXPECT_EQ(strided, 7);  // conv1, and the first convolution and shortcut of stages 2-4
  EXPECT_EQ(shortcuts, 3);
  // Each stage halves the map and doubles the channels.
  const Shape stage_out[] = {{1, 64, 56, 56}, {1, 128, 28, 28}, {1, 256, 14, 14}, {1, 512, 7, 7}};
  for (int s = 0; s < 4; ++s) {
    const std::string name = "layer" + std::to_string(s + 1) + ".1.relu";
    auto it = std::find_if(g.nodes().begin(), g.nodes().end(),
                           [&](const Node& n) { return n.name == name; });
    ASSERT_NE(it, g.nodes().end()) << name;
    EXPECT_EQ(it->outs[0].shape, stage_out[s]) << name;
  }
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.type(g.outputs()[0].ref), (TensorType{DType::kF32, Shape{1, 1000}}));
}

// torchvision's resnet18().parameters() hold 11,689,512 values; the
// batchnorms' running means and variances (4,800 channels) are buffers.
TEST(ResNet18, ParameterCountIsTorchvisions) {
  Graph g = build({});
  int64_t parameters = 0, buffers = 0;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::Weight) continue;
    ASSERT_NE(n.data, nullptr) << n.name;
    const bool buffer = n.name.ends_with("running_mean") || n.name.ends_with("running_var");
    (buffer ? buffers : parameters) += n.outs[0].shape.numel();
  }
  EXPECT_EQ(parameters, 11'689'512);
  EXPECT_EQ(buffers, 2 * 4'800);
}

// The published 1.814 G multiply-accumulates at 224x224 (convolutions
// 1,813,561,344, the classifier 512,000) at 2 FLOPs each, and 16 times that
// at batch 16.
TEST(ResNet18, FlopsAreThePublishedMultiplyAccumulates) {
  for (int64_t batch : {1, 16}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    Graph g = build({.batch = batch});
    int64_t conv = 0, fc = 0, total = 0;
    for (int i = 0; i < g.size(); ++i) {
      const Node& n = g.node(i);
      const int64_t f = node_flops(g, i);
      total += f;
      if (n.op == Op::Conv2d) conv += f;
      if (n.op == Op::Gemm) fc += f;
    }
    EXPECT_EQ(conv, batch * 2 * 1'813'561'344);
    EXPECT_EQ(fc, batch * (2 * 512'000 + 1'000));  // and the bias
    // Batchnorm, ReLU, adds and pools are the rest: under 2%.
    EXPECT_GT(total, conv + fc);
    EXPECT_LT(total, (conv + fc) / 50 * 51);
  }
}

TEST(ResNet18, LogitsAtBatchOneAndSixteenAndOtherSizes) {
  struct Case {
    ResNet18Options options;
    Shape stage4;
  };
  for (const Case& c : {Case{{.batch = 16}, Shape{16, 512, 7, 7}},
                        Case{{.batch = 2, .height = 32, .width = 48}, Shape{2, 512, 1, 2}},
                        Case{{.height = 1, .width = 1}, Shape{1, 512, 1, 1}}}) {
    Graph g = build(c.options);
    ASSERT_TRUE(check(g).ok());
    EXPECT_EQ(nodes_of(g, Op::GlobalAvgPool)[0]->outs[0].shape[0], c.options.batch);
    EXPECT_EQ(g.type(nodes_of(g, Op::GlobalAvgPool)[0]->args[0]).shape, c.stage4);
    EXPECT_EQ(g.type(g.outputs()[0].ref).shape, (Shape{c.options.batch, 1000}));
  }
}

using testing::weight_named;

TEST(ResNet18, WeightsDependOnTheSeedOnly) {
  Graph a = build({.seed = 7}), b = build({.batch = 16, .seed = 7}), c = build({.seed = 8});
  for (const char* w :
       {"conv1.weight", "layer3.0.downsample.0.weight", "layer4.1.bn2.running_var", "fc.bias"}) {
    SCOPED_TRACE(w);
    EXPECT_EQ(weight_named(a, w).bytes, weight_named(b, w).bytes);
    EXPECT_NE(weight_named(a, w).bytes, weight_named(c, w).bytes);
  }
}

TEST(ResNet18, BadSizesAreErrors) {
  for (const ResNet18Options& o :
       {ResNet18Options{.batch = 0}, ResNet18Options{.height = 0}, ResNet18Options{.width = -224},
        ResNet18Options{
            .batch = int64_t{1} << 20, .height = int64_t{1} << 22, .width = int64_t{1} << 22}}) {
    Expected<Graph> g = build_resnet18(o);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().message.find("resnet18: "), std::string::npos) << g.error().message;
    EXPECT_NE(g.error().message.find("batch " + std::to_string(o.batch) + " of " +
                                     std::to_string(o.height) + "x" + std::to_string(o.width)),
              std::string::npos)
        << g.error().message;
  }
}

// 40x36 leaves a 2x2 map in stage 4, so the last convolutions see more than
// their padding.
TEST(ResNet18, OnnxRoundTripComputesTheSameLogits) {
  Graph g = build({.batch = 2, .height = 40, .width = 36, .seed = 3});
  Expected<std::string> bytes = export_onnx_bytes(g, OnnxModelInfo{});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  Expected<ImportedModel> back = import_onnx_bytes(*bytes, "resnet18.onnx", ".");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->graph == g);
  EXPECT_TRUE(back->opaque_nodes.empty());

  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ref::Tensor<double> image(Shape{2, 3, 40, 36});
  for (double& v : image.data) v = u(rng);
  auto run = [&](const Graph& graph) {
    auto out = ref::evaluate<double>(graph, {{"input", image}});
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out ? (*out)[0] : ref::Tensor<double>{};
  };
  ref::Tensor<double> want = run(g), got = run(back->graph);
  ASSERT_EQ(want.shape, (Shape{2, 1000}));
  ASSERT_EQ(got.shape, want.shape);
  double scale = 0;
  for (double v : want.data) {
    ASSERT_TRUE(std::isfinite(v));
    scale = std::max(scale, std::abs(v));
  }
  EXPECT_GT(scale, 0);
  EXPECT_NE(std::vector<double>(want.data.begin(), want.data.begin() + 1000),
            std::vector<double>(want.data.begin() + 1000, want.data.end()));
  for (size_t k = 0; k < want.data.size(); ++k)
    EXPECT_NEAR(got.data[k], want.data[k], 1e-12 * scale) << "position " << k;
}

}  // namespace
}  // namespace tso
