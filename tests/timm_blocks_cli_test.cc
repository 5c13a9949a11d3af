// timm's blocks end to end through the binary (issue 16 points 4 and 7): a
// DarkNet block (convolution and LeakyRelu with slope 0.1) and a Mish
// (x tanh(softplus(x)), as exporters below opset 18 write it, and opset 18's
// Mish operator) on a model built
// here, imported with no opaque node, optimized (a relu fused into its
// convolution) and checked whole, the output
// run by ONNX Runtime and by tso's CPU runtime (which fuses the leaky relu
// into its convolution) and reference executor. The close but wrong variant:
// a LeakyRelu whose slope is not finite is an error naming the node. And
// BiT's group normalization as torch.onnx writes it below opset 18 (a
// reshape to [N, groups, -1], InstanceNormalization with unit scale and zero
// bias, a reshape back, the affine mul and add), beside an
// InstanceNormalization with a scale and bias of its own; an
// InstanceNormalization whose scale does not have the input's channels is an
// error naming the node. Opset 18's GroupNormalization (scale and bias per
// group); num_groups that does not divide the channels, or a scale per
// channel, is an error naming the node. ConvNeXt-V2's global response
// normalization (ReduceL2, ReduceMean) before a ReduceMax.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;

// x: f32[1,8,12,12] -> Conv 3x3 -> LeakyRelu(slope) -> Conv 1x1 -> Relu ->
// Mish -> y.
fs::path write_model(const fs::path& dir, float slope, bool mish_node = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(mish_node ? 18 : 17);
  auto* g = m.mutable_graph();
  g->set_name("darknet");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 8, 12, 12});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 16, 12, 12});
  std::mt19937_64 rng(17);
  testing::add_random_floats(g, "w1", {16, 8, 3, 3}, rng);
  testing::add_random_floats(g, "w2", {16, 16, 1, 1}, rng);
  testing::set_ints(add_node(g, "Conv", {"x", "w1"}, "c1"), "pads", {1, 1, 1, 1});
  onnx::NodeProto* leaky = add_node(g, "LeakyRelu", {"c1"}, "a1");
  onnx::AttributeProto* alpha = leaky->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(slope);
  add_node(g, "Conv", {"a1", "w2"}, "c2");
  add_node(g, "Relu", {"c2"}, "r2");
  if (mish_node) {
    add_node(g, "Mish", {"r2"}, "y");
  } else {
    add_node(g, "Softplus", {"r2"}, "soft");
    add_node(g, "Tanh", {"soft"}, "gate");
    add_node(g, "Mul", {"r2", "gate"}, "y");
  }
  const fs::path p = dir / "darknet.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// x: f32[1,4,6,6] -> Conv 3x3 (8 channels) -> Relu -> Reshape [1,4,-1] ->
// InstanceNormalization(ones, zeros) -> Reshape [1,8,6,6] -> * gamma + beta
// -> Relu = y; z = InstanceNormalization(x, scale, bias) with `channels`
// entries in scale and bias.
fs::path write_group_norm_model(const fs::path& dir, int64_t channels, int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("bit");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 6, 6});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 8, 6, 6});
  testing::declare(g->add_output(), "z", onnx::TensorProto::FLOAT, {1, 4, 6, 6});
  std::mt19937_64 rng(19);
  testing::add_random_floats(g, "w", {8, 4, 3, 3}, rng);
  testing::add_random_floats(g, "gamma", {8, 1, 1}, rng);
  testing::add_random_floats(g, "beta", {8, 1, 1}, rng);
  testing::add_random_floats(g, "scale", {channels}, rng);
  testing::add_random_floats(g, "bias", {channels}, rng);
  for (const auto& [name, value] : {std::pair{"ones", 1.0f}, {"zeros", 0.0f}}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    for (int k = 0; k < 4; ++k) t->add_float_data(value);
  }
  for (const auto& [name, dims] :
       {std::pair<const char*, std::vector<int64_t>>{"grouped", {1, 4, -1}},
        {"back", {1, 8, 6, 6}}}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(dims.size()));
    for (int64_t d : dims) t->add_int64_data(d);
  }
  testing::set_ints(add_node(g, "Conv", {"x", "w"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "r");
  add_node(g, "Reshape", {"r", "grouped"}, "groups");
  add_node(g, "InstanceNormalization", {"groups", "ones", "zeros"}, "normed");
  add_node(g, "Reshape", {"normed", "back"}, "n");
  add_node(g, "Mul", {"n", "gamma"}, "scaled");
  add_node(g, "Add", {"scaled", "beta"}, "shifted");
  add_node(g, "Relu", {"shifted"}, "y");
  add_node(g, "InstanceNormalization", {"x", "scale", "bias"}, "z");
  const fs::path p = dir / "bit.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// x: f32[1,4,6,6] -> Conv 3x3 (8 channels) -> Relu -> GroupNormalization
// (opset 18: `groups` groups, `entries` scale and bias values) = y.
fs::path write_group_norm18_model(const fs::path& dir, int64_t groups, int64_t entries) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("gn18");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 6, 6});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 8, 6, 6});
  std::mt19937_64 rng(31);
  testing::add_random_floats(g, "w", {8, 4, 3, 3}, rng);
  testing::add_random_floats(g, "scale", {entries}, rng);
  testing::add_random_floats(g, "bias", {entries}, rng);
  testing::set_ints(add_node(g, "Conv", {"x", "w"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "r");
  testing::set_int(add_node(g, "GroupNormalization", {"r", "scale", "bias"}, "y"), "num_groups",
                   groups);
  const fs::path p = dir / "gn18.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// x: f32[1,8,6,6] -> Conv 1x1 -> Relu -> Transpose to channels last ->
// ConvNeXt-V2's global response normalization (gx = ReduceL2 over H and W,
// nx = gx / (ReduceMean of gx over C + 1e-6), gamma (x nx) + beta + x) ->
// ReduceMax over C = y (a pooled feature map).
fs::path write_grn_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("grn");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 8, 6, 6});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 6, 6});
  std::mt19937_64 rng(29);
  testing::add_random_floats(g, "w", {8, 8, 1, 1}, rng);
  testing::add_random_floats(g, "gamma", {8}, rng);
  testing::add_random_floats(g, "beta", {8}, rng);
  testing::add_scalar(g, "eps", 1e-6f);
  add_node(g, "Conv", {"x", "w"}, "c");
  add_node(g, "Relu", {"c"}, "r");
  testing::set_ints(add_node(g, "Transpose", {"r"}, "nhwc"), "perm", {0, 2, 3, 1});
  testing::set_ints(add_node(g, "ReduceL2", {"nhwc"}, "gx"), "axes", {1, 2});
  testing::set_ints(add_node(g, "ReduceMean", {"gx"}, "gm"), "axes", {-1});
  add_node(g, "Add", {"gm", "eps"}, "ge");
  add_node(g, "Div", {"gx", "ge"}, "nx");
  add_node(g, "Mul", {"nhwc", "nx"}, "xn");
  add_node(g, "Mul", {"gamma", "xn"}, "scaled");
  add_node(g, "Add", {"scaled", "beta"}, "shifted");
  add_node(g, "Add", {"shifted", "nhwc"}, "grn");
  onnx::NodeProto* pool = add_node(g, "ReduceMax", {"grn"}, "y");
  testing::set_ints(pool, "axes", {3});
  testing::set_int(pool, "keepdims", 0);
  const fs::path p = dir / "grn.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

