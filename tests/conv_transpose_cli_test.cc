// ConvTranspose end to end through the binary, as a decoder upsamples: a
// 2-D one by stride 2 in 2 groups with output_padding and bias, one with
// dilation 2 and pads wider than its kernel's extent on one side (a crop),
// and a 1-D one by stride 4 (a vocoder's upsampling). The model, built here,
// imports with no opaque node (each a spread, a pad or crop and a conv2d of
// the flipped kernel), optimizes (checked), and computes what ONNX Runtime
// computes, on tso's CPU runtime and reference executor and in ONNX Runtime
// on the file tso writes. The close variant that tso does not map, weights
// fed at run time, stays opaque and is refused by name.
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

// x: f32[1,4,5,6] -> ConvTranspose (W [4,3,3,3], group 2, stride 2,
// pads 1, output_padding 1, bias) = u: f32[1,6,10,12] -> Relu ->
// ConvTranspose (W [6,6,4,4], stride 2, pads 1, bias) = d: f32[1,6,20,24] ->
// ConvTranspose (W [6,2,2,3], dilation 2, pads [3,0,0,1]: a begin pad of 3
// against the dilated kernel's height of 3, a crop of one row) =
// v: f32[1,2,19,27] -> Reshape [1,2,513] -> ConvTranspose 1-D (W [2,2,4],
// stride 4) = y: f32[1,2,2052]. The first and third run as spread inputs
// (groups, dilation), the second and fourth in the sub-pixel form.
// `computed`: the first weights are a graph input.
fs::path write_model(const fs::path& dir, bool computed) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("conv_transpose");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 5, 6});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 2, 540});
  std::mt19937_64 rng(73);
  if (computed)
    testing::declare(g->add_input(), "w1", onnx::TensorProto::FLOAT, {4, 3, 3, 3});
  else
    testing::add_random_floats(g, "w1", {4, 3, 3, 3}, rng);
  testing::add_random_floats(g, "b1", {6}, rng);
  testing::add_random_floats(g, "w_double", {6, 6, 4, 4}, rng);
  testing::add_random_floats(g, "b_double", {6}, rng);
  testing::add_random_floats(g, "w2", {6, 2, 2, 3}, rng);
  testing::add_random_floats(g, "w3", {2, 2, 4}, rng);
  testing::add_i64s(g, "flat", {1, 2, 513});
  onnx::NodeProto* up = add_node(g, "up", "ConvTranspose", {"x", "w1", "b1"}, "u");
  set_int(up, "group", 2);
  set_ints(up, "strides", {2, 2});
  set_ints(up, "pads", {1, 1, 1, 1});
  set_ints(up, "output_padding", {1, 1});
  add_node(g, "Relu", {"u"}, "r");
  onnx::NodeProto* twice =
      add_node(g, "double", "ConvTranspose", {"r", "w_double", "b_double"}, "d");
  set_ints(twice, "strides", {2, 2});
  set_ints(twice, "pads", {1, 1, 1, 1});
  onnx::NodeProto* wide = add_node(g, "wide", "ConvTranspose", {"d", "w2"}, "v");
  set_ints(wide, "dilations", {2, 2});
  set_ints(wide, "pads", {3, 0, 0, 1});
  add_node(g, "Reshape", {"v", "flat"}, "line");
  set_ints(add_node(g, "long", "ConvTranspose", {"line", "w3"}, "y"), "strides", {4});
  const fs::path p = dir / (computed ? "conv_transpose_computed.onnx" : "conv_transpose.onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

TEST(ConvTransposeCli, StridesGroupsDilationsAndCropsMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("conv_transpose_cli");
  const fs::path model = write_model(dir, false), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"conv2d", "pad", "transpose"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 4, 5, 6}, 79);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(ConvTransposeCli, WeightsFedAtRunTimeStayOpaqueAndAreRefusedByName) {
  const fs::path dir = testing::temp_dir("conv_transpose_cli_computed");
  const fs::path model = write_model(dir, true);
  testing::RunResult inspect = tso({"inspect", model.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("opaque:ConvTranspose"), std::string::npos) << inspect.out;
  testing::RunResult r = tso({"run", model.string(), "--iters", "1"}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("node 'up' (opaque) is the ONNX operator 'ConvTranspose'"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
