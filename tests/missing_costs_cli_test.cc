// `tso optimize --cost TABLE --missing-costs DIR` through the built binary:
// every signature the search asked for and the table lacked (the model's and
// the ones rewrites invent) is written as a one-operator ONNX model that
// imports back to a node of that signature, listed in DIR/index.json; a
// table holding them all leaves nothing missing; a signature that cannot be
// exported is listed with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/signature.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "optimizer/test_graphs.h"
#include "runtime/common/cost_table.h"
#include "tests/binary_run.h"

namespace {

namespace fs = std::filesystem;

using tso::testing::read_file;
using tso::testing::RunResult;

// Two convolutions of one input: the rules merge them into one convolution
// on concatenated weights, a signature the model does not have.
const char* kTwoConvs = R"(graph two_convs {
  input x: f32[1,4,8,8]
  weight w1: f32[8,4,1,1]
  weight b1: f32[8]
  weight w2: f32[8,4,1,1]
  weight b2: f32[8]
  %a = conv2d(x, w1, b1)
  %r = relu(%a)
  %b = conv2d(x, w2, b2)
  %s = relu(%b)
  %c = add(%r, %s)
  output y = %c
}
)";

class MissingCostsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tso_missing_costs_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // As ONNX: the text format carries no weight values, and folding the
    // merged convolution's concatenated weights needs them.
    model_ = path("two_convs.onnx");
    ASSERT_TRUE(tso::export_onnx(tso::opt::testing::with_weights(kTwoConvs, -1, 1), model_).ok());
    tso::rt::CostTable empty;
    empty.device = "test device";
    ASSERT_TRUE(tso::rt::write_cost_table(empty, table()).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult optimize(const std::string& model, const std::string& missing) {
    return tso::testing::run_binary(
        TSO_BINARY,
        {"optimize", model, "-o", path("out" + ext(model)), "--cost", table(), "--missing-costs",
         missing, "--no-verify-speed", "-q"},
        dir_);
  }

  static std::string ext(const std::string& model) { return fs::path(model).extension(); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string table() const { return path("costs.json"); }

  fs::path dir_;
  std::string model_;
};

nlohmann::json read_index(const std::string& dir) {
  nlohmann::json j = nlohmann::json::parse(read_file(fs::path(dir) / "index.json"), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << dir << "/index.json is not JSON";
  EXPECT_EQ(j.value("format", ""), "tso-signature-models");
  EXPECT_EQ(j.value("version", 0), 1);
  return j;
}

// The signatures of the operators (non-source nodes) of `g`.
std::set<std::string> signatures_of(const tso::Graph& g) {
  std::set<std::string> s;
  for (int i = 0; i < g.size(); ++i)
    if (!tso::is_source(g.node(i).op)) s.insert(tso::op_signature(g, i));
  return s;
}

TEST_F(MissingCostsCli, ListsTheModelsAndTheInventedSignaturesAsLoadableModels) {
  RunResult r = optimize(model_, path("missing"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json index = read_index(path("missing"));
  ASSERT_TRUE(index["models"].is_array());
  EXPECT_TRUE(index["not_exported"].empty()) << index["not_exported"].dump();

  std::set<std::string> listed;
  for (const nlohmann::json& m : index["models"]) {
    const std::string sig = m["signature"], file = m["file"];
    SCOPED_TRACE(sig);
    EXPECT_TRUE(listed.insert(sig).second) << "listed twice";
    tso::Expected<tso::ImportedModel> one = tso::import_onnx(path("missing/" + file));
    ASSERT_TRUE(one.ok()) << one.error().message;
    // The file computes the signature: its operator, followed by a second
    // node only where ONNX writes a fused activation as one.
    const tso::Graph& og = one->graph;
    std::vector<int> ops;
    for (int i = 0; i < og.size(); ++i)
      if (!tso::is_source(og.node(i).op)) ops.push_back(i);
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(std::string(tso::op_name(og.node(ops[0]).op)), m["op"]);
    if (ops.size() == 1)
      EXPECT_EQ(tso::op_signature(og, ops[0]), sig);
    else
      EXPECT_NE(sig.find("act="), std::string::npos) << ops.size() << " operators";
  }
  tso::Expected<tso::Graph> g = tso::parse_graph(kTwoConvs, "two_convs.tso");
  ASSERT_TRUE(g.ok()) << g.error().message;
  for (const std::string& sig : signatures_of(*g)) EXPECT_TRUE(listed.count(sig)) << sig;
  bool merged = false;  // a convolution with both convolutions' 16 output channels
  for (const std::string& sig : listed)
    merged |= sig.rfind("conv2d(f32[1,4,8,8],f32[16,4,1,1]", 0) == 0;
  EXPECT_TRUE(merged) << "no merged convolution among the listed signatures";
  EXPECT_NE(r.out.find("missing costs   " + std::to_string(listed.size()) + " signatures"),
            std::string::npos)
      << r.out;
}

TEST_F(MissingCostsCli, ATableWithEveryListedSignatureLeavesNothingMissing) {
  // Each round adds what the last one listed; the search may then ask for
  // new signatures, but the set it can reach is finite.
  int rounds = 0;
  for (; rounds < 6; ++rounds) {
    const std::string dir = path("round" + std::to_string(rounds));
    RunResult r = optimize(model_, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json index = read_index(dir);
    if (index["models"].empty()) break;
    tso::Expected<tso::rt::CostTable> t = tso::rt::read_cost_table(table());
    ASSERT_TRUE(t.ok()) << t.error().message;
    for (const nlohmann::json& m : index["models"]) {
      tso::rt::CostEntry e;
      e.signature = m["signature"];
      e.op = m["op"];
      e.kernel = "test";
      e.median_ms = e.min_ms = 0.001;
      t->entries.push_back(e);
    }
    ASSERT_TRUE(tso::rt::write_cost_table(*t, table()).ok());
  }
  EXPECT_GE(rounds, 1);
  EXPECT_LT(rounds, 6) << "still missing signatures after 6 rounds";
}

TEST_F(MissingCostsCli, ASignatureThatCannotBeExportedIsListedWithTheReason) {
  const std::string model = path("opaque.tso");
  std::ofstream(model) << R"(graph o {
  input x: f32[1,8]
  %r = relu(x)
  %o: f32[1,8] = opaque(%r, op_type="LpNormalization", payload="abc")
  output y = %o
}
)";
  RunResult r = optimize(model, path("missing"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json index = read_index(path("missing"));
  bool relu = false;
  for (const nlohmann::json& m : index["models"]) relu |= m["signature"] == "relu(f32[1,8])";
  EXPECT_TRUE(relu) << index.dump();
  ASSERT_EQ(index["not_exported"].size(), 1u) << index.dump();
  const nlohmann::json& f = index["not_exported"][0];
  EXPECT_EQ(f["op"], "opaque");
  EXPECT_NE(f["reason"].get<std::string>().find("corrupt payload"), std::string::npos) << f;
  EXPECT_NE(r.out.find("1 not exportable"), std::string::npos) << r.out;
}

// experiments/ort_costs.py end to end on the small model: it measures in
// ONNX Runtime every signature the search asks for, until a search finds
// nothing missing, writes a table tso reads, writes the faster model, and
// refuses its table under another device string.
TEST_F(MissingCostsCli, OrtCostsFillsTheTableTheSearchNeeds) {
  const std::string python = std::string(TSO_SOURCE_DIR) + "/.venv/bin/python";
  if (!fs::exists(python)) GTEST_SKIP() << "no .venv with onnxruntime (made by ./setup.sh)";
  const std::string script = std::string(TSO_SOURCE_DIR) + "/experiments/ort_costs.py";
  const std::string ort_table = path("ort.json");
  const std::vector<std::string> args = {script,      model_, "-o",     ort_table,
                                         "--threads", "1",    "--runs", "2",
                                         "--warmup",  "1",    "--tso",  TSO_BINARY};
  std::vector<std::string> with_check = args;
  with_check.insert(with_check.end(), {"--optimize", path("best.onnx"), "--check-rounds", "1"});
  RunResult r = tso::testing::run_binary(python, with_check, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the last search found nothing missing"), std::string::npos) << r.out;

  tso::Expected<tso::rt::CostTable> t = tso::rt::read_cost_table(ort_table);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->device.rfind("onnxruntime ", 0), 0u) << t->device;
  EXPECT_NE(t->device.find("CPUExecutionProvider"), std::string::npos) << t->device;
  EXPECT_NE(t->device.find(", 1 thread"), std::string::npos) << t->device;
  ASSERT_FALSE(t->entries.empty());
  for (const tso::rt::CostEntry& e : t->entries) {
    EXPECT_EQ(e.kernel.rfind("onnxruntime: ", 0), 0u) << e.signature << ": " << e.kernel;
    EXPECT_GE(e.median_ms, e.min_ms) << e.signature;
    EXPECT_EQ(e.samples, 2) << e.signature;
  }
  // The table holds what the search asks for: nothing is missing.
  RunResult again =
      tso::testing::run_binary(TSO_BINARY,
                               {"optimize", model_, "-o", path("again.onnx"), "--cost", ort_table,
                                "--missing-costs", path("again"), "--no-verify-speed", "-q"},
                               dir_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(read_index(path("again"))["models"].empty());
  // The model written is one of the two, and imports.
  EXPECT_NE(r.out.find("wrote      " + path("best.onnx")), std::string::npos) << r.out;
  EXPECT_TRUE(tso::import_onnx(path("best.onnx")).ok());

  // Another thread count is another device: refused, naming the table.
  std::vector<std::string> other = args;
  other[5] = "2";  // --threads
  r = tso::testing::run_binary(python, other, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(ort_table + ": measured under another device"), std::string::npos) << r.err;
  tso::Expected<tso::rt::CostTable> after = tso::rt::read_cost_table(ort_table);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->entries.size(), t->entries.size()) << "the refused table was changed";
}

TEST_F(MissingCostsCli, NeedsATable) {
  RunResult r = tso::testing::run_binary(
      TSO_BINARY, {"optimize", model_, "-o", path("out.onnx"), "--missing-costs", path("m"), "-q"},
      dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--missing-costs needs --cost TABLE"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("m")));
  EXPECT_FALSE(fs::exists(path("out.onnx")));
}

}  // namespace
