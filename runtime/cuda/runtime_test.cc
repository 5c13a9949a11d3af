// Host-side behaviour of the executor, runner and profiler entry points:
// what happens without a GPU, the one-node graphs the profiler times, and the
// report `tso run` prints. Passes with and without a GPU.
#include <cublas_api.h>
#include <cudnn_version.h>
#include <gtest/gtest.h>

#include "runtime/common/revision.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/profiler.h"
#include "runtime/cuda/run_model.h"
#include "runtime/cuda/test_graphs.h"

namespace tso::cuda {
namespace {

const char* kSmall = R"(graph g {
  input x: f32[1,3,8,8]
  weight w: f32[4,3,3,3]
  %c = conv2d(x, w, pad=same, act=relu)
  %s0, %s1 = split(%c, axis=1, sizes=[1,3])
  output y = %s1
})";

TEST(Executor, WithoutAGpuCreationSaysWhy) {
  GpuStatus s = gpu_status();
  if (s.usable) GTEST_SKIP() << "a GPU is visible: " << describe(s);
  Graph g = testing::parse(kSmall);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.error().message, describe(s));
  Expected<rt::CostTable> t = profile_graph(g, "m", {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, describe(s));
  Expected<RunReport> r = run_model(g, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("no usable GPU: ", 0), 0u) << r.error().message;
}

TEST(Executor, OpaqueNodesAreRejectedBeforeTouchingTheDevice) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[2]
  %o: f32[2] = opaque(x, op_type="NonMaxSuppression")
  output y = %o
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("'NonMaxSuppression'"), std::string::npos);
}

TEST(Profiler, SingleNodeGraphKeepsTheNodeAndItsTypes) {
  Graph g = testing::parse(kSmall);
  const int split = testing::node_named(g, "%s0");
  Expected<Graph> one = single_node_graph(g, split);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->num_operators(), 1);
  ASSERT_EQ(one->outputs().size(), 2u);
  EXPECT_EQ(one->type(one->outputs()[1].ref), (TensorType{DType::kF32, Shape{1, 3, 8, 8}}));
  const Node& in0 = one->node(one->input_nodes()[0]);
  EXPECT_EQ(in0.name, "in0");
  EXPECT_EQ(in0.outs[0], (TensorType{DType::kF32, Shape{1, 4, 8, 8}}));
  const int conv = testing::node_named(g, "%c");
  Expected<Graph> c = single_node_graph(g, conv);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->input_nodes().size(), 2u) << "the weight becomes an input";
}

// A cost table or cache measured with other libraries, or by another build
// of the kernels, is another device.
TEST(Profiler, DeviceNamesTheGpuItsLibrariesAndTheKernels) {
  GpuStatus s;
  s.usable = true;
  s.name = "Test GPU";
  s.total_memory = int64_t{80} << 30;
  s.compute_major = 9;
  s.runtime_version = 13000;
  s.driver_version = 12080;
  const std::string versions =
      std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
      std::to_string(CUDNN_PATCHLEVEL) + ", cuBLASLt " + std::to_string(CUBLAS_VER_MAJOR) + "." +
      std::to_string(CUBLAS_VER_MINOR) + "." + std::to_string(CUBLAS_VER_PATCH);
  EXPECT_EQ(device_description(s), "Test GPU, 80.0 GiB, sm_90, CUDA 13.0, driver 12.8, cuDNN " +
                                       versions + ", runtime " + cuda::runtime_revision());
  s.driver_version = 0;
  EXPECT_NE(device_description(s).find(", driver none, "), std::string::npos);
}

TEST(RunReport, FormatsLatencyAndMemory) {
  RunReport r;
  r.device = "Test GPU, 80.0 GiB, sm_90";
  r.median_ms = 0.9126;
  r.min_ms = 0.9;
  r.max_ms = 1.25;
  r.iters = 200;
  r.tf32 = false;
  r.stats.static_bytes = 100 << 20;
  r.stats.arena_bytes = 12 << 20;
  r.stats.workspace_bytes = 1 << 20;
  r.stats.steps = 163;
  r.stats.views = 5;
  r.stats.conv_algorithms_measured = 53;
  EXPECT_EQ(format_run_report(r),
            "device       Test GPU, 80.0 GiB, sm_90\n"
            "latency      median 0.913 ms (min 0.900, max 1.250) over 200 replays, CUDA graph, "
            "TF32 off\n"
            "memory       peak 113.0 MiB: weights and inputs 100.0 MiB, arena 12.0 MiB, "
            "workspace 1.0 MiB\n"
            "plan         163 steps, 5 views, 53 convolution algorithms measured\n");
}

TEST(Median, OfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

}  // namespace
}  // namespace tso::cuda
