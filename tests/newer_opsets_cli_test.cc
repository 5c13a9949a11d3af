// Opsets 19 to 28 end to end through the binary: what changed after opset 18
// for the operators tso maps or folds, on a model built here (IR version 14,
// as onnx's helper writes for opset 28): GroupNormalization's scale and bias
// per channel (opset 21; per group before), Gelu (opset 20) exact and
// tanh-approximated, RMSNormalization (opset 23), Swish (opset 24) and Mod of
// floats (folded here), truncated, or floored from opset 28 (which needed
// fmod = 1 before). At opsets 24 and 28 (ONNX Runtime 1.32 runs Swish at 24
// only, so the model at 28 has none), each imported with no opaque node,
// optimized (checked), and run by ONNX Runtime and by tso's CPU runtime and
// reference executor. The close but wrong variants: a GroupNormalization
// scale per group at opset 21 or later, a floored float Mod below opset 28
// and an opset past 28 are errors naming the node or the opset, as are Gelu,
// Swish and RMSNormalization attributes their schemas rule out.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;
using testing::set_float;
using testing::set_string;

struct Variant {
  int64_t opset = 28;
  int64_t group_norm_entries = 8;  // per channel from opset 21
  bool floored_mod = true;         // fmod = 0 of floats, from opset 28
};

