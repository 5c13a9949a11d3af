// f16 models end to end through the binary, as a model converted to half
// precision for a GPU arrives: f16 input, weights and output. tso's CPU
// runtime computes them in f32 and rounds the output (runtime/cpu/widen_f16.h),
// which is what ONNX Runtime's CPU provider computes: they agree to 1e-5, on
// the file tso optimize writes too. A mixed model that keeps f32 at its boundary
// (Casts to f16 after the input and back before the output, as converters
// write with keep_io_types) runs the same way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/half.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;
using testing::set_int;
using testing::set_ints;

// An f16 initializer of `dims`, uniform in [-0.5, 0.5).
void add_random_halves(onnx::GraphProto* g, const std::string& name,
                       const std::vector<int64_t>& dims, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT16);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  std::string bytes(static_cast<size_t>(n) * 2, '\0');
  for (int64_t k = 0; k < n; ++k) {
    const uint16_t h = float_to_half(u(rng));
    std::memcpy(bytes.data() + 2 * k, &h, 2);
  }
  t->set_raw_data(bytes);
}

// x -> Conv 3x3 (8 channels, bias) -> Relu -> MaxPool 2x2 -> Flatten ->
// Gemm (10, bias) -> Softmax = y: f16[1,10], all f16; `keep_io`: x and y
// f32, with a Cast to f16 after x and one to f32 before y.
fs::path write_model(const fs::path& dir, bool keep_io) {
  const int32_t io = keep_io ? onnx::TensorProto::FLOAT : onnx::TensorProto::FLOAT16;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("half");
  testing::declare(g->add_input(), "x", io, {1, 3, 8, 8});
  testing::declare(g->add_output(), "y", io, {1, 10});
  std::mt19937_64 rng(67);
  add_random_halves(g, "w", {8, 3, 3, 3}, rng);
  add_random_halves(g, "b", {8}, rng);
  add_random_halves(g, "w2", {10, 128}, rng);
  add_random_halves(g, "b2", {10}, rng);
  const char* x = keep_io ? "xh" : "x";
  if (keep_io)
    set_int(add_node(g, "to_half", "Cast", {"x"}, "xh"), "to", onnx::TensorProto::FLOAT16);
  set_ints(add_node(g, "conv", "Conv", {x, "w", "b"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "r");
  onnx::NodeProto* pool = add_node(g, "pool", "MaxPool", {"r"}, "p");
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  add_node(g, "Flatten", {"p"}, "f");
  set_int(add_node(g, "fc", "Gemm", {"f", "w2", "b2"}, "logits"), "transB", 1);
  set_int(add_node(g, "softmax", "Softmax", {"logits"}, keep_io ? "yh" : "y"), "axis", -1);
  if (keep_io)
    set_int(add_node(g, "to_float", "Cast", {"yh"}, "y"), "to", onnx::TensorProto::FLOAT);
  const fs::path p = dir / (keep_io ? "half_keep_io.onnx" : "half.onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

void expect_matches_onnx_runtime(bool keep_io) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir(keep_io ? "f16_cli_keep_io" : "f16_cli");
  const fs::path model = write_model(dir, keep_io), out = dir / "optimized.onnx";
  testing::inspect_without_opaque_nodes(model, dir);
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 8, 8}, 71,
                              keep_io ? DType::kF32 : DType::kF16);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  const std::vector<float> y = testing::output_of(dir / "tso_cpu", 0);
  ASSERT_EQ(y.size(), 10u);
  EXPECT_GT(*std::max_element(y.begin(), y.end()), 0.1f);  // a softmax, not zeros
  fs::remove_all(dir);
}

TEST(HalfCli, AnF16ModelMatchesOnnxRuntimeOnBothRuntimes) { expect_matches_onnx_runtime(false); }

TEST(HalfCli, AModelKeepingF32AtItsBoundaryMatchesOnnxRuntime) {
  expect_matches_onnx_runtime(true);
}

}  // namespace
}  // namespace tso
