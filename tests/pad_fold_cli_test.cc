// Pads folded into the window operators they feed, end to end through the
// binary: a small ONNX model built here, as TensorFlow-ported models (NASNet)
// are exported: an explicit Pad in front of a strided depthwise convolution,
// a max pool (padded with minus infinity) and an average pool. `tso optimize`
// folds each into the operator's own padding (hw_fold_pad_conv,
// hw_fold_pad_maxpool, hw_fold_pad_avgpool, proved against
// specs/62_pad.smt2) and writes a model whose outputs ONNX Runtime computes
// as it does the input's, as do tso's CPU runtime and reference executor.
// The close but wrong variant stays: a pad of ones in front of a convolution
// (the convolution pads with zeros).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kC = 4, kH = 9, kW = 9;
constexpr int kOutputs = 4;

using testing::add_node;
using testing::declare;
using testing::set_int;
using testing::set_ints;

// x: f32[1,4,9,9], relu'd like NASNet's branches (and so that the -inf
// padding matters, negative too: the relu is on one branch only).
//   y0 = Conv(Pad(relu(x), [0,0,2,2,0,0,2,2]), w, stride 2, group 4): depthwise 5x5
//   y1 = MaxPool(Pad(x, [0,0,1,1,0,0,1,1], -inf), 3x3, stride 2)
//   y2 = AveragePool(Pad(x, [0,0,1,0,0,0,1,1]), 3x3, stride 2)
//   y3 = Conv(Pad(x, [0,0,1,1,0,0,1,1], 1.0), w3): stays padded
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("padded");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, kC, kH, kW});
  declare(g->add_output(), "y0", onnx::TensorProto::FLOAT, {1, kC, 5, 5});
  declare(g->add_output(), "y1", onnx::TensorProto::FLOAT, {1, kC, 5, 5});
  declare(g->add_output(), "y2", onnx::TensorProto::FLOAT, {1, kC, 5, 4});
  declare(g->add_output(), "y3", onnx::TensorProto::FLOAT, {1, 2, kH, kW});
  std::mt19937_64 rng(5);
  testing::add_random_floats(g, "w", {kC, 1, 5, 5}, rng);
  testing::add_random_floats(g, "w3", {2, kC, 3, 3}, rng);
  testing::add_i64s(g, "pads2", {0, 0, 2, 2, 0, 0, 2, 2});
  testing::add_i64s(g, "pads1", {0, 0, 1, 1, 0, 0, 1, 1});
  testing::add_i64s(g, "pads_tb", {0, 0, 1, 0, 0, 0, 1, 1});
  testing::add_scalar(g, "minus_inf", -std::numeric_limits<float>::infinity());
  testing::add_scalar(g, "one", 1.0f);
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "Pad", {"r", "pads2"}, "p0");
  onnx::NodeProto* dw = add_node(g, "Conv", {"p0", "w"}, "y0");
  set_ints(dw, "strides", {2, 2});
  set_int(dw, "group", kC);
  add_node(g, "Pad", {"x", "pads1", "minus_inf"}, "p1");
  onnx::NodeProto* mp = add_node(g, "MaxPool", {"p1"}, "y1");
  set_ints(mp, "kernel_shape", {3, 3});
  set_ints(mp, "strides", {2, 2});
  add_node(g, "Pad", {"x", "pads_tb"}, "p2");
  onnx::NodeProto* ap = add_node(g, "AveragePool", {"p2"}, "y2");
  set_ints(ap, "kernel_shape", {3, 3});
  set_ints(ap, "strides", {2, 2});
  add_node(g, "Pad", {"x", "pads1", "one"}, "p3");
  add_node(g, "Conv", {"p3", "w3"}, "y3");
  const fs::path p = dir / "padded.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(PadFoldCli, PadsFoldIntoTheirWindowOperatorsAndTheModelMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("pad_fold_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  const fs::path report = dir / "report.json";
  testing::RunResult r = testing::run_binary(
      TSO_BINARY,
      {"optimize", model.string(), out.string(), "--report", report.string(), "-q",
       "--no-verify-speed", "--device", std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = testing::read_json(report);
  EXPECT_EQ(testing::times_applied(j, "hw_fold_pad_conv"), 1) << j["rules_applied"];
  EXPECT_EQ(testing::times_applied(j, "hw_fold_pad_maxpool"), 1) << j["rules_applied"];
  EXPECT_EQ(testing::times_applied(j, "hw_fold_pad_avgpool"), 1) << j["rules_applied"];
  EXPECT_EQ(j["check"]["performed"], true);
  EXPECT_LE(j["check"]["max_relative_error"].get<double>(), 1e-4);

  testing::RunResult inspect = testing::run_binary(TSO_BINARY, {"inspect", out.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(std::regex_search(inspect.out, std::regex(R"(\(.*\bpad 1[,)])")))
      << "only the pad of ones stays:\n" << inspect.out;

  testing::write_random_input(dir / "in", "x", Shape{1, kC, kH, kW}, 3);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", kOutputs, dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
