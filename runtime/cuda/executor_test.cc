// GPU test: every operator of core/ops.def (and the kernel variants the plan
// chooses between) on the CUDA executor against the reference executor, with
// TF32 off (relative error <= 1e-5) and on (<= 5e-3), the tolerance policy of
// core/ops.h. Skips, saying why, where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runtime/cuda/device.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/test_graphs.h"
#include "runtime/reference/executor.h"
#include "runtime/reference/runtime_cases.h"

namespace tso::cuda {
namespace {

constexpr uint64_t kSeed = 11;

using ref::testing::Case;
using ref::testing::kCases;

std::map<std::string, ref::Tensor<float>> feeds_for(const Graph& g) {
  std::map<std::string, ref::Tensor<float>> feeds;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    feeds[n.name] = ref::Tensor<float>(n.outs[0].shape, random_values(n.outs[0], n.name, kSeed));
  }
  return feeds;
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 1e-6;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(double(want[i])));
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
  }
  return diff / scale;
}

void compare(const Case& c, bool tf32) {
  SCOPED_TRACE(std::string(c.name) + (tf32 ? " (TF32 on)" : " (TF32 off)"));
  Graph g = testing::parse(c.text);
  auto feeds = feeds_for(g);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feeds);
  ASSERT_TRUE(want.ok()) << want.error().message;
  ExecutorOptions o;
  o.tf32 = tf32;
  o.sources.random_seed = kSeed;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  for (int i : g.input_nodes())
    if (g.node(i).op == Op::Input) {
      const std::string& name = g.node(i).name;
      Status s = (*ex)->set_input(name, std::span<const float>(feeds[name].data));
      ASSERT_TRUE(s.ok()) << s.error().message;
    }
  for (int rep = 0; rep < 2; ++rep) {  // the second run replays the captured graph
    Status s = (*ex)->run();
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (size_t o2 = 0; o2 < g.outputs().size(); ++o2) {
      Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(o2));
      ASSERT_TRUE(got.ok()) << got.error().message;
      ASSERT_EQ(got->size(), (*want)[o2].data.size());
      const double err = relative_error(*got, (*want)[o2].data);
      EXPECT_LE(err, tf32 ? 5e-3 : 1e-5) << "output " << g.outputs()[o2].name << " run " << rep;
    }
  }
}

// Runs without a GPU: the cases parse, plan and evaluate on the reference,
// and together cover every operator the runtime executes (all but those it
// refuses, opaque and the operators without kernels: dispatch_test).
TEST(ExecutorCases, CoverEveryOperatorButSourcesAndOpaque) {
  std::set<Op> seen;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Graph g = testing::parse(c.text);
    for (const Node& n : g.nodes()) seen.insert(n.op);
    Expected<Plan> p = make_plan(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_TRUE(static_image(g, *p, {.random_seed = kSeed}).ok());
    Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feeds_for(g));
    ASSERT_TRUE(want.ok()) << want.error().message;
  }
  for (const OpInfo& info : all_ops()) {
    if (kernel_for(info.op) == Kernel::kUnsupported || info.op == Op::Input ||
        info.op == Op::Weight)
      continue;
    EXPECT_TRUE(seen.count(info.op)) << info.name << " has no GPU test case";
  }
}

class OnGpu : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    GpuStatus s = gpu_status();
    if (!s.usable) GTEST_SKIP() << describe(s);
  }
};

TEST_P(OnGpu, MatchesTheReferenceExecutor) {
  for (const Case& c : kCases) compare(c, GetParam());
}

TEST_P(OnGpu, OutOfMemoryIsAnError) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[1,1,1,1]
  %p = pad(x, pads=[0,0,0,0,0,0,200000,200000])
  %r = relu(%p)
  output y = %r
})");
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_FALSE(ex.ok()) << "160 GB arena";
  EXPECT_NE(ex.error().message.find("allocating the arena"), std::string::npos)
      << ex.error().message;
  EXPECT_NE(ex.error().message.find("cudaMalloc"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Tf32, OnGpu, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace tso::cuda
