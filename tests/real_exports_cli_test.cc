// The real-export corpus (tests/exports/README.md): torchvision, timm and
// transformers models exported by torch.onnx, graph-only. Each is filled with
// seeded weights (experiments/fill_weights.py) and must
//  - import with no opaque node (`tso inspect`),
//  - optimize, the numerical check passed where a rule was applied,
//  - compute what ONNX Runtime computes on the original, on tso's CPU
//    runtime and reference executor (the input graph) and in ONNX Runtime
//    and tso's CPU runtime (the optimized file tso wrote).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "frontend/tensor_file.h"
#include "onnx/onnx_pb.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

// ONNX Runtime and tso accumulate in different orders; deep models with
// random weights reach relative differences of 1e-5 (MaxViT, 44 einsums).
constexpr double kTolerance = 1e-4;

const fs::path kCorpus = fs::path(TSO_SOURCE_DIR) / "tests" / "exports";

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    const std::string f = e.path().filename().string();
    const std::string suffix = ".graph.onnx";
    if (f.size() > suffix.size() && f.ends_with(suffix))
      names.push_back(f.substr(0, f.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// dir/input_K.pb for each graph input of `model`: f32 uniform in [-1, 1);
// i64 token ids in [5, 900) (the corpus's vocabularies have 1000 entries),
// attention masks of ones, token types of zeros.
int write_inputs(const fs::path& model, const fs::path& dir) {
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << model;
  std::vector<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.push_back(t.name());
  fs::create_directories(dir);
  std::mt19937_64 rng(11);
  int k = 0;
  for (const onnx::ValueInfoProto& v : m.graph().input()) {
    if (std::find(initializers.begin(), initializers.end(), v.name()) != initializers.end())
      continue;
    const auto& tt = v.type().tensor_type();
    Shape s;
    for (const auto& d : tt.shape().dim()) s.push_back(d.has_dim_value() ? d.dim_value() : 1);
    WeightData w;
    const int64_t n = s.numel();
    if (tt.elem_type() == onnx::TensorProto::INT64) {
      std::vector<int64_t> x(static_cast<size_t>(n));
      std::uniform_int_distribution<int64_t> id(5, 899);
      for (int64_t& t : x)
        t = v.name().find("mask") != std::string::npos   ? 1
            : v.name().find("type") != std::string::npos ? 0
                                                         : id(rng);
      w.type = {DType::kI64, s};
      w.bytes.resize(x.size() * sizeof(int64_t));
      std::memcpy(w.bytes.data(), x.data(), w.bytes.size());
    } else {
      EXPECT_EQ(tt.elem_type(), onnx::TensorProto::FLOAT) << v.name();
      std::vector<float> x(static_cast<size_t>(n));
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (float& t : x) t = u(rng);
      w.type = {DType::kF32, s};
      w.bytes.resize(x.size() * sizeof(float));
      std::memcpy(w.bytes.data(), x.data(), w.bytes.size());
    }
    const fs::path file = dir / ("input_" + std::to_string(k++) + ".pb");
    EXPECT_TRUE(write_tensor_file(file.string(), {v.name(), w}).ok());
  }
  return m.graph().output_size();
}

class RealExports : public ::testing::TestWithParam<std::string> {};

TEST_P(RealExports, ImportOptimizeRunAndMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const std::string name = GetParam();
  const fs::path dir = testing::temp_dir("export_" + name);
  const fs::path model = dir / "model.onnx", optimized = dir / "optimized.onnx";
  testing::RunResult fill = testing::run_binary(
      testing::venv_python(),
      {std::string(TSO_SOURCE_DIR) + "/experiments/fill_weights.py",
       (kCorpus / (name + ".graph.onnx")).string(), model.string(), "--seed", "0"},
      dir);
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  testing::inspect_without_opaque_nodes(model, dir);
  const int outputs = write_inputs(model, dir / "in");

  // The analytic H100 model, the shipped rules, no speed check: the check
  // runs whenever a rule was applied (a graph left as it was needs none).
  const fs::path report = dir / "report.json";
  testing::RunResult opt =
      testing::run_binary(TSO_BINARY,
                          {"optimize", model.string(), optimized.string(), "--report",
                           report.string(), "-q", "--no-verify-speed", "--device",
                           std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
                          dir);
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  const nlohmann::json j = testing::read_json(report);
  if (!j["rules_applied"].empty()) {
    EXPECT_EQ(j["check"]["performed"], true) << j["check"].dump();
    EXPECT_LE(j["check"]["max_relative_error"].get<double>(), kTolerance);
  }
  std::string err;
  for (const auto& [file, to] :
       {std::pair{model, dir / "ort_input"}, std::pair{optimized, dir / "ort_optimized"}})
    ASSERT_EQ(testing::run_oracle({"ort", file.string(), (dir / "in").string(), to.string()}, &err),
              0)
        << err;
  const std::vector<std::tuple<fs::path, const char*, std::string>> runs = {
      {model, "cpu", "tso_cpu_input"},
      {model, "reference", "tso_reference_input"},
      {optimized, "cpu", "tso_cpu_optimized"}};
  for (const auto& [file, device, out] : runs) {
    testing::RunResult r =
        testing::run_binary(TSO_BINARY,
                            {"run", file.string(), "--device", device, "--iters", "1", "--inputs",
                             (dir / "in").string(), "--outputs", (dir / out).string()},
                            dir);
    ASSERT_EQ(r.exit_code, 0) << out << ": " << r.err;
  }
  for (int k = 0; k < outputs; ++k) {
    const std::vector<float> want = testing::output_of(dir / "ort_input", k);
    ASSERT_FALSE(want.empty());
    for (const char* got :
         {"ort_optimized", "tso_cpu_input", "tso_reference_input", "tso_cpu_optimized"})
      EXPECT_LE(testing::relative_error(testing::output_of(dir / got, k), want), kTolerance)
          << got << ", output " << k;
  }
  fs::remove_all(dir);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealExports, ::testing::ValuesIn(corpus()), test_name);

}  // namespace
}  // namespace tso
