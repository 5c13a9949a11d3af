// Pad in reflect, edge and wrap modes and LRN end to end through the
// binary, as image models use them: style transfer networks and CycleGAN's
// generators pad by reflection before each convolution; AlexNet, CaffeNet and
// GoogLeNet normalize across channels by LRN. The model, built here, imports
// with no opaque node (the pads as gathers, LRN as an average pooling of
// squares), optimizes (checked), and computes what ONNX Runtime computes, on
// tso's CPU runtime and reference executor and in ONNX Runtime on the file
// tso writes. Likewise a classifier trained with NLL loss, whose head ends in
// LogSoftmax, after a clamp by tensors (Max and Min) and a log-magnitude
// (Abs, Log), as audio front ends take one; and a super-resolution tail
// (DepthToSpace in both modes, SpaceToDepth) with the reductions written as
// the IR's (ReduceLogSumExp, ReduceMin, ReduceL1); and a diffusion UNet's
// timestep embedding (Sin, Cos of a computed tensor), and an R-CNN's TopKs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;

// x: f32[1,3,12,12] -> Pad reflect by 3 = f32[1,3,18,18] -> Conv (W
// [8,3,7,7], bias) = f32[1,8,12,12] -> Relu -> LRN (size 5: two channels either
// side; ONNX Runtime refuses even sizes) -> Pad edge [1, 2 | 2, 1] = f32[1,8,15,15] -> Conv (W
// [4,8,3,3]) = f32[1,4,13,13] -> Pad wrap [2, 0 | 1, 5] (a pad of 5 on an axis of 13, ...) = y:
// f32[1,4,16,18].
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(19);
  auto* g = m.mutable_graph();
  g->set_name("image_ops");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 12, 12});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 4, 16, 18});
  std::mt19937_64 rng(5);
  testing::add_random_floats(g, "w1", {8, 3, 7, 7}, rng);
  testing::add_random_floats(g, "b1", {8}, rng);
  testing::add_random_floats(g, "w2", {4, 8, 3, 3}, rng);
  testing::add_i64s(g, "reflect_pads", {0, 0, 3, 3, 0, 0, 3, 3});
  testing::add_i64s(g, "edge_pads", {0, 0, 1, 2, 0, 0, 2, 1});
  testing::add_i64s(g, "wrap_pads", {0, 0, 2, 0, 0, 0, 1, 5});
  testing::set_string(add_node(g, "mirror", "Pad", {"x", "reflect_pads"}, "xp"), "mode", "reflect");
  add_node(g, "Conv", {"xp", "w1", "b1"}, "c1");
  add_node(g, "Relu", {"c1"}, "r1");  // as AlexNet's, fused into the conv by the optimizer
  onnx::NodeProto* lrn = add_node(g, "norm", "LRN", {"r1"}, "n1");
  testing::set_int(lrn, "size", 5);
  testing::set_float(lrn, "alpha", 0.5f);
  testing::set_float(lrn, "beta", 0.75f);
  testing::set_float(lrn, "bias", 1.5f);
  testing::set_string(add_node(g, "border", "Pad", {"n1", "edge_pads"}, "np"), "mode", "edge");
  add_node(g, "Conv", {"np", "w2"}, "c2");
  testing::set_string(add_node(g, "around", "Pad", {"c2", "wrap_pads"}, "y"), "mode", "wrap");
  const fs::path p = dir / "image_ops.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// At opset 11, where LogSoftmax normalizes the input flattened to 2-D at its