TEST(TimmBlocksCli, DarkNetAndMishMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli");
  const fs::path model = write_model(dir, 0.1f), out = dir / "optimized.onnx";

  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("leaky_relu"), std::string::npos) << listing;
  EXPECT_NE(listing.find("softplus"), std::string::npos) << listing;
  nlohmann::json j = testing::optimize_checked_for_h100(model, out, dir);
  EXPECT_GE(j["classic_rewrites"]["fuse_activation"].get<int>(), 1);

  testing::write_random_input(dir / "in", "x", Shape{1, 8, 12, 12}, 3);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);

  testing::RunResult run =
      tso({"run", model.string(), "--iters", "1", "--profile", "1", "--seed", "1"}, dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("node 'c1' (conv2d) + leaky_relu"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

// Opset 18 has a Mish operator: it imports as softplus, tanh and mul.
TEST(TimmBlocksCli, TheMishOperatorOfOpset18MatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli_mish");
  const fs::path model = write_model(dir, 0.1f, true), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("softplus"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 8, 12, 12}, 3);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(TimmBlocksCli, ALeakyReluSlopeThatIsNotFiniteIsAnErrorNamingTheNode) {
  const fs::path dir = testing::temp_dir("timm_blocks_cli_slope");
  const fs::path model = write_model(dir, std::numeric_limits<float>::infinity());
  testing::RunResult r = tso({"inspect", model.string()}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("node 'a1' (LeakyRelu)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("alpha inf is not finite"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(TimmBlocksCli, GroupAndInstanceNormalizationMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli_norm");
  const fs::path model = write_group_norm_model(dir, 4), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("layernorm 2"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 4, 6, 6}, 5);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 2, dir);
  fs::remove_all(dir);
}

// Below opset 17, which has no LayerNormalization, the layernorms are
// written as the nine nodes torch.onnx writes for one (tso optimize refused
// to export them before).
TEST(TimmBlocksCli, GroupNormBelowOpset17IsWrittenAndMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli_norm14");
  const fs::path model = write_group_norm_model(dir, 4, 14), out = dir / "optimized.onnx";
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 4, 6, 6}, 5);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 2, dir);
  fs::remove_all(dir);
}

TEST(TimmBlocksCli, ConvNeXtV2GlobalResponseNormMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli_grn");
  const fs::path model = write_grn_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("reduce_l2"), std::string::npos) << listing;
  EXPECT_NE(listing.find("reduce_max"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 8, 6, 6}, 11);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

// Opset 18's GroupNormalization, its scale and bias per group, imports as
// layernorm between reshapes and a per-channel mul and add; num_groups that
// does not divide the channels, and a scale per channel (opset 21's) at
// opset 18, are errors naming the node.
TEST(TimmBlocksCli, GroupNormalizationOfOpset18MatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timm_blocks_cli_gn18");
  const fs::path model = write_group_norm18_model(dir, 2, 2), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("layernorm"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 4, 6, 6}, 13);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);

  for (const auto& [groups, entries, message] :
       {std::tuple<int64_t, int64_t, const char*>{
            3, 3, "num_groups 3 does not divide the 8 channels of f32[1,8,6,6]"},
        {2, 8, "scale f32[8] and bias f32[8] must have one entry per group (2) at opset 18"}}) {
    testing::RunResult r =
        tso({"inspect", write_group_norm18_model(dir, groups, entries).string()}, dir);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("node 'y' (GroupNormalization)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  fs::remove_all(dir);
}

TEST(TimmBlocksCli, AnInstanceNormalizationScaleOfOtherChannelsIsAnErrorNamingTheNode) {
  const fs::path dir = testing::temp_dir("timm_blocks_cli_channels");
  const fs::path model = write_group_norm_model(dir, 3);
  testing::RunResult r = tso({"inspect", model.string()}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("node 'z' (InstanceNormalization)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("must have the 4 channels of f32[1,4,6,6]"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
