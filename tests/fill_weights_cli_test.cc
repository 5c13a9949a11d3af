// experiments/fill_weights.py and `tso run --random-weights` give a
// graph-only model the same weights, bit for bit: the experiments time and
// optimize the filled copy, and a user runs the graph-only file, and both
// must be one function. A small model built here uses each kind of weight
// the fill tells apart (a convolution's weight and bias, the four vectors of
// a BatchNormalization, a Gemm matrix read transposed, a LayerNormalization
// scale and bias, a MatMul matrix), every one external in a file that does
// not exist; the filled copy, run without --random-weights, and the
// graph-only model, run with it, write the same output bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;
using testing::declare;
using testing::set_int;
using testing::set_ints;

void add_missing(onnx::GraphProto* g, const std::string& name,
                 std::initializer_list<int64_t> dims) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = t->add_external_data();
  location->set_key("location");
  location->set_value("weights_not_shipped.bin");
}

// x: f32[1,3,6,6] -> Conv 3x3 (w, b) -> BatchNormalization -> Relu -> Flatten
// -> Gemm (g read transposed, c) -> LayerNormalization -> MatMul (m) -> y.
fs::path write_graph_only(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("graph_only");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 6, 6});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 5});
  add_missing(g, "w", {4, 3, 3, 3});
  add_missing(g, "b", {4});
  for (const char* v : {"scale", "shift", "mean", "var"}) add_missing(g, v, {4});
  add_missing(g, "g", {10, 144});
  add_missing(g, "c", {10});
  add_missing(g, "ln_scale", {10});
  add_missing(g, "ln_bias", {10});
  add_missing(g, "m", {10, 5});
  set_ints(add_node(g, "Conv", {"x", "w", "b"}, "conv"), "pads", {1, 1, 1, 1});
  add_node(g, "BatchNormalization", {"conv", "scale", "shift", "mean", "var"}, "bn");
  add_node(g, "Relu", {"bn"}, "act");
  add_node(g, "Flatten", {"act"}, "flat");
  set_int(add_node(g, "Gemm", {"flat", "g", "c"}, "fc"), "transB", 1);
  add_node(g, "LayerNormalization", {"fc", "ln_scale", "ln_bias"}, "ln");
  add_node(g, "MatMul", {"ln", "m"}, "y");
  const fs::path p = dir / "graph_only.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(FillWeightsCli, FilledCopyComputesWhatRandomWeightsGive) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("fill_weights_cli");
  const fs::path model = write_graph_only(dir), filled = dir / "filled.onnx";
  testing::RunResult fill =
      testing::run_binary(testing::venv_python(),
                          {std::string(TSO_SOURCE_DIR) + "/experiments/fill_weights.py",
                           model.string(), filled.string(), "--seed", "3"},
                          dir);
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  EXPECT_NE(fill.out.find("11 initializers filled (seed 3)"), std::string::npos) << fill.out;

  testing::write_random_input(dir / "in", "x", Shape{1, 3, 6, 6}, 2);
  const auto run = [&](const fs::path& file, std::vector<std::string> extra, const char* out) {
    std::vector<std::string> args = {
        "run",      file.string(),         "--device",  "reference",         "--iters", "1",
        "--inputs", (dir / "in").string(), "--outputs", (dir / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    testing::RunResult r = testing::run_binary(TSO_BINARY, args, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  run(model, {"--random-weights", "3"}, "graph_only");
  run(filled, {}, "filled");
  const std::vector<float> want = testing::output_of(dir / "graph_only", 0);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(testing::output_of(dir / "filled", 0), want);

  // Another seed is another function.
  run(model, {"--random-weights", "4"}, "other_seed");
  EXPECT_NE(testing::output_of(dir / "other_seed", 0), want);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
