// Opset 23's Attention (torch.export's F.scaled_dot_product_attention) end to
// end through the binary, on models built here: imported with no opaque
// node, optimized, and run by ONNX Runtime and by tso's CPU runtime and
// reference executor. Four forms: 4-D heads with a bool mask that is a
// graph input and masks one query row whole (a zero row, not NaN); 3-D
// inputs with grouped-query heads, a key and value cache (the present
// outputs), causal masking, a softcap and a given scale; a constant float
// mask with a row of -inf and the attention weights as qk_matmul_output;
// opset 25's sliding window.
// The close but wrong variants: query heads that are no multiple of the key
// heads, a mask that does not broadcast or is of integers, 3-D inputs
// without head counts, inputs of mixed ranks, an unknown qk_matmul_output
// mode, a window below -1, a cache of keys without values or of other
// lengths are errors naming the node; Attention-24's nonpad_kv_seqlen, and a
// causal mask too large to hold as a constant, stay opaque.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx_test_util.h"
#include "frontend/tensor_file.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using Dims = std::vector<int64_t>;

struct Io {
  std::string name;
  int32_t elem;
  Dims dims;
};

struct AttentionModel {
  std::vector<Io> inputs;
  std::vector<std::string> node_inputs;   // "" for an absent optional input
  std::vector<std::string> node_outputs;  // "" for an absent optional output
  std::vector<Io> outputs;
  std::vector<std::pair<std::string, int64_t>> ints;
  std::vector<std::pair<std::string, float>> floats;
  int64_t opset = 23;
  std::vector<onnx::TensorProto> initializers;
};

