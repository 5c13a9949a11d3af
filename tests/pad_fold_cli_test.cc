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

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "frontend/onnx_test_util.h"
#include "frontend/tensor_file.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kC = 4, kH = 9, kW = 9;
constexpr int kOutputs = 4;

using testing::add_node;
using testing::declare;

void ints_attr(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void int_attr(onnx::NodeProto* n, const char* name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void pads(onnx::GraphProto* g, const std::string& name, std::initializer_list<int64_t> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

void scalar(onnx::GraphProto* g, const std::string& name, float v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

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
  pads(g, "pads2", {0, 0, 2, 2, 0, 0, 2, 2});
  pads(g, "pads1", {0, 0, 1, 1, 0, 0, 1, 1});
  pads(g, "pads_tb", {0, 0, 1, 0, 0, 0, 1, 1});
  scalar(g, "minus_inf", -std::numeric_limits<float>::infinity());
  scalar(g, "one", 1.0f);
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "Pad", {"r", "pads2"}, "p0");
  onnx::NodeProto* dw = add_node(g, "Conv", {"p0", "w"}, "y0");
  ints_attr(dw, "strides", {2, 2});
  int_attr(dw, "group", kC);
  add_node(g, "Pad", {"x", "pads1", "minus_inf"}, "p1");
  onnx::NodeProto* mp = add_node(g, "MaxPool", {"p1"}, "y1");
  ints_attr(mp, "kernel_shape", {3, 3});
  ints_attr(mp, "strides", {2, 2});
  add_node(g, "Pad", {"x", "pads_tb"}, "p2");
  onnx::NodeProto* ap = add_node(g, "AveragePool", {"p2"}, "y2");
  ints_attr(ap, "kernel_shape", {3, 3});
  ints_attr(ap, "strides", {2, 2});
  add_node(g, "Pad", {"x", "pads1", "one"}, "p3");
  add_node(g, "Conv", {"p3", "w3"}, "y3");
  const fs::path p = dir / "padded.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

void write_input(const fs::path& dir) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(kC * kH * kW);
  for (float& v : x) v = u(rng);
  WeightData w;
  w.type = {DType::kF32, Shape{1, kC, kH, kW}};
  w.bytes.resize(x.size() * sizeof(float));
  std::memcpy(w.bytes.data(), x.data(), w.bytes.size());
  fs::create_directories(dir);
  ASSERT_TRUE(write_tensor_file((dir / "input_0.pb").string(), {"x", w}).ok());
}

std::vector<float> output_of(const fs::path& dir, int k) {
  Expected<NamedTensor> t = read_tensor_file((dir / ("output_" + std::to_string(k) + ".pb")).string());
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t ? testing::floats_of(t->value) : std::vector<float>{};
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

int applied(const nlohmann::json& report, const std::string& rule) {
  int n = 0;
  for (const nlohmann::json& a : report["rules_applied"])
    if (a["rule"] == rule) n += a["count"].get<int>();
  return n;
}

TEST(PadFoldCli, PadsFoldIntoTheirWindowOperatorsAndTheModelMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("pad_fold_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  const fs::path report = dir / "report.json";
  testing::RunResult r = tso({"optimize", model.string(), out.string(), "--report", report.string(),
                              "-q", "--no-verify-speed", "--device",
                              std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
                             dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream rin(report);
  const nlohmann::json j = nlohmann::json::parse(rin);
  EXPECT_EQ(applied(j, "hw_fold_pad_conv"), 1) << j["rules_applied"];
  EXPECT_EQ(applied(j, "hw_fold_pad_maxpool"), 1) << j["rules_applied"];
  EXPECT_EQ(applied(j, "hw_fold_pad_avgpool"), 1) << j["rules_applied"];
  EXPECT_EQ(j["check"]["performed"], true);
  EXPECT_LE(j["check"]["max_relative_error"].get<double>(), 1e-4);

  testing::RunResult inspect = tso({"inspect", out.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(std::regex_search(inspect.out, std::regex(R"(\(.*\bpad 1[,)])")))
      << "only the pad of ones stays:\n" << inspect.out;

  write_input(dir / "in");
  std::string err;
  ASSERT_EQ(testing::run_oracle(
                {"ort", model.string(), (dir / "in").string(), (dir / "ort_input").string()}, &err),
            0)
      << err;
  ASSERT_EQ(
      testing::run_oracle(
          {"ort", out.string(), (dir / "in").string(), (dir / "ort_optimized").string()}, &err),
      0)
      << err;
  for (int k = 0; k < kOutputs; ++k) {
    const std::vector<float> want = output_of(dir / "ort_input", k);
    EXPECT_LE(testing::relative_error(output_of(dir / "ort_optimized", k), want), 1e-5)
        << "output " << k;
    for (const char* device : {"cpu", "reference"}) {
      const fs::path got = dir / (std::string("tso_") + device);
      if (k == 0) {
        testing::RunResult run = tso({"run", out.string(), "--device", device, "--iters", "1",
                                      "--inputs", (dir / "in").string(), "--outputs", got.string()},
                                     dir);
        ASSERT_EQ(run.exit_code, 0) << device << ": " << run.err;
      }
      EXPECT_LE(testing::relative_error(output_of(got, k), want), 1e-5)
          << device << ", output " << k;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
