// The ONNX conformance node tests shipped in Debian's libonnx-testdata, run
// through the importer and the reference executor. Every test directory of an
// operator the IR maps is tried; each one either runs and must match the
// expected outputs within 1e-5 relative, or is skipped with its reason (an
// opaque node, an element type other than f32, or bool for outputs, ...). The
// test prints how many ran and names every skip.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <sstream>

#include "frontend/onnx.h"
#include "frontend/tensor_file.h"
#include "onnx/onnx_pb.h"
#include "tests/frontend_test_util.h"

namespace tso {
namespace {

const std::filesystem::path kTestData = "/usr/share/libonnx-testdata/data";
const std::filesystem::path kNodeTests = kTestData / "node";
constexpr double kTolerance = 1e-5;

// Directory name prefixes of the operators the IR maps (ConvInteger and
// MatMulInteger excluded by the exact-prefix check below).
// The test_hardsigmoid* models are opset 6, test_not_* opset 1, test_and*
// and test_or* opset 7: they run upgraded to opset 11 by ONNX's version
// converter, as every model below 11 is imported.
const char* kPrefixes[] = {
    "test_conv_",        "test_basic_conv_",   "test_gemm_",        "test_matmul_",
    "test_add",          "test_sub",           "test_mul",          "test_div",
    "test_pow",          "test_relu",          "test_sigmoid",      "test_tanh",
    "test_erf",          "test_sqrt",          "test_neg",          "test_exp",
    "test_concat_",      "test_split_",        "test_transpose_",   "test_averagepool_",
    "test_maxpool_",     "test_globalaveragepool", "test_batchnorm_", "test_softmax_",
    "test_layer_normalization_", "test_reshape_", "test_flatten_",  "test_squeeze",
    "test_unsqueeze",    "test_slice",         "test_constant_pad", "test_clip",
    "test_reduce_mean_", "test_identity",      "test_dropout_default", "test_isnan",
    "test_where_",       "test_gather_",       "test_hardsigmoid",  "test_hardswish",
    "test_expand_",      "test_equal",         "test_less",         "test_greater",
    "test_not_",         "test_and",           "test_or",           "test_cumsum_",
    "test_leakyrelu",    "test_softplus",      "test_reduce_sum_",  "test_reduce_max_",
    "test_reduce_l2_",   "test_tile",          "test_resize_",      "test_gathernd_",
    "test_reduce_sum_square_", "test_argmax_", "test_argmin_", "test_prelu_",
    "test_convtranspose", "test_elu",        "test_selu",        "test_softsign",
    "test_sum_",         "test_mean_",       "test_lrn",         "test_reflect_pad",
    "test_edge_pad",     "test_log",           "test_abs",          "test_max_",
    "test_min_",         "test_reduce_l1_",    "test_reduce_min_",  "test_reduce_log_sum",
    "test_depthtospace", "test_spacetodepth",  "test_gridsample",  "test_sin_example",
    "test_cos_example",  "test_quantizelinear", "test_dequantizelinear",
};

// Operators the importer folds when their inputs are constants, as in the
// models that carry them (torch's slice assignments), and does not map
// otherwise: every input becomes an initializer and the graph folds to its
// output.
const char* kFoldedPrefixes[] = {"test_scatternd"};
// Operators that both map and fold: each test runs twice, with its data an
// input (the mapping) and with every input an initializer (the fold: a
// Resize of position embeddings).
const char* kAlsoFoldedPrefixes[] = {"test_resize_"};

bool has_prefix(const std::string& name, std::span<const char* const> prefixes) {
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

bool folded(const std::string& name) { return has_prefix(name, kFoldedPrefixes); }

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool selected(const std::string& name) {
  if (folded(name)) return true;
  for (const char* p : kPrefixes)
    if (name.rfind(p, 0) == 0) return name.find("_training") == std::string::npos;
  return false;
}

// Whether every reader of graph input `name` computes on it as data of any
// element type: a comparison's or logic operator's operand, CumSum's input.
bool read_as_data(const onnx::ModelProto& m, const std::string& name) {
  static const std::set<std::string> kAnyType = {"Equal", "Less", "Greater", "LessOrEqual",
                                                 "GreaterOrEqual", "Not", "And", "Or"};
  bool read = false;
  for (const auto& n : m.graph().node())
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i) != name) continue;
      const bool data = (n.op_type() == "CumSum" || n.op_type() == "DequantizeLinear") && i == 0;
      if (!kAnyType.count(n.op_type()) && !data) return false;
      read = true;
    }
  return read;
}

