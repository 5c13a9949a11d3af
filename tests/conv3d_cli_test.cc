// 3-D convolution and pooling end to end through the binary, as video
// classifiers use them (torchvision's R3D, R(2+1)D, S3D): the model, built
// here, imports with no opaque node (conv2d over frames and over [N, C, T,
// H W], two 2-D poolings per 3-D one), optimizes (no shipped rule applies
// across the transposes and reshapes around them), and computes what
// ONNX Runtime computes, on tso's CPU runtime and reference executor and in
// ONNX Runtime on the file tso writes.
#include <gtest/gtest.h>

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
using testing::set_int;
using testing::set_ints;
using testing::set_string;

// x: f32[1,4,9,10,11] ->
//  Conv (W [6,2,3,3,3], 2 groups, strides [2,1,2], dilations [2,1,1], pads
//  [2,1,0 | 1,1,1], bias) -> Relu = a: f32[1,6,4,10,5] (frames as the batch,
//  a temporal tap each) ->
//  Conv (W [6,6,3,1,1], SAME_UPPER, bias) = b: f32[1,6,4,10,5] (pointwise in
//  space: one conv2d over [1, 6, 4, 50]) ->
//  MaxPool ([3,3,2], strides [2,2,2], pads [0,1,0 | 0,1,0], ceil_mode: the
//  last window of T and of W overhangs the input) = p: f32[1,6,2,6,3] ->
//  AveragePool ([2,2,2], pads [1,0,1 | 1,1,0], count_include_pad 0) = y:
//  f32[1,6,3,6,3], and from b AveragePool ([3,1,1], pads [1,0,0 | 1,0,0],
//  count_include_pad 1) = z: f32[1,6,4,10,5].
// (No window here starts in the end padding: ONNX's shape inference counts
// such a window in ceil mode, its reference and ONNX Runtime's kernel drop
// it, as tso does, and ONNX Runtime fails on a file holding one.)
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("video");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 9, 10, 11});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 6, 3, 6, 3});
  testing::declare(g->add_output(), "z", onnx::TensorProto::FLOAT, {1, 6, 4, 10, 5});
  std::mt19937_64 rng(3);
  testing::add_random_floats(g, "w1", {6, 2, 3, 3, 3}, rng);
  testing::add_random_floats(g, "b1", {6}, rng);
  testing::add_random_floats(g, "w2", {6, 6, 3, 1, 1}, rng);
  testing::add_random_floats(g, "b2", {6}, rng);
  onnx::NodeProto* c1 = add_node(g, "frames", "Conv", {"x", "w1", "b1"}, "c1");
  set_int(c1, "group", 2);
  set_ints(c1, "strides", {2, 1, 2});
  set_ints(c1, "dilations", {2, 1, 1});
  set_ints(c1, "pads", {2, 1, 0, 1, 1, 1});
  add_node(g, "Relu", {"c1"}, "a");
  set_string(add_node(g, "temporal", "Conv", {"a", "w2", "b2"}, "b"), "auto_pad", "SAME_UPPER");
  onnx::NodeProto* mp = add_node(g, "max", "MaxPool", {"b"}, "p");
  set_ints(mp, "kernel_shape", {3, 3, 2});
  set_ints(mp, "strides", {2, 2, 2});
  set_ints(mp, "pads", {0, 1, 0, 0, 1, 0});
  set_int(mp, "ceil_mode", 1);
  onnx::NodeProto* ap = add_node(g, "mean", "AveragePool", {"p"}, "y");
  set_ints(ap, "kernel_shape", {2, 2, 2});
  set_ints(ap, "pads", {1, 0, 1, 1, 1, 0});
  onnx::NodeProto* tp = add_node(g, "mean_t", "AveragePool", {"b"}, "z");
  set_ints(tp, "kernel_shape", {3, 1, 1});
  set_ints(tp, "pads", {1, 0, 0, 1, 0, 0});
  set_int(tp, "count_include_pad", 1);
  const fs::path p = dir / "video.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(Conv3dCli, ConvolutionsAndPoolingsOverFramesMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("conv3d_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"conv2d", "maxpool", "avgpool", "transpose"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  testing::RunResult opt = testing::run_binary(
      TSO_BINARY,
      {"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device",
       std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
      dir);
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  testing::write_random_input(dir / "in", "x", Shape{1, 4, 9, 10, 11}, 17);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 2, dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
