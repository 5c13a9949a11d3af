// Pooling at a computed position end to end through the binary: CLIP's text
// encoder picks each sequence's hidden state at its end-of-text token, the
// largest id, which torch.export writes as GatherND of [row, ArgMax(ids)]
// pairs built in forward. A small model built here pools so, gathers at
// index pairs fed at run time, and returns the ArgMin of its hidden states
// and of its token ids (the last of equal ones, integers as the ArgMax of
// -1 - id); tso imports it with no opaque node, optimizes it
// (checked), and computes what ONNX Runtime computes, on both runtimes and
// in ONNX Runtime on the file tso writes. The close but wrong case: an index
// pair whose second index is past its axis, though its flat position is
// inside the tensor, is an error naming the node, not some other row.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBatch = 2, kSeq = 8, kVocab = 30, kHidden = 16, kOut = 4;

using testing::add_node;
using testing::declare;
using testing::set_int;
using testing::set_ints;

// ids: i64[2,8] -> Gather(table) -> MatMul(w1) -> Relu = h: f32[2,8,16];
// y = MatMul(GatherND(h, Concat([0, 1], ArgMax(ids, -1))), w2): f32[2,4];
// p = GatherND(h, pos): f32[2,16] for pos: i64[2,2];
// m = Cast(ArgMin(h, axis 1, select_last_index), f32): f32[2,1,16];
// f = Cast(ArgMin(ids, axis 1, select_last_index), f32): f32[2,1].
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("pooled_token");
  declare(g->add_input(), "ids", onnx::TensorProto::INT64, {kBatch, kSeq});
  declare(g->add_input(), "pos", onnx::TensorProto::INT64, {kBatch, 2});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {kBatch, kOut});
  declare(g->add_output(), "p", onnx::TensorProto::FLOAT, {kBatch, kHidden});
  declare(g->add_output(), "m", onnx::TensorProto::FLOAT, {kBatch, 1, kHidden});
  declare(g->add_output(), "f", onnx::TensorProto::FLOAT, {kBatch, 1});
  std::mt19937_64 rng(61);
  testing::add_random_floats(g, "table", {kVocab, kHidden}, rng);
  testing::add_random_floats(g, "w1", {kHidden, kHidden}, rng);
  testing::add_random_floats(g, "w2", {kHidden, kOut}, rng);
  testing::add_i64s(g, "rows", {0, 1}, {kBatch, 1});
  testing::add_i64s(g, "last_axis", {1});
  add_node(g, "Gather", {"table", "ids"}, "embed");
  add_node(g, "MatMul", {"embed", "w1"}, "proj");
  add_node(g, "Relu", {"proj"}, "h");
  set_int(add_node(g, "eos", "ArgMax", {"ids"}, "eos"), "axis", -1);
  set_int(g->mutable_node(g->node_size() - 1), "keepdims", 0);
  add_node(g, "Unsqueeze", {"eos", "last_axis"}, "eos_column");
  set_int(add_node(g, "Concat", {"rows", "eos_column"}, "at"), "axis", 1);
  add_node(g, "GatherND", {"h", "at"}, "pooled");
  add_node(g, "MatMul", {"pooled", "w2"}, "y");
  add_node(g, "pick", "GatherND", {"h", "pos"}, "p");
  onnx::NodeProto* low = add_node(g, "ArgMin", {"h"}, "low");
  set_int(low, "axis", 1);
  set_int(low, "select_last_index", 1);
  set_int(add_node(g, "Cast", {"low"}, "m"), "to", onnx::TensorProto::FLOAT);
  onnx::NodeProto* rare = add_node(g, "rarest", "ArgMin", {"ids"}, "rare");
  set_int(rare, "axis", 1);
  set_int(rare, "select_last_index", 1);
  set_int(add_node(g, "Cast", {"rare"}, "f"), "to", onnx::TensorProto::FLOAT);
  const fs::path p = dir / "pooled_token.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// input_0.pb: token ids, the end-of-text token (29) at 5 and 7, and a tie in
// the hidden states' ArgMin from repeated ids; input_1.pb: index pairs.
void write_inputs(const fs::path& dir, const std::vector<int64_t>& pos) {
  const std::vector<int64_t> ids = {3, 3, 7, 1, 12, 29, 0, 0, 4, 4, 9, 2, 11, 5, 6, 29};
  testing::write_i64_inputs(dir,
                            {{"ids", Shape{kBatch, kSeq}, ids}, {"pos", Shape{kBatch, 2}, pos}});
}

TEST(PooledTokenCli, GatherNDAtComputedPositionsAndArgMinMatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("pooled_token_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"arg_max", "gather_elements", "neg"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << "\n" << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  write_inputs(dir / "in", {1, 6, 0, -8});  // a negative index counts from the end
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 4, dir);
  fs::remove_all(dir);
}

TEST(PooledTokenCli, AnIndexPastItsAxisIsAnErrorNamingTheNode) {
  const fs::path dir = testing::temp_dir("pooled_token_cli_range");
  const fs::path model = write_model(dir);
  write_inputs(dir / "in", {0, kSeq + 1, 1, 0});  // (0, 9): flat position 9 is row (1, 1)
  for (const char* device : {"cpu", "reference"}) {
    testing::RunResult r = testing::run_binary(
        TSO_BINARY,
        {"run", model.string(), "--device", device, "--iters", "1", "--inputs",
         (dir / "in").string()},
        dir);
    EXPECT_NE(r.exit_code, 0) << device;
    EXPECT_NE(r.err.find("node 'pick'"), std::string::npos) << device << ": " << r.err;
    EXPECT_NE(r.err.find("index 9"), std::string::npos) << device << ": " << r.err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