// In these tests every operand is a graph input, even shapes and axes that a
// real model holds as constants. Integer and bool inputs (Where's condition,
// CumSum's axis), and Clip's and Pad's parameters, become initializers holding
// the test's values, except the data of comparisons, logic and CumSum, which
// stays an input of its own element type so that the operator runs; so do
// ConvTranspose's weights and quantization's scales and zero points, which a
// model holds as constants. DequantizeLinear's data stays an input of its own
// element type.
bool is_parameter(const onnx::ModelProto& m, int k, const WeightData& value) {
  const std::string& name = m.graph().input(k).name();
  if (read_as_data(m, name)) return false;
  if (value.type.dtype == DType::kI64 || value.type.dtype == DType::kI32 ||
      value.type.dtype == DType::kBool)
    return true;
  for (const auto& n : m.graph().node())
    for (int i = 1; i < n.input_size(); ++i)
      if (n.input(i) == name && (n.op_type() == "Clip" || n.op_type() == "Pad" ||
                                 n.op_type() == "Resize" || n.op_type() == "QuantizeLinear" ||
                                 n.op_type() == "DequantizeLinear" ||
                                 (n.op_type() == "ConvTranspose" && i == 1)))
        return true;
  return false;
}

struct Outcome {
  bool ran = false;
  std::string skip_reason;
  std::string failure;
};

Outcome run_case(const std::filesystem::path& dir, bool all_constant) {
  Outcome r;
  onnx::ModelProto m;
  if (!m.ParseFromString(read_bytes(dir / "model.onnx"))) return {false, "", "model.onnx does not parse"};
  const auto data = dir / "test_data_set_0";
  std::vector<WeightData> feeds;
  std::vector<std::string> names;
  onnx::ModelProto edited = m;
  edited.mutable_graph()->clear_input();
  // LayerNormalization's Mean and InvStdDev outputs serve training; inference
  // models never read them, and the IR's layernorm does not produce them.
  int compared = m.graph().output_size();
  for (const auto& n : m.graph().node())
    if (n.op_type() == "LayerNormalization") {
      compared = 1;
      while (edited.graph().output_size() > 1) edited.mutable_graph()->mutable_output()->RemoveLast();
    }
  // Below IR 4 the initializers are listed as inputs too; the data files
  // hold the other inputs, in order.
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  for (int k = 0, file = 0; k < m.graph().input_size(); ++k) {
    if (initializers.count(m.graph().input(k).name())) {
      *edited.mutable_graph()->add_input() = m.graph().input(k);
      continue;
    }
    const std::string input_file = "input_" + std::to_string(file++) + ".pb";
    Expected<NamedTensor> t = read_tensor_file((data / input_file).string());
    if (!t) return {false, "input " + std::to_string(k) + ": " + t.error().message, ""};
    if (all_constant || is_parameter(m, k, t->value)) {
      onnx::TensorProto* init = edited.mutable_graph()->add_initializer();
      init->ParseFromString(read_bytes(data / input_file));
      init->set_name(m.graph().input(k).name());
      if (m.ir_version() < 4) *edited.mutable_graph()->add_input() = m.graph().input(k);
      continue;
    }
    if (t->value.type.dtype != DType::kF32 && !read_as_data(m, m.graph().input(k).name()))
      return {false, std::string("input of type ") + dtype_name(t->value.type.dtype), ""};
    *edited.mutable_graph()->add_input() = m.graph().input(k);
    feeds.push_back(std::move(t->value));
  }
  Expected<ImportedModel> imp = import_onnx_bytes(edited.SerializeAsString(), dir.filename().string(), dir.string());
  if (!imp) return {false, "import: " + imp.error().message, ""};
  if (!imp->opaque_nodes.empty())
    return {false, "opaque " + imp->opaque_nodes[0].op_type + ": " + imp->opaque_nodes[0].reason, ""};
  auto got = testing::run_reference(imp->graph, feeds);
  if (!got) return {false, "", "reference executor: " + got.error().message};
  if (static_cast<int>(got->size()) != compared) return {false, "", "wrong number of outputs"};
  for (size_t k = 0; k < got->size(); ++k) {
    Expected<NamedTensor> want = read_tensor_file((data / ("output_" + std::to_string(k) + ".pb")).string());
    if (!want) return {false, "", want.error().message};
    // f32, bool (IsNaN's mask and the comparisons', 0 and 1 on the reference
    // executor), or the sums of CumSum's f64 and integer tests.
    if (want->value.type.dtype == DType::kF16)
      return {false, std::string("output of type ") + dtype_name(want->value.type.dtype), ""};
    if ((*got)[k].shape != want->value.type.shape)
      return {false, "", "output " + std::to_string(k) + " has shape " + to_string((*got)[k].shape) +
                             ", expected " + to_string(want->value.type.shape)};
    Expected<ref::Tensor<float>> expected = ref::weight_value<float>(want->value);
    if (!expected) return {false, "", expected.error().message};
    double e = testing::relative_error((*got)[k].data, expected->data);
    if (!(e <= kTolerance))
      return {false, "", "output " + std::to_string(k) + " differs: relative error " + std::to_string(e)};
  }
  r.ran = true;
  return r;
}

