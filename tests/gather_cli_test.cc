// Gather end to end through the binary (issue 16 points 4 and 7): a small
// encoder built here, an embedding lookup on i64 token ids fed at run time, a
// projection with a relu, an attention mask (i64, expanded and cast to f32)
// zeroing the masked tokens before a mean, ViT's class token (a constant
// index along the sequence axis) and a classifier. `tso optimize` imports it
// with no opaque node, fuses the relu into its product, checks the whole
// graph numerically (nothing cut) and writes a model whose outputs ONNX
// Runtime computes as it does the input's; `tso run` computes them on the
// CPU runtime and the reference executor. The close but wrong variants are
// refused: a class-token index one past the sequence at import, a token id
// one past the table when the CPU runtime runs it.
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

constexpr int64_t kBatch = 2, kSeq = 8, kVocab = 30, kHidden = 16, kClasses = 4;

using testing::add_node;
using testing::declare;

// ids: i64[2,8] -> Gather(table) -> MatMul(w1) -> Relu = act; mask: i64[2,8]
// -> Unsqueeze -> Expand to act's shape -> Cast to f32; y = MatMul(act[:,
// first] + mean over tokens of act * mask, w2): f32[2,4].
fs::path write_model(const fs::path& dir, int64_t first) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("tokens");
  declare(g->add_input(), "ids", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_input(), "mask", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {kBatch, kClasses});
  std::mt19937_64 rng(11);
  testing::add_random_floats(g, "table", {kVocab, kHidden}, rng);
  testing::add_random_floats(g, "w1", {kHidden, kHidden}, rng);
  testing::add_random_floats(g, "w2", {kHidden, kClasses}, rng);
  auto* index = g->add_initializer();
  index->set_name("first");
  index->set_data_type(onnx::TensorProto::INT64);
  index->add_int64_data(first);
  for (auto [name, dims] : {std::pair<const char*, std::vector<int64_t>>{"axis2", {2}},
                            {"wide", {kBatch, kSeq, kHidden}}}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(dims.size()));
    for (int64_t d : dims) t->add_int64_data(d);
  }
  add_node(g, "Gather", {"table", "ids"}, "embed");
  add_node(g, "MatMul", {"embed", "w1"}, "proj");
  add_node(g, "Relu", {"proj"}, "act");
  onnx::NodeProto* cls = add_node(g, "Gather", {"act", "first"}, "cls");
  onnx::AttributeProto* axis = cls->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  add_node(g, "Unsqueeze", {"mask", "axis2"}, "mask3");
  add_node(g, "Expand", {"mask3", "wide"}, "mask_wide");
  onnx::NodeProto* to = add_node(g, "Cast", {"mask_wide"}, "keep");
  onnx::AttributeProto* type = to->add_attribute();
  type->set_name("to");
  type->set_type(onnx::AttributeProto::INT);
  type->set_i(onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"act", "keep"}, "kept");
  onnx::NodeProto* mean = add_node(g, "ReduceMean", {"kept"}, "pooled");
  onnx::AttributeProto* axes = mean->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(1);
  onnx::AttributeProto* keep = mean->add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(0);
  add_node(g, "Add", {"cls", "pooled"}, "summary");
  add_node(g, "MatMul", {"summary", "w2"}, "y");
  const fs::path p = dir / ("tokens_" + std::to_string(first) + ".onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// input_0.pb: the token ids, negative ones (counted from the end) included;
// input_1.pb: the mask, the last three tokens of the second sequence masked.
void write_inputs(const fs::path& dir, const std::vector<int64_t>& ids) {
  std::vector<int64_t> mask(kBatch * kSeq, 1);
  mask[13] = mask[14] = mask[15] = 0;
  testing::write_i64_inputs(dir, Shape{kBatch, kSeq}, {{"ids", ids}, {"mask", mask}});
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

const std::vector<int64_t> kIds = {1, 29, -1, 0, 7, 7, 12, -30, 3, 4, 5, 28, -2, 9, 0, 16};

TEST(GatherCli, OptimizedEndToEndAndMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("gather_cli");
  const fs::path model = write_model(dir, 0), out = dir / "optimized.onnx";

  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("gather"), std::string::npos) << listing;
  nlohmann::json j = testing::optimize_checked_for_h100(model, out, dir);
  EXPECT_GE(j["classic_rewrites"]["fuse_activation"].get<int>(), 1);
  EXPECT_LT(j["operators"]["after"].get<int>(), j["operators"]["before"].get<int>());

  write_inputs(dir / "in", kIds);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(GatherCli, AClassTokenPastTheSequenceIsRefusedAtImport) {
  const fs::path dir = testing::temp_dir("gather_cli_index");
  const fs::path model = write_model(dir, kSeq), out = dir / "optimized.onnx";
  testing::RunResult r =
      tso({"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device",
           std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
          dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(model.string() + ": node 'cls' (Gather): has index 8 out of range for "
                                        "axis 1 of [2,8,16]"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST(GatherCli, ATokenIdPastTheTableIsAnErrorNamingTheNode) {
  const fs::path dir = testing::temp_dir("gather_cli_ids");
  const fs::path model = write_model(dir, 0);
  std::vector<int64_t> ids = kIds;
  ids[5] = kVocab;
  write_inputs(dir / "in", ids);
  testing::RunResult r =
      tso({"run", model.string(), "--iters", "1", "--inputs", (dir / "in").string()}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("node 'embed' (gather): gather: index 30 at position 5 is out of range "
                       "for axis 0 of f32[30,16]"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