// axis: x: f32[2,3,8,8] -> Conv (W [6,3,3,3], pads 1) -> Relu (fused into
// the conv by the optimizer) = c: f32[2,6,8,8] -> Max(c, lo, floor) ->
// Min(., hi) (lo, hi: [1,6,1,1], floor a scalar) -> Abs -> Add 1e-3 -> Log =
// m -> GlobalAveragePool -> Flatten -> Gemm (W [5,6], trans_b) -> LogSoftmax
// = y: f32[2,5]; m -> LogSoftmax (axis 1: over the 384 values of each
// sample) = z: f32[2,6,8,8].
fs::path write_nll_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  g->set_name("nll_head");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 8, 8});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 5});
  testing::declare(g->add_output(), "z", onnx::TensorProto::FLOAT, {2, 6, 8, 8});
  std::mt19937_64 rng(7);
  testing::add_random_floats(g, "w", {6, 3, 3, 3}, rng);
  testing::add_random_floats(g, "lo", {1, 6, 1, 1}, rng);
  testing::add_random_floats(g, "hi", {1, 6, 1, 1}, rng);
  testing::add_random_floats(g, "fc", {5, 6}, rng);
  testing::add_scalar(g, "floor", -0.5f);
  testing::add_scalar(g, "eps", 1e-3f);
  testing::set_ints(add_node(g, "Conv", {"x", "w"}, "conv"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"conv"}, "c");
  add_node(g, "Max", {"c", "lo", "floor"}, "above");
  add_node(g, "Min", {"above", "hi"}, "clamped");
  add_node(g, "Abs", {"clamped"}, "magnitude");
  add_node(g, "Add", {"magnitude", "eps"}, "positive");
  add_node(g, "Log", {"positive"}, "m");
  add_node(g, "GlobalAveragePool", {"m"}, "pooled");
  add_node(g, "Flatten", {"pooled"}, "flat");
  testing::set_int(add_node(g, "Gemm", {"flat", "fc"}, "logits"), "transB", 1);
  add_node(g, "LogSoftmax", {"logits"}, "y");
  testing::set_int(add_node(g, "LogSoftmax", {"m"}, "z"), "axis", 1);
  const fs::path p = dir / "nll_head.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// At opset 13: x: f32[1,3,6,8] -> Conv (W [12,3,3,3], pads 1) -> Relu ->