// x: f32[1,4,6,6] -> Conv 3x3 (8 channels) -> GroupNormalization (2 groups)
// -> Gelu tanh -> Conv 1x1 -> Gelu -> Swish (alpha 1.5; up to opset 24) ->
// Transpose to channels last -> RMSNormalization over the channels ->
// + Mod(a, b) = y.
fs::path write_model(const fs::path& dir, const Variant& v) {
  onnx::ModelProto m;
  m.set_ir_version(14);
  m.add_opset_import()->set_version(v.opset);
  auto* g = m.mutable_graph();
  g->set_name("newer_opsets");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 6, 6});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 6, 6, 8});
  std::mt19937_64 rng(37);
  testing::add_random_floats(g, "w1", {8, 4, 3, 3}, rng);
  testing::add_random_floats(g, "w2", {8, 8, 1, 1}, rng);
  testing::add_random_floats(g, "gn_scale", {v.group_norm_entries}, rng);
  testing::add_random_floats(g, "gn_bias", {v.group_norm_entries}, rng);
  testing::add_random_floats(g, "rms_scale", {8}, rng);
  // Every sign of dividend and divisor, a zero dividend, an infinite divisor.
  testing::add_f32s(g, "a", {-3.5f, -1.0f, 2.5f, 7.0f, -0.0f, 0.0f, 5.5f, -2.0f});
  testing::add_f32s(g, "b", {2.0f, -3.0f, -2.0f, 2.5f, 3.0f, -3.0f, 1.5f, -INFINITY});
  testing::set_ints(add_node(g, "Conv", {"x", "w1"}, "c1"), "pads", {1, 1, 1, 1});
  testing::set_int(add_node(g, "gn", "GroupNormalization", {"c1", "gn_scale", "gn_bias"}, "n1"),
                   "num_groups", 2);
  set_string(add_node(g, "Gelu", {"n1"}, "a1"), "approximate", "tanh");
  add_node(g, "Conv", {"a1", "w2"}, "c2");
  add_node(g, "Gelu", {"c2"}, "a2");
  const char* gated = "a2";
  if (v.opset <= 24) set_float(add_node(g, "Swish", {"a2"}, gated = "a3"), "alpha", 1.5f);
  testing::set_ints(add_node(g, "Transpose", {gated}, "nhwc"), "perm", {0, 2, 3, 1});
  onnx::NodeProto* rms = add_node(g, "RMSNormalization", {"nhwc", "rms_scale"}, "r");
  set_float(rms, "epsilon", 1e-3f);
  testing::set_int(add_node(g, "mod", "Mod", {"a", "b"}, "offset"), "fmod", v.floored_mod ? 0 : 1);
  add_node(g, "Add", {"r", "offset"}, "y");
  const fs::path p = dir / ("newer_opsets_" + std::to_string(v.opset) + ".onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

TEST(NewerOpsetsCli, TheOperatorsThatChangedAfterOpset18MatchOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  for (const Variant& v : {Variant{24, 8, false}, Variant{28, 8, true}}) {
    SCOPED_TRACE("opset " + std::to_string(v.opset));
    const fs::path dir = testing::temp_dir("newer_opsets_cli_" + std::to_string(v.opset));
    const fs::path model = write_model(dir, v), out = dir / "optimized.onnx";
    const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
    for (const char* op : {"layernorm", "gelu", "tanh", "reduce_mean", "sqrt"})
      EXPECT_NE(listing.find(op), std::string::npos) << op << "\n" << listing;
    EXPECT_EQ(listing.find("sigmoid") != std::string::npos, v.opset <= 24) << listing;
    testing::optimize_checked_for_h100(model, out, dir);
    testing::write_random_input(dir / "in", "x", Shape{1, 4, 6, 6}, 41);
    testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
    fs::remove_all(dir);
  }
}

TEST(NewerOpsetsCli, CloseButWrongVariantsAreErrorsNamingTheNodeOrTheOpset) {
  const fs::path dir = testing::temp_dir("newer_opsets_cli_wrong");
  struct Case {
    Variant v;
    const char* message;
  };
  const Case cases[] = {
      {{21, 2, false}, "node 'gn' (GroupNormalization)"},
      {{21, 2, false}, "must have one entry per channel (8) at opset 21"},
      {{27, 8, true}, "node 'mod' (Mod)"},
      {{27, 8, true}, "floating-point Mod needs fmod = 1 below opset 28"},
      {{29, 8, true}, "opset 29 is not supported (supported: 1 to 28, below 11 upgraded"},
  };
  for (const Case& c : cases) {
    testing::RunResult r = tso({"inspect", write_model(dir, c.v).string()}, dir);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  fs::remove_all(dir);
}

// One node of `type` at opset 24 reading x: f32[2,8] (and scale: f32[8]
// when `scaled`), its attributes set by `attrs`.
fs::path write_one_node(const fs::path& dir, const std::string& type, bool scaled,
                        const std::function<void(onnx::NodeProto*)>& attrs) {
  onnx::ModelProto m;
  m.set_ir_version(12);
  m.add_opset_import()->set_version(24);
  auto* g = m.mutable_graph();
  g->set_name("one_node");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 8});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 8});
  onnx::NodeProto* n = add_node(g, "node", type, {"x"}, "y");
  if (scaled) {
    std::mt19937_64 rng(43);
    testing::add_random_floats(g, "scale", {8}, rng);
    n->add_input("scale");
  }
  attrs(n);
  const fs::path p = dir / (type + ".onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// Gelu, Swish and RMSNormalization with attributes their schemas rule out
// are errors naming the node.
TEST(NewerOpsetsCli, MalformedGeluSwishAndRmsNormalizationAreErrorsNamingTheNode) {
  const fs::path dir = testing::temp_dir("newer_opsets_cli_attrs");
  struct Case {
    std::string type;
    bool scaled;
    std::function<void(onnx::NodeProto*)> attrs;
    std::string message;
  };
  const Case cases[] = {
      {"Gelu", false, [](onnx::NodeProto* n) { set_string(n, "approximate", "fast"); },
       "has approximate 'fast' (none or tanh)"},
      {"Swish", false, [](onnx::NodeProto* n) { set_float(n, "alpha", INFINITY); }, "not finite"},
      {"RMSNormalization", true, [](onnx::NodeProto* n) { testing::set_int(n, "axis", 2); },
       "has axis 2 for f32[2,8]"},
      {"RMSNormalization", true, [](onnx::NodeProto* n) { set_float(n, "epsilon", -1.0f); },
       "it must be finite and >= 0"},
      {"RMSNormalization", false, [](onnx::NodeProto*) {}, "needs 2 inputs"},
  };
  for (const Case& c : cases) {
    testing::RunResult r =
        tso({"inspect", write_one_node(dir, c.type, c.scaled, c.attrs).string()}, dir);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_NE(r.err.find("node 'node' (" + c.type + ")"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
