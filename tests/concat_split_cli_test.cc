// A channel concat removed by splitting its consumers, end to end through the
// binary: a small ONNX model built here, shaped like SqueezeNet's fire
// modules (a 1x1 and a 3x3 expansion concatenated, then a 1x1 convolution,
// or a ceil-mode max pool and a 1x1 convolution). With a cost table in which
// a concat is dear, `tso optimize` splits each convolution of a concat into
// one per input, summed (hw_split_conv_bias_over_concat), and a max pool of a
// concat into one per input (hw_split_maxpool_ceil_over_concat), proved
// against specs/30_conv.smt2 and 60_pool.smt2; ONNX Runtime computes the
// written model's outputs as it does the input's, as do tso's CPU runtime and
// reference executor. The close but wrong variant stays: a grouped
// convolution of a concat, which is no sum of per-input convolutions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kC = 4, kH = 8, kW = 8;
constexpr int kOutputs = 3;

using testing::add_node;
using testing::declare;
using testing::set_int;
using testing::set_ints;

// x: f32[1,4,8,8]; e1 = relu(conv1x1(x)), e3 = relu(conv3x3(x)), 6 channels each.
//   y0 = relu(Conv(Concat(e1, e3), 1x1 to 5 channels))
//   y1 = Conv(MaxPool(Concat(e3, e1), 3x3, stride 2, ceil_mode), 1x1 to 5 channels)
//   y2 = Conv(Concat(x, e1), 3x3, group 2): stays
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("fire");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, kC, kH, kW});
  declare(g->add_output(), "y0", onnx::TensorProto::FLOAT, {1, 5, kH, kW});
  declare(g->add_output(), "y1", onnx::TensorProto::FLOAT, {1, 5, 4, 4});
  declare(g->add_output(), "y2", onnx::TensorProto::FLOAT, {1, 4, kH, kW});
  std::mt19937_64 rng(9);
  testing::add_random_floats(g, "we1", {6, kC, 1, 1}, rng);
  testing::add_random_floats(g, "be1", {6}, rng);
  testing::add_random_floats(g, "we3", {6, kC, 3, 3}, rng);
  testing::add_random_floats(g, "be3", {6}, rng);
  testing::add_random_floats(g, "ws", {5, 12, 1, 1}, rng);
  testing::add_random_floats(g, "bs", {5}, rng);
  testing::add_random_floats(g, "wt", {5, 12, 1, 1}, rng);
  testing::add_random_floats(g, "bt", {5}, rng);
  testing::add_random_floats(g, "wg", {4, 5, 3, 3}, rng);
  add_node(g, "Conv", {"x", "we1", "be1"}, "c1");
  add_node(g, "Relu", {"c1"}, "e1");
  set_ints(add_node(g, "Conv", {"x", "we3", "be3"}, "c3"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c3"}, "e3");
  set_int(add_node(g, "Concat", {"e1", "e3"}, "cat0"), "axis", 1);
  add_node(g, "Conv", {"cat0", "ws", "bs"}, "squeeze");
  add_node(g, "Relu", {"squeeze"}, "y0");
  set_int(add_node(g, "Concat", {"e3", "e1"}, "cat1"), "axis", 1);
  onnx::NodeProto* pool = add_node(g, "MaxPool", {"cat1"}, "pooled");
  set_ints(pool, "kernel_shape", {3, 3});
  set_ints(pool, "strides", {2, 2});
  set_int(pool, "ceil_mode", 1);
  add_node(g, "Conv", {"pooled", "wt", "bt"}, "y1");
  set_int(add_node(g, "Concat", {"x", "e1"}, "cat2"), "axis", 1);
  onnx::NodeProto* grouped = add_node(g, "Conv", {"cat2", "wg"}, "y2");
  set_ints(grouped, "pads", {1, 1, 1, 1});
  set_int(grouped, "group", 2);
  const fs::path p = dir / "fire.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(ConcatSplitCli, ConcatsSplitIntoTheirConsumersAndTheModelMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("concat_split_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  // Each of the model's concats, and those splitting a max pool makes, costs
  // 1 ms: removing a concat pays.
  const fs::path costs = testing::write_dear_cost_table(
      dir, "a machine where concats are dear", "fire",
      {"concat(f32[1,6,8,8],f32[1,6,8,8];axis=1)", "concat(f32[1,4,8,8],f32[1,6,8,8];axis=1)",
       "concat(f32[1,6,4,4],f32[1,6,4,4];axis=1)"});
  testing::RunResult r = testing::optimize_with_handwritten_rules(model, out, costs, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = testing::read_json(dir / "report.json");
  EXPECT_EQ(testing::times_applied(j, "hw_split_conv_bias_over_concat"), 2) << j["rules_applied"];
  EXPECT_EQ(testing::times_applied(j, "hw_split_maxpool_ceil_over_concat"), 1)
      << j["rules_applied"];
  EXPECT_EQ(j["check"]["performed"], true);
  EXPECT_LE(j["check"]["max_relative_error"].get<double>(), 1e-4);

  testing::RunResult inspect = testing::run_binary(TSO_BINARY, {"inspect", out.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  const std::regex concat(R"(\s concat\s+axis=1)");
  const auto begin = std::sregex_iterator(inspect.out.begin(), inspect.out.end(), concat);
  EXPECT_EQ(std::distance(begin, std::sregex_iterator()), 1)
      << "only the grouped convolution's concat stays:\n"
      << inspect.out;

  testing::write_random_input(dir / "in", "x", Shape{1, kC, kH, kW}, 4);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", kOutputs, dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
