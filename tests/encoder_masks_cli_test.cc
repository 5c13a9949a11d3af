// What encoders compute on token ids and attention masks, end to end through
// the binary (issue 16 points 4 and 7): RoBERTa's position ids (the tokens
// that are not padding counted by a CumSum of Not(Equal(ids, pad)), in i32,
// then i64 arithmetic), DistilBERT's `mask == 0`, a LessOrEqual on the
// positions and the And of both masks selecting tokens by Where before a
// mean, the tokens' features first reordered by a GatherElements at stored
// positions (DeBERTa's relative-position attention reads its scores so). `tso optimize` imports it
// with no opaque node, fuses the relu into its product, checks the whole graph numerically and
// writes a model whose outputs ONNX Runtime computes as it does the input's; `tso run` computes
// them on the CPU runtime and the reference executor. The close but wrong
// variants: a comparison of bool tensors stays opaque, which the CPU runtime
// refuses naming it; a CumSum axis past the rank is an error at import naming
// the node, with no output written.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

constexpr int64_t kBatch = 2, kSeq = 8, kVocab = 30, kHidden = 16, kClasses = 4, kPad = 1;

using testing::add_node;
using testing::declare;

void add_int_initializer(onnx::GraphProto* g, const std::string& name, int32_t elem,
                         std::initializer_list<int64_t> dims, std::initializer_list<int64_t> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) {
    if (elem == onnx::TensorProto::INT32)
      t->add_int32_data(static_cast<int32_t>(x));
    else
      t->add_int64_data(x);
  }
}

struct Variant {
  int64_t cumsum_axis = 1;
  bool compare_bools = false;  // Equal of two bool masks instead of And
};

// ids, mask: i64[2,8]. positions = CumSum(Cast(Not(Equal(ids, 1)), i32),
// axis 1) * that mask, as i64, + 1 (RoBERTa); embed = table[ids] +
// positions_table[positions]; act = Relu(MatMul(embed, w1)); keep =
// And(Not(Equal(mask, 0)), LessOrEqual(positions, 6)); y = MatMul(mean over
// tokens of Where(keep, GatherElements(act, order, axis 1), 0), w2): f32[2,4].
fs::path write_model(const fs::path& dir, const Variant& v) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("masks");
  declare(g->add_input(), "ids", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_input(), "mask", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {kBatch, kClasses});
  std::mt19937_64 rng(13);
  testing::add_random_floats(g, "table", {kVocab, kHidden}, rng);
  testing::add_random_floats(g, "positions_table", {kSeq + kPad + 1, kHidden}, rng);
  testing::add_random_floats(g, "w1", {kHidden, kHidden}, rng);
  testing::add_random_floats(g, "w2", {kHidden, kClasses}, rng);
  add_int_initializer(g, "pad", onnx::TensorProto::INT64, {}, {kPad});
  add_int_initializer(g, "zero", onnx::TensorProto::INT64, {}, {0});
  add_int_initializer(g, "limit", onnx::TensorProto::INT64, {}, {6});
  add_int_initializer(g, "axis", onnx::TensorProto::INT64, {}, {v.cumsum_axis});
  add_int_initializer(g, "axis2", onnx::TensorProto::INT64, {1}, {2});
  auto* order = g->add_initializer();
  order->set_name("order");
  order->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : {kBatch, kSeq, kHidden}) order->add_dims(d);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t s = 0; s < kSeq; ++s)
      for (int64_t h = 0; h < kHidden; ++h)
        order->add_int64_data((s * 3 + h + b) % kSeq - kSeq * (h % 2));
  auto* none = g->add_initializer();
  none->set_name("none");
  none->set_data_type(onnx::TensorProto::FLOAT);
  none->add_float_data(0.0f);

  add_node(g, "Equal", {"ids", "pad"}, "is_pad");
  add_node(g, "Not", {"is_pad"}, "real");
  testing::set_int(add_node(g, "Cast", {"real"}, "real32"), "to", onnx::TensorProto::INT32);
  add_node(g, "CumSum", {"real32", "axis"}, "counted");
  add_node(g, "Mul", {"counted", "real32"}, "increments");
  testing::set_int(add_node(g, "Cast", {"increments"}, "increments64"), "to",
                   onnx::TensorProto::INT64);
  add_node(g, "Add", {"increments64", "pad"}, "positions");
  add_node(g, "Gather", {"table", "ids"}, "words");
  add_node(g, "Gather", {"positions_table", "positions"}, "places");
  add_node(g, "Add", {"words", "places"}, "embed");
  add_node(g, "MatMul", {"embed", "w1"}, "proj");
  add_node(g, "Relu", {"proj"}, "act");
  add_node(g, "Equal", {"mask", "zero"}, "masked");
  add_node(g, "Not", {"masked"}, "attended");
  add_node(g, "LessOrEqual", {"positions", "limit"}, "near");
  add_node(g, v.compare_bools ? "Equal" : "And", {"attended", "near"}, "keep");
  add_node(g, "Unsqueeze", {"keep", "axis2"}, "keep3");
  testing::set_int(add_node(g, "GatherElements", {"act", "order"}, "shuffled"), "axis", 1);
  add_node(g, "Where", {"keep3", "shuffled", "none"}, "kept");
  onnx::NodeProto* mean = add_node(g, "ReduceMean", {"kept"}, "pooled");
  testing::set_ints(mean, "axes", {1});
  testing::set_int(mean, "keepdims", 0);
  add_node(g, "MatMul", {"pooled", "w2"}, "y");
  const fs::path p = dir / "masks.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// input_0.pb: token ids, padding (1) at the end of the second sequence and