// DepthToSpace (2, CRD: torch's pixel_shuffle) = f32[1,3,12,16] ->
// SpaceToDepth (2) = f32[1,12,6,8] -> DepthToSpace (2, DCR) = y:
// f32[1,3,12,16]; of y: ReduceLogSumExp over axis 1 without keepdims = l:
// f32[1,12,16], ReduceMin over [2,3] = m: f32[1,3,1,1], ReduceL1 over all =
// a: f32[1,1,1,1].
fs::path write_shuffle_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("pixel_shuffle");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 6, 8});
  for (const char* out : {"y", "l", "m", "a"}) g->add_output()->set_name(out);
  std::mt19937_64 rng(9);
  testing::add_random_floats(g, "w", {12, 3, 3, 3}, rng);
  testing::set_ints(add_node(g, "Conv", {"x", "w"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "r");
  onnx::NodeProto* up = add_node(g, "up", "DepthToSpace", {"r"}, "u");
  testing::set_int(up, "blocksize", 2);
  testing::set_string(up, "mode", "CRD");
  testing::set_int(add_node(g, "down", "SpaceToDepth", {"u"}, "d"), "blocksize", 2);
  testing::set_int(add_node(g, "up_dcr", "DepthToSpace", {"d"}, "y"), "blocksize", 2);
  onnx::NodeProto* lse = add_node(g, "lse", "ReduceLogSumExp", {"y"}, "l");
  testing::set_ints(lse, "axes", {1});
  testing::set_int(lse, "keepdims", 0);
  testing::set_ints(add_node(g, "least", "ReduceMin", {"y"}, "m"), "axes", {2, 3});
  add_node(g, "l1", "ReduceL1", {"y"}, "a");
  const fs::path p = dir / "pixel_shuffle.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// A diffusion UNet's timestep embedding (diffusers' Timesteps and
// TimestepEmbedding): t: i64[2] -> Cast -> Unsqueeze [2,1] -> Mul by 16
// frequencies -> Sin, Cos -> Concat = [2,32] -> Gemm (W [64,32], trans_b) ->
// Sigmoid, Mul (SiLU) = e: f32[2,64], which two blocks project (Gemm, W [16,64],
// trans_b, as each ResNet block's time_emb_proj) = p, q: f32[2,16]. Sin and
// Cos of a computed tensor were opaque; timesteps up to 999 test the sines'
// range reduction.
fs::path write_timestep_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("timestep_embedding");
  testing::declare(g->add_input(), "t", onnx::TensorProto::INT64, {2});
  testing::declare(g->add_output(), "p", onnx::TensorProto::FLOAT, {2, 16});
  testing::declare(g->add_output(), "q", onnx::TensorProto::FLOAT, {2, 16});
  std::vector<float> freqs(16);
  for (size_t k = 0; k < freqs.size(); ++k) freqs[k] = std::exp(-std::log(10000.0f) * k / 16.0f);
  testing::add_f32s(g, "freqs", freqs);
  testing::add_i64s(g, "axis1", {1});
  std::mt19937_64 rng(9);
  testing::add_random_floats(g, "w", {64, 32}, rng);
  testing::add_random_floats(g, "b", {64}, rng);
  testing::add_random_floats(g, "wp", {16, 64}, rng);
  testing::add_random_floats(g, "wq", {16, 64}, rng);
  testing::set_int(add_node(g, "Cast", {"t"}, "tf"), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Unsqueeze", {"tf", "axis1"}, "tc");
  add_node(g, "Mul", {"tc", "freqs"}, "args");
  add_node(g, "Sin", {"args"}, "s");
  add_node(g, "Cos", {"args"}, "c");
  testing::set_int(add_node(g, "Concat", {"s", "c"}, "emb"), "axis", 1);
  testing::set_int(add_node(g, "Gemm", {"emb", "w", "b"}, "h"), "transB", 1);
  add_node(g, "Sigmoid", {"h"}, "gate");
  add_node(g, "Mul", {"h", "gate"}, "e");
  testing::set_int(add_node(g, "Gemm", {"e", "wp"}, "p"), "transB", 1);
  testing::set_int(add_node(g, "Gemm", {"e", "wq"}, "q"), "transB", 1);
  const fs::path p = dir / "timestep.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// An R-CNN's region proposal: x: f32[1,3,12,12] -> Conv (W [6,3,3,3], pads
// 1) -> Sigmoid = scores: f32[1,6,12,12] -> Reshape [1,864] -> TopK (k 20,
// the last axis) = best, best_at; scores -> TopK (k 2, the smallest, along the
// channels, opset 11's largest = 0) = least, least_at. Random scores tie
// nowhere, so the indices are ONNX Runtime's too.
fs::path write_top_k_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  g->set_name("proposals");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 12, 12});
  testing::declare(g->add_output(), "best", onnx::TensorProto::FLOAT, {1, 20});
  testing::declare(g->add_output(), "best_at", onnx::TensorProto::INT64, {1, 20});
  testing::declare(g->add_output(), "least", onnx::TensorProto::FLOAT, {1, 2, 12, 12});
  testing::declare(g->add_output(), "least_at", onnx::TensorProto::INT64, {1, 2, 12, 12});
  std::mt19937_64 rng(21);
  testing::add_random_floats(g, "w", {6, 3, 3, 3}, rng);
  testing::add_i64s(g, "flat", {1, 864});
  testing::add_i64s(g, "k20", {20});
  testing::add_i64s(g, "k2", {2});
  testing::set_ints(add_node(g, "Conv", {"x", "w"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Sigmoid", {"c"}, "scores");
  add_node(g, "Reshape", {"scores", "flat"}, "row");
  onnx::NodeProto* best = add_node(g, "top", "TopK", {"row", "k20"}, "best");
  best->add_output("best_at");
  onnx::NodeProto* least = add_node(g, "bottom", "TopK", {"scores", "k2"}, "least");
  least->add_output("least_at");
  testing::set_int(least, "axis", 1);
  testing::set_int(least, "largest", 0);
  const fs::path p = dir / "top_k.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(ImageOpsCli, PadModesAndLrnMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("image_ops_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"gather", "avgpool", "pow"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 12, 12}, 11);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(ImageOpsCli, AnNllHeadWithClampsAndLogMagnitudesMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("nll_head_cli");
  const fs::path model = write_nll_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"log_softmax", "max 2", "min 1", "abs 1", "log 1"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{2, 3, 8, 8}, 13);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 2, dir);
  fs::remove_all(dir);
}

TEST(ImageOpsCli, PixelShufflesAndReductionsMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("pixel_shuffle_cli");
  const fs::path model = write_shuffle_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"transpose", "reduce_max", "reduce_sum", "abs"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 6, 8}, 19);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 4, dir);
  fs::remove_all(dir);
}

TEST(ImageOpsCli, TopKOfAConstantKMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("top_k_cli");
  const fs::path model = write_top_k_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("top_k 2"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 12, 12}, 23);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 4, dir);
  fs::remove_all(dir);
}

TEST(ImageOpsCli, ATimestepEmbeddingOfSinusoidsMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("timestep_cli");
  const fs::path model = write_timestep_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"sin 1", "cos 1"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  // No rule pays on so small a graph: the optimizer writes it back.
  testing::RunResult opt = testing::run_binary(
      TSO_BINARY, {"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device",
                   std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
      dir);
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  testing::write_i64_inputs(dir / "in", {{"t", Shape{2}, {999, 17}}});
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 2, dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
