// Cost models: the analytic roofline against the shipped H100 description,
// views and weight-only nodes free, the measured table with its fallback.
#include <gtest/gtest.h>

#include <map>

#include "core/signature.h"
#include "core/testing/stored_weights.h"
#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/measured_cost.h"
#include "optimizer/test_graphs.h"

namespace tso::opt {
namespace {

using testing::parse;

Device test_device() {
  Expected<Device> d = parse_device(R"({"format": "tso-device", "name": "toy",
    "matmul_tflops": 1e-6, "vector_tflops": 1e-6, "memory_gb_per_s": 1e-3, "kernel_launch_us": 5})",
                                    "toy.json");
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : Device{};
}

const char* kGraph = R"(graph g {
  input x: f32[1,2,4,4]
  weight w: f32[3,2,1,1]
  weight v: f32[3,2,1,1]
  %c = concat(w, v, axis=0)
  %a = conv2d(x, %c)
  %b = relu(%a)
  %s, %t = split(%b, axis=1, sizes=[3,3])
  %r = reshape(%s, shape=[3,16])
  output r = %r
  output t = %t
})";

TEST(AnalyticCost, RooflinePerKernelWithViewsAndWeightsFree) {
  Graph g = parse(kGraph);
  GraphIndex gi(g);
  AnalyticCost m(test_device());
  // toy device: 1 MFLOP/s and 1 MB/s, so 1 FLOP = 1 us and 1 byte = 1 us.
  // conv: 2*96*2 = 384 FLOPs; bytes 128 + 48 + 384 = 560: memory-bound.
  // relu: 96 FLOPs, 768 bytes. concat: weight-only, free. split, reshape: views.
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 3), 0);  // concat of weights
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 4), 5 + 560);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 5), 5 + 768);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 6), 0);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 7), 0);
  EXPECT_DOUBLE_EQ(graph_cost(g, gi, m), 5 + 560 + 5 + 768);
}

// A correction's write costs its patch twice (read, written in place), plus
// the launch: never the base, never nothing.
TEST(AnalyticCost, UpdateSliceMovesItsPatchTwice) {
  Graph g = parse(R"(graph g {
  input x: f32[1,8,16,16]
  input p: f32[1,8,2,16]
  %r = relu(x)
  %u = update_slice(%r, p, starts=[0,0,14,0])
  output y = %u
})");
  GraphIndex gi(g);
  AnalyticCost m(test_device());
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 3), 5 + 2 * 256 * 4);
}

// An embedding lookup reads the rows it copies, not the whole table: its
// indices (8 bytes each) and its output's bytes twice, plus the launch.
TEST(AnalyticCost, GatherMovesItsRowsNotItsTable) {
  Graph g = parse(R"(graph g {
  input ids: i64[1,4]
  weight table: f32[1000,16]
  %e = gather(table, ids, axis=0)
  output y = %e
})");
  GraphIndex gi(g);
  AnalyticCost m(test_device());
  EXPECT_DOUBLE_EQ(node_cost(g, gi, m, 2), 5 + 4 * 8 + 2 * 64 * 4);
}

TEST(AnalyticCost, ShippedH100DescriptionLoads) {
  Expected<Device> d = load_device("optimizer/devices/h100.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_NE(d->name.find("H100"), std::string::npos);
  EXPECT_GT(d->matmul_flops, d->vector_flops);
  EXPECT_GT(d->launch_us, 0);
}

TEST(AnalyticCost, BadDescriptionsAreErrorsNamingTheFile) {
  Expected<Device> a = parse_device("{", "d.json");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "d.json: not valid JSON");
  Expected<Device> b = parse_device(R"({"format": "tso-device", "name": "x"})", "d.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("d.json: malformed device description"), std::string::npos);
  Expected<Device> c = load_device("/nonexistent/d.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "/nonexistent/d.json: cannot open");
}

TEST(MeasuredCost, ReadsTheTableAndFallsBackForMissingEntries) {
  Graph g = parse(kGraph);
  GraphIndex gi(g);
  AnalyticCost fallback(test_device());
  Expected<MeasuredCost> m = MeasuredCost::parse(R"json({"format": "tso-cost-table", "version": 1,
    "device": "toy GPU", "tf32": true, "model": "g",
    "entries": [{"signature": "relu(f32[1,6,4,4])", "op": "relu", "kernel": "unary",
                 "median_ms": 0.002, "min_ms": 0.001, "samples": 10, "occurrences": 1}]})json",
                                                 "t.json", &fallback);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->entries(), 1);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 5), 2.0);      // measured: 0.002 ms, the median
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 4), 5 + 560);  // conv: from the fallback
  EXPECT_EQ(m->hits(), 1);
  EXPECT_EQ(m->misses(), 1);
  EXPECT_NE(m->describe().find("t.json"), std::string::npos);
}