// once inside the first; input_1.pb: the mask, 0 over the second's padding.
void write_inputs(const fs::path& dir) {
  std::vector<int64_t> mask(kBatch * kSeq, 1);
  mask[13] = mask[14] = mask[15] = 0;
  testing::write_i64_inputs(
      dir, Shape{kBatch, kSeq},
      {{"ids", {0, 5, 9, 1, 7, 7, 12, 29, 3, 4, 5, 28, 2, 1, 1, 1}}, {"mask", mask}});
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

const std::string kH100 = std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json";

TEST(EncoderMasksCli, OptimizedEndToEndAndMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("encoder_masks_cli");
  const fs::path model = write_model(dir, {}), out = dir / "optimized.onnx";

  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"equal", "not", "cumsum", "less", "or", "and", "where", "gather_elements"})
    EXPECT_NE(listing.find(std::string(" ") + op + " "), std::string::npos) << op;
  nlohmann::json j = testing::optimize_checked_for_h100(model, out, dir);
  EXPECT_GE(j["classic_rewrites"]["fuse_activation"].get<int>(), 1);

  write_inputs(dir / "in");
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(EncoderMasksCli, AComparisonOfBoolTensorsStaysOpaqueAndIsRefusedByName) {
  const fs::path dir = testing::temp_dir("encoder_masks_cli_bools");
  const fs::path model = write_model(dir, {1, true});
  testing::RunResult inspect = tso({"inspect", model.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("opaque:Equal"), std::string::npos) << inspect.out;
  write_inputs(dir / "in");
  testing::RunResult r =
      tso({"run", model.string(), "--iters", "1", "--inputs", (dir / "in").string()}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("node 'keep' (opaque) is the ONNX operator 'Equal'"), std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

TEST(EncoderMasksCli, ACumSumAxisPastTheRankIsAnErrorNamingTheNode) {
  const fs::path dir = testing::temp_dir("encoder_masks_cli_axis");
  const fs::path model = write_model(dir, {2, false}), out = dir / "optimized.onnx";
  testing::RunResult r =
      tso({"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device", kH100},
          dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("node 'counted' (CumSum)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("axis 2 is out of range for i32[2,8]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

// Outputs that are not f32: the position ids (i64) and the mask (bool) come
// back in their own element types from both runtimes, equal to ONNX
// Runtime's, and `tso run` prints their values, not their bytes read as f32.
// Without --inputs, it feeds seeded 0s and 1s to the integer inputs.
TEST(EncoderMasksCli, IntegerAndBoolOutputsKeepTheirTypes) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("encoder_masks_cli_outputs");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("positions");
  declare(g->add_input(), "ids", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_input(), "mask", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_output(), "positions", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_output(), "real", onnx::TensorProto::BOOL, {kBatch, kSeq});
  add_int_initializer(g, "pad", onnx::TensorProto::INT64, {}, {kPad});
  add_int_initializer(g, "axis", onnx::TensorProto::INT64, {}, {1});
  add_node(g, "Equal", {"ids", "pad"}, "is_pad");
  add_node(g, "Not", {"is_pad"}, "real");
  testing::set_int(add_node(g, "Cast", {"real"}, "counts"), "to", onnx::TensorProto::INT64);
  add_node(g, "CumSum", {"counts", "axis"}, "positions");
  const fs::path model = dir / "positions.onnx";
  std::ofstream(model, std::ios::binary) << m.SerializeAsString();
  write_inputs(dir / "in");
  std::string err;
  ASSERT_EQ(testing::run_oracle(
                {"ort", model.string(), (dir / "in").string(), (dir / "ort").string()}, &err),
            0)
      << err;
  for (const char* device : {"cpu", "reference"}) {
    const fs::path got = dir / device;
    testing::RunResult r = tso({"run", model.string(), "--device", device, "--iters", "1",
                                "--inputs", (dir / "in").string(), "--outputs", got.string()},
                               dir);
    ASSERT_EQ(r.exit_code, 0) << device << ": " << r.err;
    EXPECT_NE(r.out.find("positions  i64[2,8]  min 1  max 7"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("real  bool[2,8]  min 0  max 1"), std::string::npos) << r.out;
    for (int k = 0; k < 2; ++k) {
      const std::string file = "output_" + std::to_string(k) + ".pb";
      Expected<NamedTensor> want = read_tensor_file((dir / "ort" / file).string());
      Expected<NamedTensor> have = read_tensor_file((got / file).string());
      ASSERT_TRUE(want.ok() && have.ok()) << device << " " << file;
      EXPECT_EQ(have->value.type, want->value.type) << device << " " << file;
      EXPECT_EQ(have->value.bytes, want->value.bytes) << device << " " << file;
    }
  }
  // Without --inputs the integer inputs are seeded 0s and 1s (they were an
  // error): both runtimes compute the same outputs from them.
  for (const char* device : {"cpu", "reference"}) {
    testing::RunResult r =
        tso({"run", model.string(), "--device", device, "--iters", "1", "--seed", "3", "--outputs",
             (dir / (std::string("random_") + device)).string()},
            dir);
    ASSERT_EQ(r.exit_code, 0) << device << ": " << r.err;
  }
  for (int k = 0; k < 2; ++k) {
    const std::string file = "output_" + std::to_string(k) + ".pb";
    Expected<NamedTensor> cpu = read_tensor_file((dir / "random_cpu" / file).string());
    Expected<NamedTensor> ref = read_tensor_file((dir / "random_reference" / file).string());
    ASSERT_TRUE(cpu.ok() && ref.ok()) << file;
    EXPECT_EQ(cpu->value.bytes, ref->value.bytes) << file;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
