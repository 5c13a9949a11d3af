// The CPU profiler: one signature timed as a one-node graph, a model's
// distinct signatures counted and timed, the table it returns written and
// parsed back.
#include "runtime/cpu/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "core/signature.h"
#include "core/testing/stored_weights.h"
#include "core/text_format.h"
#include "runtime/common/revision.h"
#include "runtime/cpu/dnnl_util.h"

namespace tso::cpu {
namespace {

Graph parse(const char* text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

std::vector<TensorType> arg_types(const Graph& g, int i) {
  std::vector<TensorType> t;
  for (TensorRef a : g.node(i).args) t.push_back(g.type(a));
  return t;
}

int find_op(const Graph& g, Op op) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == op) return i;
  return -1;
}

const char* kModel = R"(graph m {
  input x: f32[1,8,10,10]
  weight w: f32[8,8,3,3]
  weight b: f32[8]
  %c = conv2d(x, w, b, pad=same)
  %r = relu(%c)
  %d = conv2d(%r, w, b, pad=same)
  %s = relu(%d)
  %f = flatten(%s, axis=1)
  output y = %f
})";

TEST(CpuProfiler, TimesAConvolution) {
  const Graph g = parse(kModel);
  const int conv = find_op(g, Op::Conv2d);
  ProfileOptions o;
  o.iters = 5;
  o.threads = 1;
  Expected<rt::CostEntry> e = profile_node(g.node(conv), arg_types(g, conv), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->signature, op_signature(g, conv));
  EXPECT_EQ(e->op, "conv2d");
  EXPECT_FALSE(e->kernel.empty());
  EXPECT_NE(e->kernel, "view");
  EXPECT_GT(e->median_ms, 0);
  EXPECT_GT(e->min_ms, 0);
  EXPECT_LE(e->min_ms, e->median_ms);
  EXPECT_EQ(e->samples, 5);
}

// An operator of an f16 model is timed as the widened plan runs it (on f32,
// widen_f16.h), keyed by its f16 signature: no conversion of its operands
// or result, which a model does only at its boundary.
TEST(CpuProfiler, AnF16OperatorIsTimedWithoutConversions) {
  const Graph g = parse(R"(graph h {
  input x: f16[1,8,10,10]
  weight w: f16[8,8,3,3]
  %c = conv2d(x, w, pad=same)
  %r = relu(%c)
  output y = %r
})");
  ProfileOptions o;
  o.iters = 3;
  o.threads = 1;
  for (Op op : {Op::Conv2d, Op::Relu}) {
    const int i = find_op(g, op);
    Expected<rt::CostEntry> e = profile_node(g.node(i), arg_types(g, i), o);
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->signature, op_signature(g, i));
    EXPECT_NE(e->signature.find("f16"), std::string::npos) << e->signature;
    EXPECT_EQ(e->kernel.find("cast"), std::string::npos) << e->kernel;
  }
  const int relu = find_op(g, Op::Relu);
  Expected<rt::CostEntry> post =
      profile_post_op(Op::Conv2d, g.node(relu), arg_types(g, relu), 0, o);
  ASSERT_TRUE(post.ok()) << post.error().message;
  EXPECT_EQ(post->kernel.find("not fused"), std::string::npos) << post->kernel;
}

// Data movement on a rank-4 tensor is timed in the layout convolutions write:
// a channel split, a view of a row-major tensor, copies its halves out of an
// NHWC one, and costs that copy. A reshape stays a view.
TEST(CpuProfiler, AChannelSplitIsTimedAsTheCopyItIsAfterAConvolution) {
  const Graph g = parse(R"(graph g {
  input x: f32[1,32,16,16]
  %a, %b = split(x, axis=1, sizes=[16,16])
  %r = reshape(x, shape=[1,32,256])
  output a = %a
  output b = %b
  output r = %r
})");
  ProfileOptions o;
  o.iters = 3;
  o.threads = 1;
  const int split = find_op(g, Op::Split);
  Expected<rt::CostEntry> e = profile_node(g.node(split), arg_types(g, split), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_NE(e->kernel.find("split"), std::string::npos) << e->kernel;
  EXPECT_GT(e->median_ms, 0);
  const int reshape = find_op(g, Op::Reshape);
  Expected<rt::CostEntry> v = profile_node(g.node(reshape), arg_types(g, reshape), o);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->kernel, "view");
  EXPECT_EQ(v->median_ms, 0);
}

// Past its time budget a plan is timed no more than 3 times: a batch-16
// convolution of seconds costs seconds to measure, not minutes.
TEST(CpuProfiler, ABudgetStopsTimingAfterThreeRuns) {
  const Graph g = parse(kModel);
  const int conv = find_op(g, Op::Conv2d);
  ProfileOptions o;
  o.iters = 40;
  o.threads = 1;
  o.budget_ms = 1e-6;
  Expected<rt::CostEntry> e = profile_node(g.node(conv), arg_types(g, conv), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->samples, 3);
  EXPECT_GT(e->min_ms, 0);
  o.budget_ms = 0;
  o.iters = 7;
  e = profile_node(g.node(conv), arg_types(g, conv), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->samples, 7);
}