// In a quantized model, a convolution of a pair's output and of dequantized
// i8 weights costs its int8 kernel, the pair's dequantize_linear what it
// adds to its quantize_linear's step, and the weights' one nothing.
// An int8 kernel costs its input's quantization and its kernel; the pair
// before it runs no step where int8 kernels alone read it, and costs its
// quantize_linear and what its dequantize_linear adds where a graph output
// (or an f32 operator) reads it too.
TEST(MeasuredCost, AQuantizedModelCostsItsInt8KernelsAndPairSteps) {
  const char* text = R"(graph q {
  input x: f32[1,8,10,10]
  weight s: f32[]
  weight z: u8[]
  weight w: i8[16,8,1,1]
  weight ws: f32[]
  weight wz: i8[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %wd = dequantize_linear(w, ws, wz, axis=0)
  %c = conv2d(%d, %wd)
  output y = %c
)";
  const std::map<std::string, std::vector<double>> values = {
      {"s", {0.05}}, {"z", {0}}, {"ws", {0.01}}, {"wz", {0}}};
  const Graph g = tso::testing::with_values(std::string(text) + "}", values);
  const Graph shown = tso::testing::with_values(std::string(text) + "  output d = %d\n}", values);
  Expected<MeasuredCost> m = MeasuredCost::parse(R"json({"format": "tso-cost-table", "version": 1,
    "device": "toy CPU", "tf32": false, "model": "q",
    "entries": [
      {"signature": "conv2d(u8[1,8,10,10],i8[16,8,1,1])", "op": "conv2d", "kernel": "conv int8",
       "median_ms": 0.003, "min_ms": 0.003, "samples": 5, "occurrences": 1},
      {"signature": "conv2d(f32[1,8,10,10],f32[16,8,1,1])", "op": "conv2d", "kernel": "conv",
       "median_ms": 0.009, "min_ms": 0.009, "samples": 5, "occurrences": 1},
      {"signature": "quantize_linear(f32[1,8,10,10],f32[],u8[];axis=0)", "op": "quantize_linear",
       "kernel": "quantize_linear (own)", "median_ms": 0.002, "min_ms": 0.002, "samples": 5,
       "occurrences": 1},
      {"signature": "quantize_linear+dequantize_linear(u8[1,8,10,10],f32[],u8[];axis=0)",
       "op": "dequantize_linear", "kernel": "quantize and dequantize (own)",
       "median_ms": 0.0005, "min_ms": 0.0005, "samples": 5, "occurrences": 1}]})json",
                                                 "t.json", nullptr);
  ASSERT_TRUE(m.ok()) << m.error().message;
  // Nodes in the order written: x, s, z, w, ws, wz, %q, %d, %wd, %c.
  EXPECT_EQ(g.node(9).op, Op::Conv2d);
  GraphIndex gi(g), si(shown);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 9), 3.0);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 6), 0);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 7), 0);
  EXPECT_DOUBLE_EQ(node_cost(g, gi, *m, 8), 0);
  EXPECT_DOUBLE_EQ(graph_cost(g, gi, *m), 3.0);
  EXPECT_DOUBLE_EQ(node_cost(shown, si, *m, 6), 2.0);
  EXPECT_DOUBLE_EQ(node_cost(shown, si, *m, 7), 0.5);
  EXPECT_DOUBLE_EQ(graph_cost(shown, si, *m), 5.5);
  EXPECT_EQ(m->misses(), 0);
}