void declare(onnx::ValueInfoProto* v, const Io& io) {
  v->set_name(io.name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(io.elem);
  for (int64_t d : io.dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

fs::path write_model(const fs::path& dir, const std::string& name, const AttentionModel& a) {
  onnx::ModelProto m;
  m.set_ir_version(11);
  m.add_opset_import()->set_version(a.opset);
  auto* g = m.mutable_graph();
  g->set_name(name);
  for (const Io& io : a.inputs) declare(g->add_input(), io);
  for (const Io& io : a.outputs) declare(g->add_output(), io);
  for (const onnx::TensorProto& t : a.initializers) *g->add_initializer() = t;
  onnx::NodeProto* n = g->add_node();
  n->set_name("attention");
  n->set_op_type("Attention");
  for (const std::string& s : a.node_inputs) n->add_input(s);
  for (const std::string& s : a.node_outputs) n->add_output(s);
  for (const auto& [key, value] : a.ints) testing::set_int(n, key.c_str(), value);
  for (const auto& [key, value] : a.floats) {
    onnx::AttributeProto* at = n->add_attribute();
    at->set_name(key);
    at->set_type(onnx::AttributeProto::FLOAT);
    at->set_f(value);
  }
  const fs::path p = dir / (name + ".onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// dir/input_K.pb for each graph input: floats uniform in [-2, 2), bool masks
// from `mask` (true where the key is kept).
void write_inputs(const fs::path& dir, const std::vector<Io>& inputs,
                  const std::vector<uint8_t>& mask, uint64_t seed) {
  fs::create_directories(dir);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape s(inputs[k].dims);
    WeightData w;
    if (inputs[k].elem == onnx::TensorProto::BOOL) {
      w.type = {DType::kBool, s};
      for (uint8_t b : mask) w.bytes.push_back(std::byte{b});
      ASSERT_EQ(static_cast<int64_t>(w.bytes.size()), s.numel());
    } else {
      std::vector<float> x(static_cast<size_t>(s.numel()));
      for (float& v : x) v = u(rng);
      w.type = {DType::kF32, s};
      w.bytes.resize(x.size() * sizeof(float));
      std::memcpy(w.bytes.data(), x.data(), w.bytes.size());
    }
    const std::string file = "input_" + std::to_string(k) + ".pb";
    ASSERT_TRUE(write_tensor_file((dir / file).string(), {inputs[k].name, w}).ok());
  }
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

// Imports `a` with no opaque node, optimizes it and compares every output of
// the input and optimized files with ONNX Runtime's on the input file.
void expect_matches_onnx_runtime(const std::string& name, const AttentionModel& a,
                                 const std::vector<uint8_t>& mask = {}) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("attention_cli_" + name);
  const fs::path model = write_model(dir, name, a), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("softmax"), std::string::npos) << listing;
  testing::RunResult r =
      tso({"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device",
           std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_inputs(dir / "in", a.inputs, mask, 43);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in",
                                             static_cast<int>(a.outputs.size()), dir);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

AttentionModel masked_heads() {
  AttentionModel a;
  a.inputs = {{"q", kF32, {1, 2, 4, 8}},
              {"k", kF32, {1, 2, 6, 8}},
              {"v", kF32, {1, 2, 6, 5}},
              {"mask", kBool, {1, 1, 4, 6}}};
  a.node_inputs = {"q", "k", "v", "mask"};
  a.node_outputs = {"y"};
  a.outputs = {{"y", kF32, {1, 2, 4, 5}}};
  return a;
}

TEST(AttentionCli, ABoolMaskInputWithAWhollyMaskedRowMatchesOnnxRuntime) {
  std::vector<uint8_t> mask = {1, 0, 1, 1, 0, 1,  // row 0
                               1, 1, 1, 1, 1, 1,  // row 1
                               0, 0, 0, 0, 0, 0,  // row 2: every key masked, a zero row
                               0, 0, 0, 0, 0, 1};
  expect_matches_onnx_runtime("masked", masked_heads(), mask);
}

TEST(AttentionCli, GroupedQueryHeadsWithACacheCausalAndSoftcapMatchOnnxRuntime) {
  AttentionModel a;
  a.inputs = {{"q", kF32, {1, 3, 32}},
              {"k", kF32, {1, 3, 16}},
              {"v", kF32, {1, 3, 12}},
              {"past_key", kF32, {1, 2, 5, 8}},
              {"past_value", kF32, {1, 2, 5, 6}}};
  a.node_inputs = {"q", "k", "v", "", "past_key", "past_value"};
  a.node_outputs = {"y", "present_key", "present_value"};
  a.outputs = {{"y", kF32, {1, 3, 24}},
               {"present_key", kF32, {1, 2, 8, 8}},
               {"present_value", kF32, {1, 2, 8, 6}}};
  a.ints = {{"q_num_heads", 4}, {"kv_num_heads", 2}, {"is_causal", 1}};
  a.floats = {{"softcap", 2.0f}, {"scale", 0.2f}};
  expect_matches_onnx_runtime("gqa_cache", a);
}

TEST(AttentionCli, AConstantFloatMaskAndTheAttentionWeightsMatchOnnxRuntime) {
  AttentionModel a;
  a.inputs = {{"q", kF32, {1, 2, 4, 8}}, {"k", kF32, {1, 2, 6, 8}}, {"v", kF32, {1, 2, 6, 5}}};
  onnx::TensorProto mask;
  mask.set_name("mask");
  mask.set_data_type(kF32);
  for (int64_t d : {4, 6}) mask.add_dims(d);
  const float inf = INFINITY;
  for (float x : {-0.5f, 0.f,   0.f, 0.f, 0.f, 0.f, 0.f,  0.f,  0.f,  -inf, -inf, -inf,  //
                  0.f,   0.25f, 0.f, 0.f, 0.f, 0.f, -inf, -inf, -inf, -inf, -inf, -inf})
    mask.add_float_data(x);
  a.initializers = {mask};
  a.node_inputs = {"q", "k", "v", "mask"};
  a.node_outputs = {"y", "", "", "weights"};
  a.outputs = {{"y", kF32, {1, 2, 4, 5}}, {"weights", kF32, {1, 2, 4, 6}}};
  a.ints = {{"qk_matmul_output_mode", 3}};
  expect_matches_onnx_runtime("float_mask", a);
}

// Attention-25's sliding window: each query attends keys from one before
// its position to two after.
TEST(AttentionCli, ASlidingWindowOfOpset25MatchesOnnxRuntime) {
  AttentionModel a = masked_heads();
  a.opset = 25;
  a.inputs.pop_back();
  a.node_inputs.pop_back();
  a.ints = {{"left_window_size", 1}, {"right_window_size", 2}};
  expect_matches_onnx_runtime("window", a);
}

TEST(AttentionCli, CloseButWrongVariantsAreErrorsNamingTheNode) {
  const fs::path dir = testing::temp_dir("attention_cli_wrong");
  AttentionModel heads = masked_heads();
  heads.inputs[1].dims = {1, 3, 6, 8};
  heads.inputs[2].dims = {1, 3, 6, 5};
  AttentionModel mask = masked_heads();
  mask.inputs[3].dims = {1, 1, 4, 5};
  AttentionModel flat = masked_heads();
  for (Io& io : flat.inputs) io.dims = {1, io.dims[2], io.dims[1] * io.dims[3]};
  flat.inputs.pop_back();
  flat.node_inputs.pop_back();
  AttentionModel ranks = masked_heads();
  ranks.inputs[2].dims = {1, 6, 10};
  AttentionModel ints = masked_heads();
  ints.inputs[3].elem = onnx::TensorProto::INT64;
  AttentionModel mode = masked_heads();
  mode.ints = {{"qk_matmul_output_mode", 4}};
  AttentionModel window = masked_heads();
  window.opset = 25;
  window.ints = {{"left_window_size", -2}};
  AttentionModel half_cache = masked_heads();
  half_cache.inputs.push_back({"past_key", kF32, {1, 2, 3, 8}});
  half_cache.node_inputs = {"q", "k", "v", "mask", "past_key"};
  AttentionModel cache = masked_heads();
  cache.inputs.push_back({"past_key", kF32, {1, 2, 3, 8}});
  cache.inputs.push_back({"past_value", kF32, {1, 2, 2, 5}});
  cache.node_inputs = {"q", "k", "v", "mask", "past_key", "past_value"};
  for (const auto& [model, message] :
       {std::pair{heads, "has 2 query heads for 3 key heads, not a multiple"},
        {mask, "does not broadcast to [1,2,4,6]"},
        {flat, "which need q_num_heads and kv_num_heads"},
        {ranks, "needs Q, K and V all of rank 3 or all of rank 4"},
        {ints, "has attn_mask i64[1,1,4,6], neither bool nor the type of Q"},
        {mode, "has qk_matmul_output_mode 4 (0 to 3)"},
        {window, "has a window size below -1 (left -2, right -1)"},
        {half_cache, "has one of past_key and past_value"},
        {cache, "that do not fit its keys and values"}}) {
    testing::RunResult r = tso({"inspect", write_model(dir, "wrong", model).string()}, dir);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_NE(r.err.find("node 'attention' (Attention)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }

  // A causal bias over 8192 x 8192 query-key pairs would be 256 MiB: opaque.
  AttentionModel huge;
  huge.inputs = {
      {"q", kF32, {1, 1, 8192, 1}}, {"k", kF32, {1, 1, 8192, 1}}, {"v", kF32, {1, 1, 8192, 1}}};
  huge.node_inputs = {"q", "k", "v"};
  huge.node_outputs = {"y"};
  huge.outputs = {{"y", kF32, {1, 1, 8192, 1}}};
  huge.ints = {{"is_causal", 1}};
  testing::RunResult big = tso({"inspect", write_model(dir, "huge", huge).string()}, dir);
  EXPECT_EQ(big.exit_code, 0) << big.err;
  EXPECT_NE(big.out.find("opaque"), std::string::npos) << big.out;

  AttentionModel padded = masked_heads();
  padded.opset = 24;
  padded.inputs.push_back({"lengths", onnx::TensorProto::INT64, {1}});
  padded.node_inputs = {"q", "k", "v", "mask", "", "", "lengths"};
  testing::RunResult r = tso({"inspect", write_model(dir, "padded", padded).string()}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opaque"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