TEST(CpuProfiler, ModelTableCountsSignaturesAndParses) {
  const Graph g = parse(kModel);
  ProfileOptions o;
  o.iters = 3;
  o.threads = 1;
  int calls = 0;
  o.progress = [&](int done, int total, const std::string&) {
    ++calls;
    EXPECT_EQ(total, 4);
    EXPECT_EQ(done, calls);
  };
  Expected<rt::CostTable> t = profile_model(g, "m.tso", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(calls, 4);
  // conv2d (x2), relu (x2) alone and as the convolutions' post-op, flatten.
  ASSERT_EQ(t->entries.size(), 4u);
  EXPECT_EQ(t->device, device_description(1));
  EXPECT_EQ(t->model, "m.tso");
  for (const rt::CostEntry& e : t->entries) {
    SCOPED_TRACE(e.signature);
    EXPECT_EQ(e.occurrences, e.op == "flatten" ? 1 : 2);
    if (e.op == "flatten") {
      EXPECT_EQ(e.kernel, "view");
      EXPECT_EQ(e.median_ms, 0);
    } else if (is_post_op_signature(e.signature)) {
      EXPECT_GE(e.median_ms, 0);  // a relu fused into a convolution can add nothing measurable
    } else {
      EXPECT_GT(e.median_ms, 0);
    }
  }
  Expected<rt::CostTable> back = rt::parse_cost_table(rt::cost_table_json(*t), "table");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->entries.size(), 4u);
  EXPECT_EQ(std::count_if(t->entries.begin(), t->entries.end(),
                          [](const rt::CostEntry& e) { return is_post_op_signature(e.signature); }),
            1);
  EXPECT_EQ(back->device, t->device);
}

// A quantized model's table: its convolution on its int8 kernel (without
// the pair step before it, timed apart), and the pair's dequantize_linear
// as what it adds to its quantize_linear's step.
TEST(CpuProfiler, AQuantizedModelsTableHasItsInt8KernelPairStepAndPairPostOp) {
  // Weights over the full i8 range, as quantizers write them by default.
  std::vector<double> full_range(32 * 16 * 9);
  for (size_t k = 0; k < full_range.size(); ++k) full_range[k] = static_cast<double>(k % 255) - 127;
  const Graph g = tso::testing::with_values(R"(graph q {
  input x: f32[1,16,14,14]
  weight s: f32[]
  weight z: u8[]
  weight w: i8[32,16,3,3]
  weight ws: f32[]
  weight wz: i8[]
  %q = quantize_linear(x, s, z, axis=0)
  %d = dequantize_linear(%q, s, z, axis=0)
  %wd = dequantize_linear(w, ws, wz, axis=0)
  %c = conv2d(%d, %wd, pad=same)
  %cq = quantize_linear(%c, s, z, axis=0)
  %cd = dequantize_linear(%cq, s, z, axis=0)
  output y = %cd
})",
      {{"s", {0.05}}, {"z", {0}}, {"ws", {0.01}}, {"wz", {0}}, {"w", full_range}});
  ProfileOptions o;
  o.iters = 3;
  o.threads = 1;
  Expected<rt::CostTable> t = profile_model(g, "q.tso", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  std::map<std::string, const rt::CostEntry*> by;
  for (const rt::CostEntry& e : t->entries) by[e.signature] = &e;
  const rt::CostEntry* conv = by["conv2d(u8[1,16,14,14],i8[32,16,3,3];pad=[1,1,1,1])"];
  ASSERT_NE(conv, nullptr);
  EXPECT_GT(conv->median_ms, 0);
  // The conv's result quantized again: a pair in the int8 kernel's post-ops.
  const rt::CostEntry* post = by["conv2d+dequantize_linear(u8[1,32,14,14],f32[],u8[];axis=0)"];
  if (int8_sums_exact()) {
    EXPECT_NE(conv->kernel.find("conv int8"), std::string::npos) << conv->kernel;
    ASSERT_NE(post, nullptr);
    EXPECT_NE(post->kernel.find("conv int8"), std::string::npos) << post->kernel;
    EXPECT_EQ(post->kernel.find("not fused"), std::string::npos) << post->kernel;
    EXPECT_EQ(by.count("quantize_linear(f32[1,32,14,14],f32[],u8[];axis=0)"), 0u);
  } else {
    // Where int8 sums saturate the conv by full-range weights runs in f32
    // on the dequantized levels, and the pair after it is no post-op of an
    // int8 kernel.
    EXPECT_EQ(conv->kernel.find("conv int8"), std::string::npos) << conv->kernel;
    EXPECT_EQ(post, nullptr) << post->kernel;
  }
  const rt::CostEntry* pair =
      by["quantize_linear+dequantize_linear(u8[1,16,14,14],f32[],u8[];axis=0)"];
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->kernel, "quantize and dequantize (own)");
  EXPECT_GE(pair->median_ms, 0);
  EXPECT_NE(by["quantize_linear(f32[1,16,14,14],f32[],u8[];axis=0)"], nullptr);
  EXPECT_EQ(by.count("conv2d(f32[1,16,14,14],f32[32,16,3,3];pad=[1,1,1,1])"), 0u);
  // Only a dequantize_linear runs in a quantize_linear's step.
  const Node relu = [] {
    Node n;
    n.op = Op::Relu;
    n.outs = {TensorType{DType::kF32, Shape{4, 4}}};
    return n;
  }();
  const std::vector<TensorType> in = {TensorType{DType::kF32, Shape{4, 4}}};
  Expected<rt::CostEntry> bad = profile_post_op(Op::QuantizeLinear, relu, in, 0, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("only a dequantize_linear"), std::string::npos);
}

