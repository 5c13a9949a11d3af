// `tso optimize` on the shared real models (../shared/models), through the
// built binary as a user runs it: with the committed default rules and with
// the handwritten rules (--allow-unverified). The optimized ONNX file must
// pass the ONNX checker and give the outputs ONNX Runtime gives for the input
// model (the input exported with the same random weights for graph-only
// models), and the report must count the classic rewrites. The large models
// run with a small search budget; experiments/optimize_models.sh runs all.
// BERT's integer inputs (token ids, mask, token types) are drawn from {0, 1},
// valid for each of them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "frontend/onnx.h"
#include "frontend/tensor_file.h"
#include "tests/frontend_test_util.h"

namespace tso {
namespace {

using testing::floats_of;
using testing::relative_error;

const std::string kModels = "/work/shared/models/";
const std::string kSource = TSO_SOURCE_DIR;
const std::string kH100 = kSource + "/optimizer/devices/h100.json";
constexpr uint64_t kSeed = 7;

struct ModelCase {
  const char* file;
  bool handwritten;  // --allow-unverified with handwritten + taso_n3 rules
  // classic rewrite kind (the report's classic_rewrites) -> minimum applications
  std::map<std::string, int> at_least;
  const char* search = "";  // extra flags: small budgets for the large models
};

// The counts are what the search finds from the generated rules
// (substitutions/*_n*.rules) under the analytic model of the H100 device
// file, which the tests name so that they do not depend on what this
// machine measures (the default target measures on the CPU): every conv+relu pair fused (strided
// ones by lifted rules), SqueezeNet's 8 fire modules' expand convs merged through an enlarged 1x1
// kernel, BERT's 12 Q/K/V triples merged by two-way merges.
const ModelCase kCases[] = {
    {"squeezenet1_1.onnx",
     false,
     {{"fuse_activation", 26}, {"merge_convolutions", 8}, {"enlarge_kernel", 8}}},
    {"squeezenet1_1.graph.onnx", false, {}},
    {"resnet50.graph.onnx", false, {{"fuse_activation", 33}}},
    {"squeezenet1_1.onnx", true, {}},
    {"resnext50_32x4d.graph.onnx", false, {{"fuse_activation", 1}}, " --budget 10"},
    {"inception_v3.graph.onnx",
     false,
     {{"merge_convolutions", 1}, {"fuse_activation", 1}},
     " --budget 10"},
    {"nasnetalarge.graph.onnx",
     false,
     {{"merge_convolutions", 1}, {"fold_batchnorm", 1}},
     " --budget 30"},  // its 24 foldable pads take the first expansions
    {"bert_base_seq128.graph.onnx", false, {{"merge_matmuls", 24}}, " --budget 60"},
};

// Runs `tso ARGS`; returns its exit status, stdout+stderr in `*out`.
int run_tso(const std::string& args, std::string* out) {
  std::string log = (std::filesystem::path(::testing::TempDir()) /
                     ("tso_opt_" + std::to_string(getpid()) + ".log"))
                        .string();
  int status = std::system((std::string(TSO_BINARY) + " " + args + " >'" + log + "' 2>&1").c_str());
  std::ifstream in(log);
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  std::filesystem::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

template <class T, class Dist>
std::vector<std::byte> random_bytes(int64_t n, Dist dist, std::mt19937& rng) {
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  std::vector<std::byte> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

// One seeded tensor per graph input, written as input_K.pb: f32 uniform in
// [-1, 1), integers in {0, 1}.
Status write_random_inputs(const Graph& g, const std::filesystem::path& dir) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> real(-1, 1);
  std::uniform_int_distribution<int> bit(0, 1);
  int k = 0;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    WeightData x;
    x.type = n.outs[0];
    const int64_t count = x.type.shape.numel();
    switch (x.type.dtype) {
      case DType::kF32:
        x.bytes = random_bytes<float>(count, real, rng);
        break;
      case DType::kI64:
        x.bytes = random_bytes<int64_t>(count, bit, rng);
        break;
      case DType::kI32:
        x.bytes = random_bytes<int32_t>(count, bit, rng);
        break;
      default:
        return Error{"input '" + n.name + "' is " + dtype_name(x.type.dtype)};
    }
    Status s =
        write_tensor_file((dir / ("input_" + std::to_string(k++) + ".pb")).string(), {n.name, x});
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

std::string label(const ModelCase& c) {
  std::string s = std::string(c.file) + (c.handwritten ? "_handwritten" : "_default");
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

class OptimizedModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(OptimizedModels, PassesTheCheckerAndMatchesOnnxRuntime) {
  const ModelCase& c = GetParam();
  const std::string model = kModels + c.file;
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  auto dir = testing::temp_dir(label(c));

  // The input model as ORT sees it: with the random weights `tso` will use.
  ImportOptions io;
  io.random_weights_seed = kSeed;
  Expected<ImportedModel> m = import_onnx(model, io);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const std::string original = (dir / "original.onnx").string();
  Status s = export_onnx(*m, original);
  ASSERT_TRUE(s.ok()) << s.error().message;

  const std::string out = (dir / "optimized.onnx").string();
  const std::string report = (dir / "report.json").string();
  std::string args = "optimize '" + model + "' -o '" + out + "' --report '" + report +
                     "' --random-weights " + std::to_string(kSeed) + " -q --device " + kH100;
  args += c.search;
  if (c.handwritten)
    args += " --allow-unverified --rules " + kSource + "/substitutions/handwritten.rules" +
            " --rules " + kSource + "/substitutions/taso_n3.rules";
  std::string log;
  ASSERT_EQ(run_tso(args, &log), 0) << log;

  std::string err;
  EXPECT_EQ(testing::run_oracle({"check", out}, &err), 0) << err;

  ASSERT_TRUE(write_random_inputs(m->graph, dir).ok());
  err.clear();
  ASSERT_EQ(testing::run_oracle({"ort", original, dir.string(), (dir / "a").string()}, &err), 0)
      << err;
  ASSERT_EQ(testing::run_oracle({"ort", out, dir.string(), (dir / "b").string()}, &err), 0) << err;
  for (size_t k = 0; k < m->graph.outputs().size(); ++k) {
    const std::string name = "output_" + std::to_string(k) + ".pb";
    Expected<NamedTensor> a = read_tensor_file((dir / "a" / name).string());
    Expected<NamedTensor> b = read_tensor_file((dir / "b" / name).string());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->name, b->name);
    ASSERT_EQ(a->value.type.shape, b->value.type.shape);
    double e = relative_error(floats_of(b->value), floats_of(a->value));
    std::printf("%s output %zu: relative error optimized vs original (ONNX Runtime) %.3g\n",
                label(c).c_str(), k, e);
    EXPECT_LE(e, 1e-4);
  }

  std::ifstream rin(report);
  nlohmann::json r = nlohmann::json::parse(rin);
  EXPECT_EQ(r["format"], "tso-optimize-report");
  EXPECT_TRUE(r["check"]["performed"] == true ||
              r["operators"]["before"] == r["operators"]["after"]);
  for (const auto& [kind, n] : c.at_least)
    EXPECT_GE(r["classic_rewrites"][kind].get<int>(), n) << kind;
  if (!c.at_least.empty()) {
    EXPECT_LT(r["operators"]["after"].get<int>(), r["operators"]["before"].get<int>());
    EXPECT_LT(r["predicted_cost_us"]["after"].get<double>(),
              r["predicted_cost_us"]["before"].get<double>());
  }
  std::filesystem::remove_all(dir);
}

// BERT has no opaque nodes (IsNaN/Where are isnan/where): the numerical check
// runs on the whole graph. The rules are the rank-lifted ones, which bind
// BERT's rank-3 and rank-4 tensors (taso_n3's are proved for matrices only).
TEST(OptimizedBert, IsCheckedInFull) {
  const std::string model = kModels + "bert_base_seq128.graph.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  auto dir = testing::temp_dir("bert");
  const std::string report = (dir / "report.json").string();
  std::string log;
  ASSERT_EQ(run_tso("optimize '" + model + "' -o '" + (dir / "out.onnx").string() + "' --report '" +
                        report + "' --random-weights 7 -q --budget 50" + " --device " + kH100 +
                        " --rules " + kSource + "/substitutions/lifted_n3.rules",
                    &log),
            0)
      << log;
  std::ifstream rin(report);
  nlohmann::json r = nlohmann::json::parse(rin);
  EXPECT_LT(r["operators"]["after"].get<int>(), r["operators"]["before"].get<int>());
  EXPECT_EQ(r["check"]["performed"], true);
  EXPECT_LE(r["check"]["max_relative_error"].get<double>(), 1e-4);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Optimizer, OptimizedModels, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return label(info.param); });

}  // namespace
}  // namespace tso
