// A model whose tail has shapes known only when it runs, as detection models
// end (torchvision's SSD, RetinaNet and R-CNNs: scores above a threshold
// picked by NonZero, control flow), end to end through the binary: `tso
// inspect` names the part kept as ONNX, `tso optimize` optimizes the rest
// (checked) and writes the part back, ONNX Runtime computes the same outputs
// on the file tso writes as on the original, and `tso run`, which cannot run
// the part, says so and names its first node.
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
using testing::run_binary;
using testing::RunResult;

// x: f32[1,3,16,16] -> Conv (W [8,3,3,3], bias, pads 1) -> Relu = features
// (an output) -> Conv (W [2,8,1,1]) -> Sigmoid -> Reshape [-1] = flat:
// f32[512] -> Greater(flat, 0.55) -> NonZero -> Transpose = [N,1] ->
// GatherND(flat, .) -> Mul(., gain) = picked: f32[N] (an output; gain a
// constant only the part reads); features -> ReduceMean = mean: f32[];
// picked -> ReduceSum = total -> Greater(total, 0) -> If: mean, else -1 =
// chosen: f32[] (an output; its branch reads mean from the graph).
fs::path write_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("detector");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 16, 16});
  onnx::ValueInfoProto* picked = g->add_output();
  picked->set_name("picked");
  picked->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  picked->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");
  testing::declare(g->add_output(), "features", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  testing::declare(g->add_output(), "chosen", onnx::TensorProto::FLOAT, {});
  std::mt19937_64 rng(7);
  testing::add_random_floats(g, "w1", {8, 3, 3, 3}, rng);
  testing::add_random_floats(g, "b1", {8}, rng);
  testing::add_random_floats(g, "w2", {2, 8, 1, 1}, rng);
  testing::add_i64s(g, "flat_shape", {-1});
  testing::add_scalar(g, "threshold", 0.55f);
  testing::add_scalar(g, "gain", 3.0f);
  testing::add_scalar(g, "zero", 0.0f);
  testing::set_ints(add_node(g, "Conv", {"x", "w1", "b1"}, "c1"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c1"}, "features");
  add_node(g, "Conv", {"features", "w2"}, "c2");
  add_node(g, "Sigmoid", {"c2"}, "s");
  add_node(g, "Reshape", {"s", "flat_shape"}, "flat");
  add_node(g, "Greater", {"flat", "threshold"}, "above");
  add_node(g, "where_above", "NonZero", {"above"}, "idx");
  add_node(g, "Transpose", {"idx"}, "idx_t");
  add_node(g, "GatherND", {"flat", "idx_t"}, "kept");
  add_node(g, "Mul", {"kept", "gain"}, "picked");
  testing::set_int(add_node(g, "ReduceMean", {"features"}, "mean"), "keepdims", 0);
  testing::set_int(add_node(g, "ReduceSum", {"picked"}, "total"), "keepdims", 0);
  add_node(g, "Greater", {"total", "zero"}, "any");
  onnx::NodeProto* branch = add_node(g, "choose", "If", {"any"}, "chosen");
  for (const char* which : {"then_branch", "else_branch"}) {
    onnx::GraphProto* body = testing::add_subgraph(branch, which);
    const std::string out = std::string(which) + "_out";
    if (which[0] == 't') {
      add_node(body, "Identity", {"mean"}, out);
    } else {
      onnx::NodeProto* c = add_node(body, "Constant", {}, out);
      onnx::AttributeProto* v = c->add_attribute();
      v->set_name("value");
      v->set_type(onnx::AttributeProto::TENSOR);
      v->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
      v->mutable_t()->add_float_data(-1.0f);
    }
    testing::declare(body->add_output(), out, onnx::TensorProto::FLOAT, {});
  }
  const fs::path p = dir / "detector.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(DynamicPartCli, TheStaticPartIsOptimizedAndThePartKeptAsOnnxComputesTheSame) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("dynamic_part_cli");
  const fs::path model = write_model(dir), out = dir / "optimized.onnx";

  RunResult inspect = run_binary(TSO_BINARY, {"inspect", model.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("dynamic part"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("7 from node 'where_above' (NonZero) on"), std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("3 graph outputs (above, flat, mean)"), std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.err.find("kept as ONNX"), std::string::npos) << inspect.err;

  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 16, 16}, 3);
  std::string err;
  for (const auto& [file, to] :
       {std::pair{model, dir / "ort_input"}, std::pair{out, dir / "ort_optimized"}})
    ASSERT_EQ(testing::run_oracle({"ort", file.string(), (dir / "in").string(), to.string()}, &err),
              0)
        << err;
  for (int k = 0; k < 3; ++k) {
    const std::vector<float> want = testing::output_of(dir / "ort_input", k);
    const std::vector<float> got = testing::output_of(dir / "ort_optimized", k);
    ASSERT_EQ(got.size(), want.size()) << "output " << k;
    EXPECT_LE(testing::relative_error(got, want), 1e-5) << "output " << k;
  }
  // Some scores pass the threshold: the If took its then branch.
  EXPECT_GT(testing::output_of(dir / "ort_input", 0).size(), 0u);
  EXPECT_GE(testing::output_of(dir / "ort_input", 2).at(0), 0.0f);

  for (const char* device : {"cpu", "reference"}) {
    RunResult run = run_binary(TSO_BINARY, {"run", out.string(), "--device", device}, dir);
    EXPECT_NE(run.exit_code, 0) << device;
    EXPECT_NE(run.err.find("node 'where_above' (NonZero) and the 6 nodes after it hold"),
              std::string::npos)
        << run.err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
