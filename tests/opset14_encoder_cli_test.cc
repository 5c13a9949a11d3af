// An encoder layer's tail as torch.onnx writes it at opset 14 (its default
// before torch 2.1, and that of many transformers exports), end to end
// through the binary (issue 16 point 4): a biased projection, the GELU as
// its five erf nodes, a second projection, the residual add and the
// LayerNorm as nine nodes, since opset 14 has no LayerNormalization. `tso
// inspect` reads the nine nodes as one layernorm; `tso optimize` writes an
// opset-14 model, the layernorm as the nine nodes again, whose outputs ONNX Runtime computes as it
// does the input's and tso's runtimes compute too; the CPU runtime runs the layernorm as one step.
// Before, such a chain ran as nine steps, and a layernorm in a model below opset 17 (a GroupNorm's
// InstanceNormalization, timm_blocks_cli_test) made `tso optimize` fail at export.
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

using testing::add_node;

// x: f32[1,8,16] -> MatMul w1 + b1 -> GELU (erf) -> MatMul w2 + b2 -> + x
// -> LayerNorm over the last axis (ReduceMean, Sub, Pow, ReduceMean, Add,
// Sqrt, Div, Mul, Add) = y.
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  auto* g = m.mutable_graph();
  g->set_name("encoder_tail");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 8, 16});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 8, 16});
  std::mt19937_64 rng(23);
  testing::add_random_floats(g, "w1", {16, 32}, rng);
  testing::add_random_floats(g, "b1", {32}, rng);
  testing::add_random_floats(g, "w2", {32, 16}, rng);
  testing::add_random_floats(g, "b2", {16}, rng);
  testing::add_random_floats(g, "gamma", {16}, rng);
  testing::add_random_floats(g, "beta", {16}, rng);
  testing::add_scalar(g, "sqrt2", 1.4142135f);
  testing::add_scalar(g, "one", 1.0f);
  testing::add_scalar(g, "half", 0.5f);
  testing::add_scalar(g, "two", 2.0f);
  testing::add_scalar(g, "eps", 1e-12f);
  add_node(g, "MatMul", {"x", "w1"}, "p1");
  add_node(g, "Add", {"p1", "b1"}, "h");
  add_node(g, "Div", {"h", "sqrt2"}, "gd");
  add_node(g, "Erf", {"gd"}, "ge");
  add_node(g, "Add", {"ge", "one"}, "ga");
  add_node(g, "Mul", {"h", "ga"}, "gm");
  add_node(g, "Mul", {"gm", "half"}, "act");
  add_node(g, "MatMul", {"act", "w2"}, "p2");
  add_node(g, "Add", {"p2", "b2"}, "o");
  add_node(g, "Add", {"o", "x"}, "res");
  testing::set_ints(add_node(g, "ReduceMean", {"res"}, "mean"), "axes", {-1});
  add_node(g, "Sub", {"res", "mean"}, "d");
  add_node(g, "Pow", {"d", "two"}, "sq");
  testing::set_ints(add_node(g, "ReduceMean", {"sq"}, "var"), "axes", {-1});
  add_node(g, "Add", {"var", "eps"}, "ve");
  add_node(g, "Sqrt", {"ve"}, "dev");
  add_node(g, "Div", {"d", "dev"}, "normed");
  add_node(g, "Mul", {"normed", "gamma"}, "scaled");
  add_node(g, "Add", {"scaled", "beta"}, "y");
  const fs::path p = dir / "encoder_tail.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(Opset14EncoderCli, TheNineNodeLayerNormIsOneStepAndIsWrittenBackAtOpset14) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("opset14_encoder_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";

  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("layernorm"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("reduce_mean"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("sqrt"), std::string::npos) << listing;
  // The graph has nothing the shipped rules rewrite: tso optimize writes it
  // as it is, after checking nothing (the outputs are compared below).
  testing::RunResult opt = testing::run_binary(
      TSO_BINARY,
      {"optimize", model.string(), out.string(), "-q", "--no-verify-speed", "--device",
       std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
      dir);
  ASSERT_EQ(opt.exit_code, 0) << opt.err;

  onnx::ModelProto written;
  std::ifstream in(out, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&in));
  ASSERT_EQ(written.opset_import_size(), 1);
  EXPECT_EQ(written.opset_import(0).version(), 14);
  int pows = 0;
  for (const onnx::NodeProto& n : written.graph().node()) {
    EXPECT_NE(n.op_type(), "LayerNormalization");
    pows += n.op_type() == "Pow";
  }
  EXPECT_EQ(pows, 1);

  testing::write_random_input(dir / "in", "x", Shape{1, 8, 16}, 7);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);

  testing::RunResult run = testing::run_binary(
      TSO_BINARY, {"run", out.string(), "--iters", "1", "--profile", "1", "--seed", "1"}, dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("(layernorm)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("(reduce_mean)"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