TEST(OnnxConformance, NodeTestsOfIrOperators) {
  if (!std::filesystem::exists(kNodeTests))
    GTEST_SKIP() << kNodeTests << " is missing (Debian package libonnx-testdata)";
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(kNodeTests))
    if (selected(e.path().filename().string())) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int ran = 0, skipped = 0;
  std::set<std::string> families_ran, tests_ran;
  int folded_ran = 0;
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    const bool twice = has_prefix(name, kAlsoFoldedPrefixes);
    const std::vector<bool> modes = twice ? std::vector<bool>{false, true}
                                          : std::vector<bool>{folded(name)};
    for (bool all_constant : modes) {
      Outcome o = run_case(dir, all_constant);
      const std::string label = name + (all_constant && twice ? " (folded)" : "");
      EXPECT_TRUE(o.failure.empty()) << label << ": " << o.failure;
      if (o.ran) {
        ++(twice && all_constant ? folded_ran : ran);
        tests_ran.insert(label);
        families_ran.insert(name.substr(5, name.find('_', 5) - 5));
      } else if (o.failure.empty()) {
        ++skipped;
        std::printf("skip %s: %s\n", label.c_str(), o.skip_reason.c_str());
      }
    }
  }
  std::printf(
      "ONNX conformance: %d of %zu node tests ran, and %d more with every input constant; %d "
      "skipped (reasons above)\n",
      ran, dirs.size(), folded_ran, skipped);
  EXPECT_GE(ran, 150);
  for (const char* op : {"conv", "gemm", "matmul", "add", "mul", "relu", "sigmoid", "tanh",
                         "concat", "split", "transpose", "averagepool", "maxpool", "batchnorm",
                         "softmax", "layer", "reshape", "flatten", "squeeze", "unsqueeze", "slice",
                         "constant", "clip", "erf", "isnan", "where", "gather", "hardswish",
                         "expand", "equal", "less", "greater", "cumsum", "leakyrelu"})
    EXPECT_TRUE(families_ran.count(op)) << "no conformance test of " << op << " ran";
  // Families the prefix above does not tell apart.
  for (const char* test : {"test_gather_elements_0", "test_gather_elements_negative_indices",
                           "test_less_equal_expanded", "test_cumsum_1d_reverse_exclusive",
                           "test_hardsigmoid", "test_not_2d", "test_and2d", "test_or2d"})
    EXPECT_TRUE(tests_ran.count(test)) << test << " did not run";
}

int64_t default_opset(const std::filesystem::path& model) {
  onnx::ModelProto m;
  if (!m.ParseFromString(read_bytes(model))) return -1;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return -1;
}

// The model tests of libonnx-testdata below opset 11: PyTorch's exports of
// its modules and operators from 2018 (opset 6) and small models of opsets 9
// and 10. Each is upgraded to opset 11 at import by ONNX's version converter
// and must then match the expected outputs, or is skipped with its reason:
// an operator tso does not map (3-D convolutions, ConvTranspose, PRelu, ...)
// or an upgrade the converter cannot make (a broadcast whose operands have
// no shapes in the file).
TEST(OnnxConformance, ModelsBelowOpset11RunUpgraded) {
  if (!std::filesystem::exists(kTestData))
    GTEST_SKIP() << kTestData << " is missing (Debian package libonnx-testdata)";
  std::vector<std::filesystem::path> dirs;
  for (const char* group : {"pytorch-converted", "pytorch-operator", "simple"})
    for (const auto& e : std::filesystem::directory_iterator(kTestData / group))
      if (default_opset(e.path() / "model.onnx") < kMinOnnxOpset) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int ran = 0;
  std::set<std::string> tests_ran;
  for (const auto& dir : dirs) {
    const std::string label = dir.parent_path().filename().string() + "/" + dir.filename().string();
    Outcome o = run_case(dir, false);
    EXPECT_TRUE(o.failure.empty()) << label << ": " << o.failure;
    if (o.ran) {
      ++ran;
      tests_ran.insert(dir.filename().string());
    } else if (o.failure.empty()) {
      std::printf("skip %s: %s\n", label.c_str(), o.skip_reason.c_str());
    }
  }
  std::printf("ONNX conformance below opset 11: %d of %zu model tests ran upgraded\n", ran,
              dirs.size());
  EXPECT_GE(ran, 70);
  for (const char* test : {"test_Conv2d_groups", "test_BatchNorm2d_eval", "test_Linear",
                           "test_MaxPool2d", "test_AvgPool2d", "test_Embedding",
                           "test_PixelShuffle", "test_operator_view", "test_operator_permute2",
                           "test_operator_chunk"})
    EXPECT_TRUE(tests_ran.count(test)) << test << " did not run";
}

}  // namespace
}  // namespace tso
