// A model quantized to int8 in the QDQ format (a QuantizeLinear and a
// DequantizeLinear around every quantized activation, a DequantizeLinear on
// every weight and bias, as ONNX Runtime's quantizer writes it): imported
// with no opaque node, optimized, written back with its int8 weights, and
// run on both of tso's runtimes, against ONNX Runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

using testing::add_ints;
using testing::add_node;

constexpr float kOutputScale = 0.05f;

std::vector<int32_t> random_ints(std::mt19937_64& rng, int n, int lo, int hi) {
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = lo + static_cast<int>(rng() % (hi - lo + 1));
  return v;
}

// x -> Q/DQ (u8) -> conv (i8 weights per output channel, i32 bias) -> relu
// -> Q/DQ (u8) -> maxpool -> Q/DQ (u8) -> 1x1 conv (i8 weights per tensor)
// -> Q/DQ (i8, a zero point of -5) -> y; a QuantizeLinear without a zero
// point (u8) of the first convolution, dequantized, as output z; and a 1x1
// convolution of the same input and bias beside the first, its weights f32
// (a layer left unquantized; the search merges the two, as SqueezeNet's
// expand convolutions: two int8 kernels would each quantize the input
// themselves, and the merge would add the pair's step), Q/DQ, as output v.
fs::path write_qdq_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("qdq");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 12, 12});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 4, 6, 6});
  testing::declare(g->add_output(), "z", onnx::TensorProto::FLOAT, {1, 8, 12, 12});
  testing::declare(g->add_output(), "v", onnx::TensorProto::FLOAT, {1, 8, 12, 12});
  std::mt19937_64 rng(41);
  testing::add_scalar(g, "xs", 0.02f);
  add_ints(g, "xz", onnx::TensorProto::UINT8, {128});
  std::vector<float> ws;
  for (int k = 0; k < 8; ++k) ws.push_back(0.004f + 0.001f * k);
  std::vector<float> bs;
  for (float s : ws) bs.push_back(0.02f * s);
  add_ints(g, "w", onnx::TensorProto::INT8, random_ints(rng, 8 * 27, -90, 90), {8, 3, 3, 3});
  testing::add_f32s(g, "ws", ws);
  add_ints(g, "wz", onnx::TensorProto::INT8, std::vector<int32_t>(8, 0), {8});
  add_ints(g, "b", onnx::TensorProto::INT32, random_ints(rng, 8, -500, 500), {8});
  testing::add_f32s(g, "bs", bs);
  testing::add_scalar(g, "rs", kOutputScale);
  add_ints(g, "rz", onnx::TensorProto::UINT8, {0});
  add_ints(g, "w2", onnx::TensorProto::INT8, random_ints(rng, 32, -127, 127), {4, 8, 1, 1});
  testing::add_scalar(g, "w2s", 0.01f);
  add_ints(g, "w2z", onnx::TensorProto::INT8, {0});
  add_ints(g, "yz", onnx::TensorProto::INT8, {-5});
  std::vector<float> w3;
  for (int32_t q : random_ints(rng, 24, -127, 127)) w3.push_back(0.02f * static_cast<float>(q));
  testing::add_f32s(g, "w3d", w3);
  g->mutable_initializer(g->initializer_size() - 1)->clear_dims();
  for (int64_t d : {8, 3, 1, 1}) g->mutable_initializer(g->initializer_size() - 1)->add_dims(d);
  add_node(g, "QuantizeLinear", {"x", "xs", "xz"}, "xq");
  add_node(g, "DequantizeLinear", {"xq", "xs", "xz"}, "xd");
  testing::set_int(add_node(g, "DequantizeLinear", {"w", "ws", "wz"}, "wd"), "axis", 0);
  testing::set_int(add_node(g, "DequantizeLinear", {"b", "bs"}, "bd"), "axis", 0);
  testing::set_ints(add_node(g, "Conv", {"xd", "wd", "bd"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "r");
  add_node(g, "QuantizeLinear", {"r", "rs", "rz"}, "rq");
  add_node(g, "DequantizeLinear", {"rq", "rs", "rz"}, "rd");
  onnx::NodeProto* pool = add_node(g, "MaxPool", {"rd"}, "p");
  testing::set_ints(pool, "kernel_shape", {2, 2});
  testing::set_ints(pool, "strides", {2, 2});
  add_node(g, "QuantizeLinear", {"p", "rs", "rz"}, "pq");
  add_node(g, "DequantizeLinear", {"pq", "rs", "rz"}, "pd");
  add_node(g, "DequantizeLinear", {"w2", "w2s", "w2z"}, "w2d");
  add_node(g, "Conv", {"pd", "w2d"}, "c2");
  add_node(g, "QuantizeLinear", {"c2", "rs", "yz"}, "yq");
  add_node(g, "DequantizeLinear", {"yq", "rs", "yz"}, "y");
  add_node(g, "QuantizeLinear", {"c", "rs"}, "cq");
  add_node(g, "DequantizeLinear", {"cq", "rs"}, "z");
  add_node(g, "Conv", {"xd", "w3d", "bd"}, "c3");
  add_node(g, "QuantizeLinear", {"c3", "rs", "rz"}, "vq");
  add_node(g, "DequantizeLinear", {"vq", "rs", "rz"}, "v");
  const fs::path p = dir / "qdq.onnx";
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

TEST(QuantizedCli, AQdqModelKeepsItsInt8WeightsAndMatchesOnnxRuntimeToAQuantum) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("quantized_cli");
  const fs::path model = write_qdq_model(dir), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  for (const char* op : {"quantize_linear 6", "dequantize_linear 9"})
    EXPECT_NE(listing.find(op), std::string::npos) << op << " in " << listing;
  const nlohmann::json report = testing::optimize_checked_for_h100(model, out, dir);
  EXPECT_FALSE(report.at("rules_applied").empty()) << report.dump();
  // The written file keeps the weights int8 behind their DequantizeLinear
  // (the merged kernel, new, is f32).
  onnx::ModelProto written;
  std::ifstream in(out, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&in));
  int int8 = 0;
  for (const onnx::TensorProto& t : written.graph().initializer())
    int8 += t.data_type() == onnx::TensorProto::INT8 && t.dims_size() == 4;
  EXPECT_EQ(int8, 1);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 12, 12}, 43);
  // A sum that lands within rounding of a level's edge may quantize to
  // either side: every output within one quantum, and few off at all.
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 3, dir,
                                             /*tolerance=*/1.0);
  for (int k = 0; k < 3; ++k) {
    const std::vector<float> want = testing::output_of(dir / "ort_input", k);
    for (const char* got : {"ort_optimized", "tso_cpu", "tso_reference"}) {
      const std::vector<float> have = testing::output_of(dir / got, k);
      ASSERT_EQ(have.size(), want.size()) << got;
      int off = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        const float d = std::abs(have[i] - want[i]);
        EXPECT_LE(d, kOutputScale * 1.0001f) << got << ", output " << k << " at " << i;
        off += d > 0;
      }
      EXPECT_LE(off, static_cast<int>(want.size() / 50)) << got << ", output " << k;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
