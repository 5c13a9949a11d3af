// Pad in reflect, edge and wrap modes and LRN end to end through the
// binary, as image models use them: style transfer networks and CycleGAN's
// generators pad by reflection before each convolution; AlexNet, CaffeNet and
// GoogLeNet normalize across channels by LRN. The model, built here, imports
// with no opaque node (the pads as gathers, LRN as an average pooling of
// squares), optimizes (checked), and computes what ONNX Runtime computes, on
// tso's CPU runtime and reference executor and in ONNX Runtime on the file
// tso writes.
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

}  // namespace
}  // namespace tso
