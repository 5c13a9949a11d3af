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

namespace tso::cuda {
namespace {

constexpr uint64_t kSeed = 11;

struct Case {
  const char* name;
  const char* text;
};

// One graph per kernel variant; the comment says what it exercises.
const Case kCases[] = {
    {"conv_bias_relu_fused", R"(graph g {
  input x: f32[1,8,12,12]
  weight w: f32[16,8,3,3]
  weight b: f32[16]
  %c = conv2d(x, w, b, pad=same, act=relu)
  output y = %c
})"},
    {"conv_asymmetric_same_stride2_sigmoid", R"(graph g {
  input x: f32[2,3,9,9]
  weight w: f32[4,3,2,2]
  weight b: f32[4]
  %c = conv2d(x, w, b, stride=[2,2], pad=same, act=sigmoid)
  output y = %c
})"},
    {"conv_grouped_dilated_tanh", R"(graph g {
  input x: f32[1,8,10,10]
  weight w: f32[8,2,3,3]
  %c = conv2d(x, w, pad=[2,2,2,2], dilation=[2,2], groups=4, act=tanh)
  output y = %c
})"},
    {"conv_depthwise_bias", R"(graph g {
  input x: f32[1,16,7,7]
  weight w: f32[16,1,3,3]
  weight b: f32[16]
  %c = conv2d(x, w, b, pad=[1,0,1,2], groups=16)
  output y = %c
})"},
    {"matmul_batched_relu", R"(graph g {
  input a: f32[2,3,5,7]
  input b: f32[2,3,7,4]
  %m = matmul(a, b, act=relu)
  output y = %m
})"},
    {"matmul_folded_rows", R"(graph g {
  input a: f32[2,6,8]
  weight b: f32[8,5]
  %m = matmul(a, b)
  output y = %m
})"},
    {"matmul_cross_broadcast", R"(graph g {
  input a: f32[2,1,3,4]
  input b: f32[1,5,4,6]
  input v: f32[6,2]
  %m = matmul(a, b)
  %n = matmul(%m, v)
  output y = %n
})"},
    {"gemm_bias_epilogue", R"(graph g {
  input a: f32[3,16]
  weight b: f32[10,16]
  weight c: f32[10]
  %g = gemm(a, b, c, trans_b=1, act=relu)
  output y = %g
})"},
    {"gemm_general_c", R"(graph g {
  input a: f32[16,3]
  input b: f32[16,10]
  input c: f32[3,1]
  %g = gemm(a, b, c, alpha=0.5, beta=2, trans_a=1, act=tanh)
  output y = %g
})"},
    {"elementwise_broadcasting", R"(graph g {
  input x: f32[2,3,4]
  input z: f32[3,1]
  input s: f32[]
  %a = add(x, z)
  %m = mul(%a, z)
  %b = sub(%m, x)
  %d = div(%b, %a)
  %e = smul(%d, s)
  output y = %e
})"},
    {"unary_chain", R"(graph g {
  input x: f32[4,33]
  %r = relu(x)
  %s = sigmoid(x)
  %t = tanh(%s)
  %e = erf(%t)
  %g = gelu(x)
  %n = neg(%g)
  %c = clip(%n, min=-0.2, max=0.3)
  %x = exp(%c)
  %q = sqrt(%x)
  %p = pow(%q, %s)
  %o = add(%p, %r)
  %f = add(%o, %e)
  output y = %f
})"},
    {"nan_guard_broadcasting", R"(graph g {
  input x: f32[2,3,4]
  input z: f32[3,1]
  weight zero: f32[1]
  %d = sub(x, z)
  %s = sqrt(%d)
  %n = isnan(%s)
  %w = where(%n, zero, %s)
  %q = sqrt(z)
  %m = isnan(%q)
  %v = where(%m, x, %w)
  output y = %v
})"},
    {"normalizations", R"(graph g {
  input x: f32[2,4,3,3]
  input h: f32[2,5,24]
  weight bs: f32[4]
  weight bb: f32[4]
  weight bm: f32[4]
  weight bv: f32[4]
  weight ls: f32[24]
  weight lb: f32[1]
  %b = batchnorm(x, bs, bb, bm, bv, epsilon=0.001)
  %s = softmax(%b, axis=1)
  %l = layernorm(h, ls, lb, axis=-1)
  %t = softmax(%l, axis=-1)
  output y = %s
  output z = %t
})"},
    {"reductions_and_pools", R"(graph g {
  input x: f32[1,3,11,11]
  %r = reduce_mean(x, axes=[1,3], keepdims=0)
  %a = avgpool(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1], ceil_mode=1)
  %i = avgpool(x, kernel=[2,2], stride=[2,2], pad=same, count_include_pad=1)
  %m = maxpool(x, kernel=[3,3], stride=[2,2], pad=same)
  %g = global_avgpool(x)
  output y = %r
  output a = %a
  output i = %i
  output m = %m
  output g = %g
})"},
    {"movement", R"(graph g {
  input x: f32[1,4,6,5]
  weight w: f32[3,4,1,3]
  %t = transpose(x, perm=[0,3,1,2])
  %s = slice(x, starts=[5,1], ends=[0,4], axes=[2,3], steps=[-2,1])
  %p = pad(x, pads=[0,1,2,0,0,0,1,3], value=0.5)
  %z = pad(x, pads=[0,0,1,1,0,0,1,1])
  %e = enlarge(w, kernel=[3,5])
  %r = reshape(%t, shape=[5,24])
  %f = flatten(%p, axis=2)
  %q = squeeze(x, axes=[0])
  %u = unsqueeze(%q, axes=[1])
  output t = %r
  output s = %s
  output p = %f
  output z = %z
  output e = %e
  output u = %u
})"},
    {"split_and_concat_views_and_copies", R"(graph g {
  input x: f32[1,6,4]
  input v: f32[2,3]
  %r = relu(x)
  %a, %b = split(%r, axis=1, sizes=[2,4])
  %c, %d = split(v, axis=1, sizes=[1,2])
  %s = sigmoid(%a)
  %t = tanh(%b)
  %k = concat(%t, %s, x, %s, axis=1)
  %m = concat(%d, %c, axis=1)
  output y = %k
  output z = %m
})"},
    {"constants", R"(graph g {
  input x: f32[2,2,5,5]
  input m: f32[3,3]
  %e = const_eye_conv(shape=[2,2,3,3])
  %c = conv2d(x, %e, pad=same)
  %p = const_pool(shape=[2,1,3,3])
  %q = conv2d(x, %p, groups=2)
  %i = const_eye(shape=[3,3])
  %o = const_ones(shape=[3,3])
  %j = add(%i, %o)
  %n = matmul(m, %j)
  output c = %c
  output q = %q
  output n = %n
})"},
};

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
// and together cover every operator the runtime executes.
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
    if (info.op == Op::Opaque || info.op == Op::Input || info.op == Op::Weight) continue;
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