// Pairs after an int8 kernel run in its post-ops (runtime/cpu/fusion.h):
// each costs what it adds there, at its dequantize_linear; its
// quantize_linear nothing. Behind a product by a tensor (NaN could reach
// it), the pair is a step again.
TEST(MeasuredCost, PairsAfterAnInt8KernelCostWhatTheyAddToIt) {
  const char* text = R"(graph q {
  input x: f32[1,8,10,10]
  weight s: f32[]
  weight z: u8[]
  weight w: i8[16,8,1,1]
  weight ws: f32[]
  weight wz: i8[]
  weight b: f32[1,16,1,1]
  input x2: f32[1,16,10,10]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %wd = dequantize_linear(w, ws, wz, axis=0)
  %c = conv2d(%d, %wd)
  %cq = quantize_linear(%c, s, z, axis=0)
  %cd = dequantize_linear(%cq, s, z, axis=0)
  %a = OTHER(%cd, B)
  %aq = quantize_linear(%a, s, z, axis=0)
  %ad = dequantize_linear(%aq, s, z, axis=0)
  output y = %ad
})";
  Expected<MeasuredCost> m = MeasuredCost::parse(R"json({"format": "tso-cost-table", "version": 1,
    "device": "toy CPU", "tf32": false, "model": "q",
    "entries": [
      {"signature": "conv2d(u8[1,8,10,10],i8[16,8,1,1])", "op": "conv2d", "kernel": "conv int8",
       "median_ms": 0.003, "min_ms": 0.003, "samples": 5, "occurrences": 1},
      {"signature": "conv2d+dequantize_linear(u8[1,16,10,10],f32[],u8[];axis=0)",
       "op": "dequantize_linear", "kernel": "conv int8", "median_ms": 0.0001, "min_ms": 0.0001,
       "samples": 5, "occurrences": 1},
      {"signature": "conv2d+add(f32[1,16,10,10],f32[1,16,1,1])", "op": "add",
       "kernel": "conv int8", "median_ms": 0.0002, "min_ms": 0.0002, "samples": 5,
       "occurrences": 1},
      {"signature": "conv2d+mul(f32[1,16,10,10],f32[1,16,10,10])", "op": "mul",
       "kernel": "conv int8", "median_ms": 0.0004, "min_ms": 0.0004, "samples": 5,
       "occurrences": 1},
      {"signature": "quantize_linear(f32[1,16,10,10],f32[],u8[];axis=0)", "op": "quantize_linear",
       "kernel": "quantize_linear (own)", "median_ms": 0.002, "min_ms": 0.002, "samples": 5,
       "occurrences": 1},
      {"signature": "quantize_linear+dequantize_linear(u8[1,16,10,10],f32[],u8[];axis=0)",
       "op": "dequantize_linear", "kernel": "quantize and dequantize (own)",
       "median_ms": 0.0005, "min_ms": 0.0005, "samples": 5, "occurrences": 1}]})json",
                                                 "t.json", nullptr);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const std::map<std::string, std::vector<double>> values = {
      {"s", {0.05}}, {"z", {0}}, {"ws", {0.01}}, {"wz", {0}}, {"b", std::vector<double>(16, 0.5)}};
  auto costs = [&](const std::string& other, const std::string& operand) {
    std::string t = text;
    t.replace(t.find("OTHER"), 5, other);
    t.replace(t.find("B)"), 1, operand);
    const Graph g = tso::testing::with_values(t, values);
    GraphIndex gi(g);
    // Nodes in the order written: x, s, z, w, ws, wz, b, x2, %q, %d, %wd,
    // %c, %cq, %cd, %a, %aq, %ad.
    std::vector<double> c;
    for (int i : {11, 12, 13, 14, 15, 16}) c.push_back(node_cost(g, gi, *m, i));
    return c;
  };
  EXPECT_EQ(costs("add", "b"), (std::vector<double>{3.0, 0, 0.1, 0.2, 0, 0.1}));
  EXPECT_EQ(costs("mul", "x2"), (std::vector<double>{3.0, 0, 0.1, 0.4, 2.0, 0.5}));
  EXPECT_EQ(m->misses(), 0);
}

// A transpose its matmul writes in the CPU runtime's plan costs nothing
// under a model that costs that plan (one with post-op entries); one of a
// result read twice, or moving the last axis, costs its entry.
TEST(MeasuredCost, ATransposeItsProductWritesCostsNothing) {
  const std::string entries = R"json(
      {"signature": "matmul(f32[1,4,8,8],f32[1,4,8,16])", "op": "matmul", "kernel": "brg",
       "median_ms": 0.003, "min_ms": 0.003, "samples": 5, "occurrences": 1},
      {"signature": "transpose(f32[1,4,8,16];perm=[0,2,1,3])", "op": "transpose",
       "kernel": "transpose (own)", "median_ms": 0.001, "min_ms": 0.001, "samples": 5,
       "occurrences": 1},
      {"signature": "transpose(f32[1,4,8,16];perm=[0,1,3,2])", "op": "transpose",
       "kernel": "transpose (own)", "median_ms": 0.002, "min_ms": 0.002, "samples": 5,
       "occurrences": 1})json";
  const std::string post_op = R"json(,
      {"signature": "matmul+relu(f32[1,4,8,16])", "op": "relu", "kernel": "brg",
       "median_ms": 0.0001, "min_ms": 0.0001, "samples": 5, "occurrences": 1})json";
  auto table = [&](bool fuses) {
    return MeasuredCost::parse(R"json({"format": "tso-cost-table", "version": 1,
      "device": "toy CPU", "tf32": false, "model": "t", "entries": [)json" +
                                   entries + (fuses ? post_op : "") + "]}",
                               "t.json", nullptr);
  };
  auto transpose_cost = [](const MeasuredCost& m, const std::string& perm, bool read_twice) {
    const Graph g = parse(R"(graph g {
  input p: f32[1,4,8,8]
  input v: f32[1,4,8,16]
  %m = matmul(p, v)
  %t = transpose(%m, perm=)" + perm + R"()
  output y = %t
)" + (read_twice ? "  output z = %m\n" : "") + "}");
    GraphIndex gi(g);
    return node_cost(g, gi, m, 3);
  };
  Expected<MeasuredCost> cpu = table(true);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  EXPECT_EQ(transpose_cost(*cpu, "[0,2,1,3]", false), 0);
  EXPECT_EQ(transpose_cost(*cpu, "[0,2,1,3]", true), 1.0);
  EXPECT_EQ(transpose_cost(*cpu, "[0,1,3,2]", false), 2.0);
  Expected<MeasuredCost> plain = table(false);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(transpose_cost(*plain, "[0,2,1,3]", false), 1.0);
  EXPECT_EQ(cpu->misses(), 0);
}