TEST(CpuProfiler, PostOpCostsWhatItAddsToTheAnchor) {
  const Graph g = parse(kModel);
  const int relu = find_op(g, Op::Relu);
  ProfileOptions o;
  o.iters = 5;
  o.threads = 1;
  Expected<rt::CostEntry> e = profile_post_op(Op::Conv2d, g.node(relu), arg_types(g, relu), 0, o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->signature, "conv2d+" + op_signature(g, relu));
  EXPECT_EQ(e->op, "relu");
  EXPECT_EQ(e->kernel.rfind("not fused", 0), std::string::npos) << e->kernel;
  EXPECT_GE(e->median_ms, 0);
  // erf is no oneDNN post-op: it runs as its own step, and says so.
  Graph h = parse(R"(graph h {
    input x: f32[16,32]
    %e = erf(x)
    output y = %e
  })");
  const int erf = find_op(h, Op::Erf);
  Expected<rt::CostEntry> f = profile_post_op(Op::Matmul, h.node(erf), arg_types(h, erf), 0, o);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->kernel.rfind("not fused: ", 0), 0u) << f->kernel;
}

// A run of about 100 ms here (no Winograd for a dilated kernel).
const char* kLongConv = R"(graph big {
  input x: f32[1,256,112,112]
  weight w: f32[256,256,3,3]
  %c = conv2d(x, w, pad=[2,2,2,2], dilation=[2,2])
  output y = %c
})";

// Threads competing for the cores preempt the timed runs: the signature is
// not measured, rather than measured at many times its cost.
TEST(CpuProfiler, PreemptedRunsAreNoMeasurement) {
  const Graph g = parse(kLongConv);
  const int conv = find_op(g, Op::Conv2d);
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (unsigned i = 0; i < 4 * std::max(2u, std::thread::hardware_concurrency()); ++i)
    hogs.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  // A run takes about 100 ms here (no Winograd for a dilated kernel):
  // many time slices, so every run the hogs compete with is preempted.
  ProfileOptions o;
  o.iters = 4;
  o.warmup = 1;
  Expected<rt::CostEntry> e = profile_node(g.node(conv), arg_types(g, conv), o);
  stop = true;
  for (std::thread& t : hogs) t.join();
  ASSERT_FALSE(e.ok()) << "measured " << e->median_ms << " ms while the cores were busy";
  EXPECT_NE(e.error().message.find("the machine is busy"), std::string::npos) << e.error().message;
}

// On an idle machine a kernel thread takes a core for a moment about every
// 100 ms: a run that long is nearly always preempted once, and counting
// each such run as disturbed left every batch-16 convolution of CSRNet
// unmeasured ("80 of 80 timed runs were preempted"). The test runs alone
// (SERIAL).
TEST(CpuProfiler, LongRunsOnAnIdleMachineAreMeasured) {
  const Graph g = parse(kLongConv);
  const int conv = find_op(g, Op::Conv2d);
  ProfileOptions o;
  o.iters = 6;
  o.warmup = 1;
  Expected<rt::CostEntry> e = profile_node(g.node(conv), arg_types(g, conv), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_GE(e->samples, 3);
}

TEST(CpuProfiler, DeviceNamesMachineThreadsAndLibrary) {
  const std::string d = device_description(2);
  EXPECT_EQ(d.rfind("cpu: ", 0), 0u) << d;
  EXPECT_NE(d.find(", 2 threads, oneDNN "), std::string::npos) << d;
  // Costs measured with warm weights (before eviction), or by another
  // build of the kernels, are another device.
  EXPECT_TRUE(d.ends_with(std::string(", constants cold, runtime ") + runtime_revision())) << d;
  EXPECT_EQ(std::string(runtime_revision()).size(), 12u);
  // Every ISA oneDNN reports has a name, not its enum's number.
  EXPECT_EQ(d.find(", isa "), std::string::npos) << d;
}

TEST(CpuProfiler, OpaqueNodeIsAnError) {
  const Graph g = parse(R"(graph o {
  input x: f32[1,8]
  %o: f32[1,8] = opaque(x, op_type="LpNormalization")
  output y = %o
})");
  const int n = find_op(g, Op::Opaque);
  Expected<rt::CostEntry> e = profile_node(g.node(n), arg_types(g, n), {});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("LpNormalization"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace tso::cpu
