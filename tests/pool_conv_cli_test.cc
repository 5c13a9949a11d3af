// An average pool moved past the 1x1 convolution it feeds, end to end
// through the binary: a small ONNX model built here, shaped like
// Inception-v3's pool branches (a 3x3 average pool that counts the padding,
// then a biased 1x1 convolution and relu, which narrows the channels). With a
// cost table in which the model's pools are dear, `tso optimize` convolves
// first and pools the narrower result (hw_swap_avgpool_conv1x1_bias*, its
// bias added after the pool; hw_swap_avgpool_conv1x1 for a strided pool that
// leaves the padding out), proved against specs/60_pool.smt2; ONNX Runtime
// computes the written model's outputs as it does the input's, as do tso's
// CPU runtime and reference executor. The close but wrong variants stay: a
// max pool before a 1x1 convolution, and an average pool before a 3x3 one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <sstream>
#include <vector>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kC = 8, kH = 8, kW = 8;
constexpr int kOutputs = 4;

using testing::add_node;
using testing::declare;
using testing::set_int;
using testing::set_ints;

onnx::NodeProto* add_pool(onnx::GraphProto* g, const char* op, const std::string& out,
                          std::initializer_list<int64_t> kernel,
                          std::initializer_list<int64_t> strides,
                          std::initializer_list<int64_t> pads) {
  onnx::NodeProto* n = add_node(g, op, {"x"}, out);
  set_ints(n, "kernel_shape", kernel);
  set_ints(n, "strides", strides);
  set_ints(n, "pads", pads);
  return n;
}

// Rows of `tso inspect`'s operator table (index, name, operator, attributes,
// input types, ...) for `op` with an input of type `input`.
int operators_reading(const std::string& inspect, const std::string& op, const std::string& input) {
  std::istringstream lines(inspect);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    n += w.size() > 3 && w[2] == op &&
         std::any_of(w.begin() + 3, w.end(),
                     [&](const std::string& t) { return t == input || t == input + ","; });
  }
  return n;
}

// x: f32[1,8,8,8];
//   y0 = Relu(Conv(AveragePool(x, 3x3, pads 1, counting them), 1x1 to 2, bias))
//   y1 = Conv(AveragePool(x, 2x2, stride 2, pads 1 at the end, not counting
//        them), 1x1 to 2)
//   y2 = Conv(MaxPool(x, 3x3, pads 1), 1x1 to 2): stays
//   y3 = Conv(AveragePool(x, 3x3, pads 1), 3x3 to 2, pads 1): stays
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("pool_branches");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, kC, kH, kW});
  declare(g->add_output(), "y0", onnx::TensorProto::FLOAT, {1, 2, kH, kW});
  declare(g->add_output(), "y1", onnx::TensorProto::FLOAT, {1, 2, 5, 5});
  declare(g->add_output(), "y2", onnx::TensorProto::FLOAT, {1, 2, kH, kW});
  declare(g->add_output(), "y3", onnx::TensorProto::FLOAT, {1, 2, kH, kW});
  std::mt19937_64 rng(11);
  testing::add_random_floats(g, "w0", {2, kC, 1, 1}, rng);
  testing::add_random_floats(g, "b0", {2}, rng);
  testing::add_random_floats(g, "w1", {2, kC, 1, 1}, rng);
  testing::add_random_floats(g, "w2", {2, kC, 1, 1}, rng);
  testing::add_random_floats(g, "w3", {2, kC, 3, 3}, rng);
  set_int(add_pool(g, "AveragePool", "p0", {3, 3}, {1, 1}, {1, 1, 1, 1}), "count_include_pad", 1);
  add_node(g, "Conv", {"p0", "w0", "b0"}, "c0");
  add_node(g, "Relu", {"c0"}, "y0");
  add_pool(g, "AveragePool", "p1", {2, 2}, {2, 2}, {0, 0, 1, 1});
  add_node(g, "Conv", {"p1", "w1"}, "y1");
  add_pool(g, "MaxPool", "p2", {3, 3}, {1, 1}, {1, 1, 1, 1});
  add_node(g, "Conv", {"p2", "w2"}, "y2");
  add_pool(g, "AveragePool", "p3", {3, 3}, {1, 1}, {1, 1, 1, 1});
  set_ints(add_node(g, "Conv", {"p3", "w3"}, "y3"), "pads", {1, 1, 1, 1});
  const fs::path p = dir / "pool_branches.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(PoolConvCli, AveragePoolsPassOneByOneConvolutionsAndTheModelMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("pool_conv_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  // Each of the model's pools, at its 8 input channels, costs 1 ms: pooling
  // the convolution's 2 channels instead pays.
  const fs::path costs = testing::write_dear_cost_table(
      dir, "a machine where pools are dear", "pool_branches",
      {"avgpool(f32[1,8,8,8];pad=[1,1,1,1],kernel=[3,3],count_include_pad=1)",
       "avgpool(f32[1,8,8,8];stride=[2,2],pad=[0,0,1,1],kernel=[2,2])",
       "maxpool(f32[1,8,8,8];pad=[1,1,1,1],kernel=[3,3])"});
  testing::RunResult r = testing::optimize_with_handwritten_rules(model, out, costs, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = testing::read_json(dir / "report.json");
  // y0's branch goes through the biased swap, with its relu fused or not.
  EXPECT_EQ(testing::times_applied(j, "hw_swap_avgpool_conv1x1_bias") +
                testing::times_applied(j, "hw_swap_avgpool_conv1x1_bias_relu"),
            1)
      << j["rules_applied"];
  EXPECT_EQ(testing::times_applied(j, "hw_swap_avgpool_conv1x1"), 1) << j["rules_applied"];
  EXPECT_EQ(j["check"]["performed"], true);
  EXPECT_LE(j["check"]["max_relative_error"].get<double>(), 1e-4);

  // Each pool the swaps move reads the convolution's 2 channels; the max pool
  // and the 3x3 convolution's pool still read x's 8.
  testing::RunResult inspect = testing::run_binary(TSO_BINARY, {"inspect", out.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(operators_reading(inspect.out, "avgpool", "f32[1,2,8,8]"), 2) << inspect.out;
  EXPECT_EQ(operators_reading(inspect.out, "avgpool", "f32[1,8,8,8]"), 1) << inspect.out;
  EXPECT_EQ(operators_reading(inspect.out, "maxpool", "f32[1,8,8,8]"), 1) << inspect.out;

  testing::write_random_input(dir / "in", "x", Shape{1, kC, kH, kW}, 5);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", kOutputs, dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