// So does a transpose that only matmuls read, each through its strides; one
// that an add reads too costs its entry.
TEST(MeasuredCost, ATransposeItsProductsReadInPlaceCostsNothing) {
  Expected<MeasuredCost> m = MeasuredCost::parse(R"json({"format": "tso-cost-table",
    "version": 1, "device": "toy CPU", "tf32": false, "model": "t", "entries": [
      {"signature": "transpose(f32[1,8,4,16];perm=[0,2,1,3])", "op": "transpose",
       "kernel": "transpose (own)", "median_ms": 0.001, "min_ms": 0.001, "samples": 5,
       "occurrences": 1},
      {"signature": "matmul+relu(f32[1,4,8,8])", "op": "relu", "kernel": "brg",
       "median_ms": 0.0001, "min_ms": 0.0001, "samples": 5, "occurrences": 1}]})json",
                                                 "t.json", nullptr);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto transpose_cost = [&](const std::string& other_reader) {
    const Graph g = parse(R"(graph g {
  input q: f32[1,8,4,16]
  input k: f32[1,4,16,8]
  %qt = transpose(q, perm=[0,2,1,3])
  %s = matmul(%qt, k)
)" + other_reader + "  output y = %s\n}");
    GraphIndex gi(g);
    return node_cost(g, gi, *m, 2);
  };
  EXPECT_EQ(transpose_cost(""), 0);
  EXPECT_EQ(transpose_cost("  %a = add(%qt, %qt)\n  output z = %a\n"), 1.0);
}

TEST(MeasuredCost, RemembersEachMissedSignatureOnce) {
  Graph g = parse(kGraph);
  GraphIndex gi(g);
  Expected<MeasuredCost> m = MeasuredCost::parse(R"json({"format": "tso-cost-table", "version": 1,
    "device": "toy GPU", "tf32": true, "model": "g",
    "entries": [{"signature": "relu(f32[1,6,4,4])", "op": "relu", "kernel": "unary",
                 "median_ms": 0.002, "min_ms": 0.001, "samples": 10, "occurrences": 1}]})json",
                                                 "t.json", nullptr);
  ASSERT_TRUE(m.ok()) << m.error().message;
  node_cost(g, gi, *m, 4);  // conv: missing
  node_cost(g, gi, *m, 5);  // relu: in the table
  node_cost(g, gi, *m, 4);
  node_cost(g, gi, *m, 6);  // split: missing
  EXPECT_EQ(m->misses(), 3);
  ASSERT_EQ(m->missed().size(), 2u);
  const SignatureNode& conv = m->missed()[0];
  EXPECT_EQ(conv.signature, op_signature(g, 4));
  EXPECT_EQ(conv.node.op, Op::Conv2d);
  EXPECT_TRUE(conv.node.args.empty());
  EXPECT_EQ(conv.inputs, (std::vector<TensorType>{g.type({0, 0}), g.type({3, 0})}));
  EXPECT_EQ(m->missed()[1].signature, op_signature(g, 6));
}

TEST(MeasuredCost, RejectsOtherFilesWithTheirName) {
  Expected<MeasuredCost> a = MeasuredCost::parse(R"({"format": "other"})", "t.json", nullptr);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "t.json: not a tso cost table (format is \"other\")");
  Expected<MeasuredCost> b =
      MeasuredCost::parse(R"({"format": "tso-cost-table", "version": 2})", "t.json", nullptr);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "t.json: cost table version 2 is not the supported 1");
}

}  // namespace
}  // namespace tso::opt
