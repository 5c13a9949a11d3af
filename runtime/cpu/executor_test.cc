// The CPU runtime against the reference executor: every operator, at shapes
// that exercise the layouts and paths the plan chooses between (channel
// counts not divisible by 8, odd sizes, strides, dilations, groups,
// asymmetric padding, broadcasting, post-op chains), fused and unfused,
// within the fp32 tolerance of core/ops.h (1e-4 relative).
#include "runtime/cpu/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "core/half.h"
#include "core/testing/peak_memory.h"
#include "core/testing/sanitizers.h"
#include "core/text_format.h"
#include "runtime/cpu/constant_store.h"
#include "runtime/cpu/executor_testing.h"
#include "runtime/cpu/vector_kernels.h"
#include "runtime/reference/executor.h"
#include "runtime/reference/runtime_cases.h"

namespace tso::cpu {
namespace {

using ref::testing::Case;

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 1e-6;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    diff = std::max(diff, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return diff / scale;
}

void expect_matches_reference(
    const Case& c, bool fuse, const std::map<std::string, float>& constants = {},
    ExecutorOptions::Choice alternatives = ExecutorOptions::Choice::kMeasured) {
  SCOPED_TRACE(std::string(c.name) + (fuse ? " (fused)" : " (unfused)") +
               (alternatives == ExecutorOptions::Choice::kAlways ? " (alternatives forced)" : ""));
  const Graph g = ref::testing::graph_with_weights(c.text, 3, constants);
  std::map<std::string, ref::Tensor<float>> feeds = ref::testing::random_feeds(g, 5);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feeds);
  ASSERT_TRUE(want.ok()) << want.error().message;
  ExecutorOptions o;
  o.fuse = fuse;
  o.winograd = alternatives;
  o.pointwise_product = alternatives;
  o.grouped = alternatives;
  o.row_product = alternatives;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  for (const auto& [name, t] : feeds) {
    Status s = (*ex)->set_input(name, std::span<const float>(t.data));
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  for (int rep = 0; rep < 2; ++rep) {
    Status s = (*ex)->run();
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(k));
      ASSERT_TRUE(got.ok()) << got.error().message;
      ASSERT_EQ(got->size(), (*want)[k].data.size());
      EXPECT_LE(relative_error(*got, (*want)[k].data), 1e-4)
          << "output " << g.outputs()[k].name << ", run " << rep;
    }
  }
}

// Whether the plan of `c` has a step whose implementation contains `what`
// and whose node list contains `nodes`.
bool runs_step(const Case& c, const ExecutorOptions& o, const std::string& what,
               const std::string& nodes) {
  const Graph g = ref::testing::graph_with_weights(c.text, 3);
  for (const StepTime& s : testing::profiled_steps(g, o))
    if (s.what.find(what) != std::string::npos && s.nodes.find(nodes) != std::string::npos)
      return true;
  return false;
}

TEST(CpuExecutor, MatchesTheReferenceOnEveryCase) {
  for (const Case& c : ref::testing::kCases) expect_matches_reference(c, true);
}

TEST(CpuExecutor, MatchesTheReferenceUnfused) {
  for (const Case& c : ref::testing::kCases) expect_matches_reference(c, false);
}

// Winograd for every 3x3 convolution, inner products for every 1x1 one and
// tso's own kernel for every product of one row by weights.
TEST(CpuExecutor, MatchesTheReferenceWithEveryAlternativeForced) {
  for (const Case& c : ref::testing::kCases)
    expect_matches_reference(c, true, {}, ExecutorOptions::Choice::kAlways);
}

// gather, expand, cast, and the comparisons, logic, cumsum and arg_max of token ids
// and masks, whose integer and bool tensors the float cases cannot feed (and
// the CUDA runtime, which shares the cases, does not run), have their own
// tests (gather_test.cc); so have the reductions the CUDA runtime lacks
// (ReductionsAfterBlockedConvolutions), grid_sample (gather_test.cc) and
// quantization, whose 8-bit tensors the cases cannot hold (quantize_test.cc).
TEST(CpuExecutor, CasesCoverEveryOperatorButOpaqueAndThoseOfTokenIdsAndMasks) {
  std::set<Op> seen;
  for (const Case& c : ref::testing::kCases) {
    const Graph g = ref::testing::graph_with_weights(c.text, 3);
    for (const Node& n : g.nodes()) seen.insert(n.op);
  }
  const std::set<Op> own_tests = {
      Op::Opaque, Op::Gather, Op::GatherElements, Op::Expand,    Op::Cast,
      Op::Equal,  Op::Less,   Op::Greater,        Op::Not,       Op::And,
      Op::Or,     Op::CumSum, Op::ReduceSum,      Op::ReduceMax, Op::ReduceL2, Op::ArgMax,
      Op::GridSample, Op::TopK,        Op::QuantizeLinear, Op::DequantizeLinear};
  for (const OpInfo& info : all_ops()) {
    if (own_tests.count(info.op)) continue;
    EXPECT_TRUE(seen.count(info.op)) << info.name << " has no case";
  }
}

// reduce_sum, reduce_max and reduce_l2 over inner, outer and all axes, kept
// or not, of a convolution's output (a blocked layout) and of a plain
// input; the L2 norm over an axis of one element is |x|, not x.
TEST(CpuExecutor, ReductionsAfterBlockedConvolutions) {
  const Case c{"reductions", R"(graph g {
  input x: f32[1,8,6,6]
  input h: f32[2,1,12]
  weight w: f32[16,8,3,3]
  %c = conv2d(x, w, pad=same)
  %s = reduce_sum(%c, axes=[2,3])
  %m = reduce_max(%c, axes=[1], keepdims=0)
  %n = reduce_l2(%c, axes=[1,2,3])
  %a = reduce_sum(h, axes=[], keepdims=0)
  %b = reduce_max(h, axes=[0,2])
  %o = reduce_l2(h, axes=[1])
  output s = %s
  output m = %m
  output n = %n
  output a = %a
  output b = %b
  output o = %o
})"};
  expect_matches_reference(c, true);
  expect_matches_reference(c, false);
}

// What real exports run that oneDNN would run on its reference kernels,
// element by element: a squeeze-excitation's mean and a max over the plane of
// a blocked convolution output (a pooling), a mask broadcast along a middle
// axis (Swin's), scalars added, subtracted from and multiplied
// (HardSwish's), an L2 norm over a last axis (Swin-V2's) and a sum over a
// middle one (selective kernels'). Each matches the reference executor, and
// no step is a reference kernel.
TEST(CpuExecutor, NoStepFallsBackToOneDnnsReferenceKernels) {
  const Case c{"reference fallbacks", R"(graph g {
  input x: f32[1,8,6,6]
  input a: f32[1,4,3,5,5]
  input q: f32[2,3,5,8]
  input k: f32[1,2,8,4,4]
  weight w: f32[16,8,3,3]
  weight m: f32[1,4,1,5,5]
  weight three: f32[]
  weight sixth: f32[]
  %c = conv2d(x, w, pad=same)
  %e = reduce_mean(%c, axes=[2,3])
  %p = reduce_max(%c, axes=[-2,-1], keepdims=0)
  %s = add(a, m)
  %h = add(%c, three)
  %g = mul(%h, sixth)
  %d = sub(three, %c)
  %n = reduce_l2(q, axes=[3])
  %b = reduce_sum(k, axes=[1])
  output e = %e
  output p = %p
  output s = %s
  output g = %g
  output d = %d
  output n = %n
  output b = %b
})"};
  expect_matches_reference(c, true);
  expect_matches_reference(c, false);
  const Graph g = ref::testing::graph_with_weights(c.text, 3);
  for (const StepTime& s : testing::profiled_steps(g, {}))
    EXPECT_EQ(s.what.find("ref:"), std::string::npos) << s.what << " " << s.nodes;
}

// A max over rows that are wholly -inf is -inf (an attention row whose every
// key is masked), over the last axis and over the plane of a convolution's
// output, not the -FLT_MAX oneDNN's max reduction and pooling start from.
TEST(CpuExecutor, AMaxOfRowsOfMinusInfinityIsMinusInfinity) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,2,3,4]
  weight w: f32[2,2,1,1]
  %r = reduce_max(x, axes=[3], keepdims=0)
  %c = conv2d(x, w)
  %p = reduce_max(%c, axes=[2,3])
  %q = reduce_max(x, axes=[1,3], keepdims=0)
  output r = %r
  output p = %p
  output q = %q
})",
                                                   3, {{"w", 1.0f}});
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(24, -inf);
  x[5] = 2.5f;  // one finite value in row 1; every sum of the two channels is -inf
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  ASSERT_TRUE((*ex)->set_input("x", std::span<const float>(x)).ok());
  ASSERT_TRUE((*ex)->run().ok());
  Expected<std::vector<float>> rows = (*ex)->output(0), planes = (*ex)->output(1),
                               apart = (*ex)->output(2);  // two runs of axes, chained
  ASSERT_TRUE(rows.ok() && planes.ok() && apart.ok());
  EXPECT_EQ(*rows, (std::vector<float>{-inf, 2.5f, -inf, -inf, -inf, -inf}));
  EXPECT_EQ(*planes, (std::vector<float>{-inf, -inf}));
  EXPECT_EQ(*apart, (std::vector<float>{-inf, 2.5f, -inf}));
}

TEST(CpuExecutor, FusesPostOpsAndKeepsBlockedLayoutsBetweenConvolutions) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,16,14,14]
  weight w1: f32[32,16,3,3]
  weight b1: f32[32]
  weight w2: f32[32,32,3,3]
  weight w3: f32[32,32,1,1]
  %c1 = conv2d(x, w1, b1, pad=same, act=relu)
  %c2 = conv2d(%c1, w2, pad=same)
  %a = add(%c2, %c1)
  %r = relu(%a)
  %c3 = conv2d(%r, w3)
  %k = clip(%c3, min=0, max=6)
  output y = %k
})",
                                                   3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  const ExecutorStats s = (*ex)->stats();
  EXPECT_EQ(s.fused_nodes, 3);  // add + relu into %c2, clip into %c3
  // One reorder in (the plain input) and one out (the plain output) at most.
  EXPECT_LE(s.reorders, 2);
  EXPECT_EQ(s.steps, 3 + s.reorders);
}

// Every node's FLOPs are charged to the one run step that computes it, fused
// or not: a convolution's step carries its post-ops', a layout change none,
// and a weight the prologue doubles is not charged to the run.
TEST(CpuExecutor, StepsCarryTheFlopsOfTheNodesTheyCompute) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,16,14,14]
  weight w1: f32[32,16,3,3]
  weight w2: f32[32,32,1,1]
  %w = add(w2, w2)
  %c1 = conv2d(x, w1, pad=same, act=relu)
  %c2 = conv2d(%c1, %w)
  %a = add(%c2, %c1)
  %s = softmax(%a, axis=1)
  output y = %s
})",
                                                   3);
  int64_t run_flops = 0;
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name != "%w") run_flops += node_flops(g, i);
  ASSERT_GT(run_flops, 2 * 14 * 14 * 32 * 16 * 9);
  for (bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fused" : "unfused");
    ExecutorOptions o;
    o.fuse = fuse;
    int64_t charged = 0;
    int products = 0;
    for (const StepTime& s : testing::profiled_steps(g, o)) {
      charged += s.flops;
      products += s.product;
      if (s.nodes == "layout change") {
        EXPECT_EQ(s.flops, 0);
      }
      if (s.nodes.find("(conv2d)") != std::string::npos) {
        EXPECT_TRUE(s.product) << s.nodes;
      }
      if (s.nodes.find("(softmax)") != std::string::npos) {
        EXPECT_FALSE(s.product);
      }
    }
    EXPECT_EQ(charged, run_flops);
    EXPECT_EQ(products, 2);
  }
}

// A gemm whose computed C is stretched by a copy before it: the copy
// carries nothing, the gemm its FLOPs.
TEST(CpuExecutor, AGemmsFlopsStayWithItAfterItsCIsStretched) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input a: f32[6,8]
  input c: f32[6,1]
  weight b: f32[8,5]
  %g = gemm(a, b, c)
  output y = %g
})",
                                                   3);
  int copies = 0, products = 0;
  for (const StepTime& s : testing::profiled_steps(g, {})) {
    SCOPED_TRACE(s.what + "  " + s.nodes);
    if (s.what == "broadcast (own)") {
      ++copies;
      EXPECT_EQ(s.flops, 0);
      EXPECT_FALSE(s.product);
    } else if (s.product) {
      ++products;
      EXPECT_EQ(s.flops, node_flops(g, g.size() - 1));
    }
  }
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(products, 1);
}

TEST(CpuExecutor, WinogradRunsTheConvolutionWithItsEpilogue) {
  const Case c{"winograd_residual", R"(graph g {
  input x: f32[1,20,13,11]
  weight w: f32[20,20,3,3]
  weight b: f32[20]
  weight s: f32[20]
  weight t: f32[20]
  weight m: f32[20]
  weight v: f32[20]
  %c = conv2d(x, w, b, pad=same)
  %n = batchnorm(%c, s, t, m, v)
  %a = add(%n, x)
  %r = clip(%a, min=0, max=6)
  output y = %r
})"};
  ExecutorOptions o;
  o.winograd = ExecutorOptions::Choice::kAlways;
  EXPECT_TRUE(runs_step(c, o, "winograd", "(conv2d) + batchnorm + add + clip"));
  expect_matches_reference(c, true, {}, ExecutorOptions::Choice::kAlways);
}

TEST(CpuExecutor, PointwiseConvolutionsRunAsInnerProductsWithTheirPostOps) {
  const Case c{"pointwise_residual", R"(graph g {
  input x: f32[1,20,9,7]
  weight w0: f32[24,20,3,3]
  weight w: f32[24,24,1,1]
  weight b: f32[24]
  %h = conv2d(x, w0, pad=same, act=relu)
  %c = conv2d(%h, w, b)
  %a = add(%h, %c)
  %r = relu(%a)
  output y = %r
})"};
  ExecutorOptions o;
  o.pointwise_product = ExecutorOptions::Choice::kAlways;
  EXPECT_TRUE(runs_step(c, o, "inner_product", "(conv2d) + add + relu"));
  expect_matches_reference(c, true, {}, ExecutorOptions::Choice::kAlways);
}

const Case& case_named(std::string_view name) {
  for (const Case& c : ref::testing::kCases)
    if (c.name == name) return c;
  ADD_FAILURE() << "no case " << name;
  return ref::testing::kCases[0];
}

// A product of one row by weights on tso's kernel, its bias, sigmoid and
// product with a tensor in a post-op step after it; both products of the
// shared case (checked against the reference with the others) run so when
// forced, and neither when switched off.
TEST(CpuExecutor, ProductsOfOneRowRunOnTheOwnKernelWithTheirPostOps) {
  const Case& c = case_named("row_products_of_a_recurrent_cell");
  ExecutorOptions o;
  o.row_product = ExecutorOptions::Choice::kAlways;
  const Graph g = ref::testing::graph_with_weights(c.text, 3);
  int own = 0;
  for (const StepTime& s : testing::profiled_steps(g, o)) own += s.what == "row product (own)";
  EXPECT_EQ(own, 2);
  EXPECT_TRUE(runs_step(c, o, "post-ops", "(matmul) + add + sigmoid + mul"));
  o.row_product = ExecutorOptions::Choice::kOff;
  EXPECT_FALSE(runs_step(c, o, "row product", "matmul"));
}

// The shared case (checked against the reference with the others) writes a
// conv's NHWC output in place, twice, and copies a base read later (an
// in-place write would change %t) and a graph input.
TEST(CpuExecutor, UpdateSliceWritesADeadBaseInPlaceAndCopiesOthers) {
  const Case& c = case_named("update_slice_in_place_and_copied");
  for (bool fuse : {true, false}) {
    ExecutorOptions o;
    o.fuse = fuse;
    EXPECT_TRUE(runs_step(c, o, "update_slice in place", "'%u'"));
    EXPECT_TRUE(runs_step(c, o, "update_slice in place", "'%v'"));
    EXPECT_TRUE(runs_step(c, o, "update_slice (own)", "'%s'"));
    EXPECT_TRUE(runs_step(c, o, "update_slice (own)", "'%i'"));
    EXPECT_FALSE(runs_step(c, o, "update_slice in place", "'%s'"));
  }
}

// Bases in the layouts convolutions write here (the stem's, a Winograd
// convolution's NHWC, oneDNN's NHWC) with patches from graph inputs
// (row-major) and a slice; a base read twice is copied both times; an
// updated base feeds a convolution.
TEST(CpuExecutor, UpdateSliceInTheLayoutsConvolutionsWrite) {
  const Case c{"update_slice_layouts", R"(graph g {
  input x: f32[1,3,9,9]
  input h: f32[1,16,7,5]
  input p: f32[1,4,2,3]
  weight w: f32[8,3,3,3]
  weight v: f32[16,16,3,3]
  %s = conv2d(x, w, pad=same)
  %u = update_slice(%s, p, starts=[0,4,7,6])
  %n = conv2d(h, v, pad=same, act=relu)
  %b = update_slice(%n, p, starts=[0,12,5,2])
  %q = slice(%u, starts=[0,0], ends=[7,5], axes=[2,3], steps=[1,1])
  %m = update_slice(%n, %q, starts=[0,8,0,0])
  %e = conv2d(h, v, pad=same)
  %f = update_slice(%e, %q, starts=[0,0,0,0])
  %o = conv2d(%f, v, pad=same)
  output y = %u
  output z = %b
  output m = %m
  output o = %o
})"};
  expect_matches_reference(c, true);
  expect_matches_reference(c, false);
  ExecutorOptions o;
  EXPECT_TRUE(runs_step(c, o, "update_slice in place", "'%u'"));
  EXPECT_TRUE(runs_step(c, o, "update_slice (own)", "'%b'"));
  EXPECT_TRUE(runs_step(c, o, "update_slice (own)", "'%m'"));
  EXPECT_TRUE(runs_step(c, o, "update_slice in place", "'%f'"));
}

TEST(CpuExecutor, AnExportedGeluRunsAsOnePostOp) {
  const Case c{"exported_gelu", R"(graph g {
  input x: f32[2,8,16]
  weight w: f32[16,40]
  weight b: f32[40]
  weight sqrt2: f32[]
  weight one: f32[]
  weight half: f32[]
  %m = matmul(x, w)
  %a = add(%m, b)
  %d = div(%a, sqrt2)
  %e = erf(%d)
  %p = add(one, %e)
  %q = mul(%p, %a)
  %y = mul(half, %q)
  output y = %y
})"};
  const std::map<std::string, float> constants = {
      {"sqrt2", 1.41421356f}, {"one", 1.f}, {"half", 0.5f}};
  const Graph g = ref::testing::graph_with_weights(c.text, 3, constants);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().fused_nodes, 6);
  EXPECT_EQ((*ex)->stats().steps, 1);
  expect_matches_reference(c, true, constants);
}

// BERT's attention joins its heads by a transpose of probabilities times
// values: the matmul writes its result in the transpose's order and the
// transpose runs no step. Where the matmul's result has another reader, or
// the permutation moves the last axis, the transpose stays a step.
TEST(CpuExecutor, AProductWritesTheTransposeThatAloneReadsIt) {
  const Case written{"written_transpose", R"(graph g {
  input p: f32[1,4,8,8]
  input v: f32[1,4,8,16]
  %m = matmul(p, v)
  %t = transpose(%m, perm=[0,2,1,3])
  %r = reshape(%t, shape=[1,8,64])
  output y = %r
})"};
  const Graph g = ref::testing::graph_with_weights(written.text, 3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().steps, 1);
  EXPECT_TRUE(runs_step(written, {}, "matmul", "written as node '%t'"));
  expect_matches_reference(written, true);
  expect_matches_reference(written, false);

  const Case read_twice{"transpose_of_a_result_read_twice", R"(graph g {
  input p: f32[1,4,8,8]
  input v: f32[1,4,8,16]
  %m = matmul(p, v)
  %t = transpose(%m, perm=[0,2,1,3])
  output y = %t
  output z = %m
})"};
  EXPECT_TRUE(runs_step(read_twice, {}, "transpose", "node '%t'"));
  expect_matches_reference(read_twice, true);
  const Case last_axis{"transpose_of_the_last_axis", R"(graph g {
  input p: f32[1,4,8,8]
  input v: f32[1,4,8,16]
  %m = matmul(p, v)
  %t = transpose(%m, perm=[0,1,3,2])
  output y = %t
})"};
  EXPECT_TRUE(runs_step(last_axis, {}, "transpose", "node '%t'"));
  expect_matches_reference(last_axis, true);
}

// BERT splits its queries, keys and values into heads by transposes that
// only its attention products read: they read them through their strides,
// and the transposes run no step. A transpose another operator reads too,
// or one whose result's last two axes both move the input's last, stays a
// step.
TEST(CpuExecutor, ProductsReadTheTransposesOnlyTheyReadInPlace) {
  const Case in_place{"transposes_read_in_place", R"(graph g {
  input q: f32[1,8,4,16]
  input k: f32[1,8,4,16]
  %qt = transpose(q, perm=[0,2,1,3])
  %kt = transpose(k, perm=[0,2,3,1])
  %s = matmul(%qt, %kt)
  output y = %s
})"};
  const Graph g = ref::testing::graph_with_weights(in_place.text, 3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().steps, 1);
  EXPECT_FALSE(runs_step(in_place, {}, "ref", ""));
  expect_matches_reference(in_place, true);
  expect_matches_reference(in_place, false);

  const Case read_elsewhere{"transpose_read_by_an_add_too", R"(graph g {
  input q: f32[1,8,4,16]
  input k: f32[1,4,16,8]
  %qt = transpose(q, perm=[0,2,1,3])
  %s = matmul(%qt, k)
  %a = add(%qt, %qt)
  output y = %s
  output z = %a
})"};
  EXPECT_TRUE(runs_step(read_elsewhere, {}, "transpose", "node '%qt'"));
  expect_matches_reference(read_elsewhere, true);
  const Case scattered{"transpose_moving_the_last_axis_away", R"(graph g {
  input q: f32[1,16,8,4]
  input k: f32[1,4,8,16]
  %qt = transpose(q, perm=[0,3,1,2])
  %s = matmul(%qt, k)
  output y = %s
})"};
  EXPECT_TRUE(runs_step(scattered, {}, "transpose", "node '%qt'"));
  expect_matches_reference(scattered, true);
}

TEST(CpuExecutor, GroupsOfFourChannelsRunOnADirectKernel) {
  const Case c{"groups_of_four", R"(graph g {
  input x: f32[1,128,28,28]
  weight w: f32[128,4,3,3]
  %c = conv2d(x, w, pad=same, groups=32)
  output y = %c
})"};
  EXPECT_FALSE(runs_step(c, {}, "gemm", ""));
  EXPECT_TRUE(runs_step(c, {}, "conv", "(conv2d)"));
  expect_matches_reference(c, true);
}

// Grouped 3x3 convolutions of 4, 8 and 16 channels a group on tso's own
// AVX-512 kernel when forced: ResNeXt's block (bias, relu, a residual add)
// at stride 1, a stride-2 one whose output width leaves a partial block of
// pixels, explicit padding of one side. Near misses stay on oneDNN: groups
// of 32 channels, a dilation, unequal groups in and out.
TEST(CpuExecutor, GroupedConvolutionsRunOnTheOwnKernelWithTheirPostOps) {
  const Case block{"grouped_block", R"(graph g {
  input x: f32[1,64,12,12]
  weight w: f32[64,4,3,3]
  weight b: f32[64]
  weight w8: f32[64,8,3,3]
  weight w16: f32[64,16,3,3]
  %c = conv2d(x, w, b, pad=same, groups=16, act=relu)
  %a = add(%c, x)
  %s = conv2d(%a, w8, pad=same, stride=[2,2], groups=8)
  %t = conv2d(%s, w16, pad=[1,1,0,0], groups=4, act=relu)
  output y = %t
})"};
  const Case misses{"grouped_near_misses", R"(graph g {
  input x: f32[1,64,12,12]
  weight w32: f32[64,32,3,3]
  weight w4: f32[64,4,3,3]
  weight wu: f32[32,4,3,3]
  %a = conv2d(x, w32, pad=same, groups=2)
  %b = conv2d(x, w4, pad=[2,2,2,2], dilation=[2,2], groups=16)
  %c = conv2d(x, wu, pad=same, groups=16)
  output a = %a
  output b = %b
  output c = %c
})"};
  ExecutorOptions o;
  o.grouped = ExecutorOptions::Choice::kAlways;
  expect_matches_reference(block, true, {}, ExecutorOptions::Choice::kAlways);
  expect_matches_reference(misses, true, {}, ExecutorOptions::Choice::kAlways);
  EXPECT_FALSE(runs_step(misses, o, "grouped conv", ""));
  if (!avx512_kernels_run()) GTEST_SKIP() << "the kernel needs AVX-512, which this CPU lacks";
  EXPECT_TRUE(runs_step(block, o, "grouped conv", "'%c' (conv2d) + add"));
  EXPECT_TRUE(runs_step(block, o, "grouped conv", "'%s' (conv2d)"));
  EXPECT_TRUE(runs_step(block, o, "grouped conv", "'%t' (conv2d)"));
}

// The own convolution kernels on seeded random shapes within their reach,
// forced, against the reference: image sizes from 1 to 19 (partial and
// single blocks and tiles), padding of either side or none, strides, batch
// 2, channel counts no multiple of 8 (Winograd), and each epilogue (bias,
// relu, a clip, a residual add where the shapes allow one).
TEST(CpuExecutor, OwnConvolutionKernelsMatchTheReferenceOnRandomShapes) {
  std::mt19937 rng(20261201);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto conv_case = [&](bool grouped, int i) {
    int n = pick(1, 2), c, k, cg = 1, stride = 1, h, w, pt, pl, pb, pr;
    if (grouped) {
      cg = std::vector<int>{4, 8, 16}[pick(0, 2)];
      c = k = 16 * pick(cg == 16 ? 2 : 1, 3);  // two groups at least
      stride = pick(1, 2);
      pt = pick(0, 1), pl = pick(0, 1), pb = pick(0, 2), pr = pick(0, 2);
    } else {
      c = pick(1, 40), k = pick(1, 40);
      pt = pick(0, 2), pl = pick(0, 2), pb = pick(0, 2), pr = pick(0, 2);
    }
    do {
      h = pick(1, 19), w = pick(1, 19);
    } while (h + pt + pb < 3 || w + pl + pr < 3);
    const int oh = (h + pt + pb - 3) / stride + 1, ow = (w + pl + pr - 3) / stride + 1;
    const bool residual = oh == h && ow == w && k == c && pick(0, 1) == 1;
    const char* act = std::vector<const char*>{"", ", act=relu", ", act=clip, min=0, max=6"}
        [pick(0, 2)];
    const bool bias = pick(0, 1) == 1;
    auto dims = [](std::initializer_list<int> d) {
      std::string t;
      for (int v : d) t += (t.empty() ? "" : ",") + std::to_string(v);
      return "f32[" + t + "]";
    };
    std::string text = "graph g {\n  input x: " + dims({n, c, h, w}) + "\n  weight w: " +
                       dims({k, grouped ? cg : c, 3, 3}) + "\n";
    if (bias) text += "  weight b: " + dims({k}) + "\n";
    text += "  %c = conv2d(x, w" + std::string(bias ? ", b" : "") + ", pad=[" +
            std::to_string(pt) + "," + std::to_string(pl) + "," + std::to_string(pb) + "," +
            std::to_string(pr) + "], stride=[" + std::to_string(stride) + "," +
            std::to_string(stride) + "]" + (grouped ? ", groups=" + std::to_string(c / cg) : "") +
            act + ")\n";
    text += residual ? "  %a = add(%c, x)\n  output y = %a\n}" : "  output y = %c\n}";
    return std::pair{std::string(grouped ? "grouped_" : "winograd_") + std::to_string(i), text};
  };
  ExecutorOptions o;
  o.winograd = o.grouped = ExecutorOptions::Choice::kAlways;
  for (bool grouped : {false, true}) {
    for (int i = 0; i < 40; ++i) {
      const auto [name, text] = conv_case(grouped, i);
      SCOPED_TRACE(text);
      const Case c{name.c_str(), text.c_str()};
      expect_matches_reference(c, true, {}, ExecutorOptions::Choice::kAlways);
      if (!grouped || avx512_kernels_run()) {
        EXPECT_TRUE(runs_step(c, o, grouped ? "grouped conv" : "winograd", "'%c' (conv2d)"));
      }
    }
  }
}

// A convolution whose weight the prologue computes: a 1x1 kernel enlarged
// to 3x3 and concatenated with a 3x3 one.
constexpr const char* kPrologueGraph = R"(graph g {
  input x: f32[1,4,9,9]
  weight a: f32[3,4,1,1]
  weight b: f32[5,4,3,3]
  %e = enlarge(a, kernel=[3,3])
  %w = concat(%e, b, axis=0)
  %c = conv2d(x, %w, pad=same)
  output y = %c
})";

TEST(CpuExecutor, ConstantSubgraphsRunOnceInThePrologue) {
  const Graph g = ref::testing::graph_with_weights(kPrologueGraph, 3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_LE((*ex)->stats().steps, 3);  // the conv, and reorders at the boundary
  expect_matches_reference({"prologue", kPrologueGraph}, true);
}

// The profiler evicts a plan's constants before each timed run: the bytes
// are those the run steps read (the weight in the convolution's layout,
// padded to its blocks; not what only the prologue reads), and the results
// stay the same.
TEST(CpuExecutor, EvictingConstantsKeepsTheResults) {
  const Graph g = ref::testing::graph_with_weights(kPrologueGraph, 3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  const std::vector<float> x(4 * 9 * 9, 0.5f);
  ASSERT_TRUE((*ex)->set_input("x", std::span<const float>(x)).ok());
  ASSERT_TRUE((*ex)->run().ok());
  const Expected<std::vector<float>> before = (*ex)->output(0);
  ASSERT_TRUE(before.ok());
  const int64_t weight_bytes = 8 * 4 * 3 * 3 * 4;
  const int64_t evicted = (*ex)->evict_constants();
  EXPECT_GE(evicted, weight_bytes);
  // The static block also holds the input and the prologue's enlarged and
  // concatenated weights, which no run step reads.
  EXPECT_LT(evicted, (*ex)->stats().static_bytes - 4 * 9 * 9 * 4);
  ASSERT_TRUE((*ex)->run().ok());
  EXPECT_EQ((*ex)->output(0).value(), before.value());

  const Graph none = ref::testing::graph_with_weights(R"(graph n {
  input x: f32[2,8]
  %r = relu(x)
  output y = %r
})",
                                                      3);
  Expected<std::unique_ptr<Executor>> plain = Executor::create(none, {});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ((*plain)->evict_constants(), 0);
}

// Both convolutions' weights are reordered into oneDNN's blocked layout.
constexpr const char* kTwoConvGraph = R"(graph w {
  input x: f32[1,16,8,8]
  weight k: f32[32,16,3,3]
  weight j: f32[16,32,1,1]
  %a = conv2d(x, k, pad=same)
  %r = relu(%a)
  %b = conv2d(%r, j)
  output y = %b
})";

// One run of `g` planned with `o` on seeded inputs; the executor's stats.
std::vector<float> run_once(const Graph& g, const ExecutorOptions& o, ExecutorStats* stats) {
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!ex) return {};
  for (const auto& [name, t] : ref::testing::random_feeds(g, 5))
    EXPECT_TRUE((*ex)->set_input(name, std::span<const float>(t.data)).ok());
  EXPECT_TRUE((*ex)->run().ok());
  *stats = (*ex)->stats();
  return (*ex)->output(0).value();
}

// The speed check's two executors read the same stored weights: with one
// store, the second takes the first one's copies in the primitives' layouts
// and computes what it computes alone. A weight with other bytes at the same
// shape gets its own copy, and a copy no executor holds is made again.
TEST(CpuExecutor, ExecutorsOfOneStoreShareTheirWeightCopies) {
  const Graph g = ref::testing::graph_with_weights(kTwoConvGraph, 3);
  ExecutorOptions o;
  o.winograd = o.pointwise_product = ExecutorOptions::Choice::kOff;
  ExecutorStats alone_stats;
  const std::vector<float> alone = run_once(g, o, &alone_stats);
  EXPECT_EQ(alone_stats.shared_bytes, 0);

  o.constants = std::make_shared<ConstantStore>();
  Expected<std::unique_ptr<Executor>> first = Executor::create(g, o);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ((*first)->stats().shared_bytes, 0);
  ExecutorStats second;
  EXPECT_EQ(run_once(g, o, &second), alone);
  const int64_t weight_bytes = (32 * 16 * 9 + 16 * 32) * 4;
  EXPECT_GE(second.shared_bytes, weight_bytes);
  EXPECT_EQ(second.static_bytes, alone_stats.static_bytes);

  // k replaced by other values: only j's copy is shared.
  GraphBuilder other("w");
  for (const Node& n : g.nodes()) {
    Node copy = n;
    if (n.name == "k") {
      auto w = std::make_shared<WeightData>(*n.data);
      for (std::byte& b : w->bytes) b = std::byte(~std::to_integer<unsigned>(b) & 0x3f);
      copy.data = std::move(w);
    }
    other.add_node(std::move(copy));
  }
  for (const GraphOutput& out : g.outputs()) other.output(out.name, out.ref);
  const Graph g2 = other.finish().value();
  ExecutorOptions unshared = o;
  unshared.constants = nullptr;
  ExecutorStats s2, unshared_stats;
  const std::vector<float> y2 = run_once(g2, o, &s2);
  EXPECT_NE(y2, alone);
  EXPECT_EQ(y2, run_once(g2, unshared, &unshared_stats));
  EXPECT_GT(s2.shared_bytes, 0);
  EXPECT_LT(s2.shared_bytes, second.shared_bytes);

  first->reset();
  ExecutorStats again;
  EXPECT_EQ(run_once(g, o, &again), alone);
  EXPECT_EQ(again.shared_bytes, 0);
}

// `tso run` hands its graph's weights over (create_releasing_weights): once
// planned the graph holds none, a weight the prologue reorders is freed
// there, and one a run step reads as stored stays with the executor. The
// results are those of an executor whose graph keeps its weights.
TEST(CpuExecutor, AnExecutorReleasingTheGraphsWeightsFreesEachOnceCopied) {
  constexpr const char* kGraph = R"(graph w {
  input x: f32[1,16,8,8]
  weight k: f32[32,16,3,3]
  weight m: f32[1,32]
  %a = conv2d(x, k, pad=same)
  %p = global_avgpool(%a)
  %f = reshape(%p, shape=[1,32])
  %s = add(%f, m)
  output y = %s
})";
  ExecutorOptions o;
  o.winograd = o.pointwise_product = ExecutorOptions::Choice::kOff;
  ExecutorStats kept_stats;
  const std::vector<float> kept =
      run_once(ref::testing::graph_with_weights(kGraph, 3), o, &kept_stats);
  // A graph of its own, whose weights nothing else holds.
  Graph g = ref::testing::graph_with_weights(kGraph, 3);
  std::map<std::string, std::weak_ptr<const WeightData>> weights;
  for (const Node& n : g.nodes())
    if (n.op == Op::Weight) weights[n.name] = n.data;
  Expected<std::unique_ptr<Executor>> ex = Executor::create_releasing_weights(g, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  for (const Node& n : g.nodes()) EXPECT_EQ(n.data, nullptr) << n.name;
  EXPECT_TRUE(weights.at("k").expired());
  EXPECT_FALSE(weights.at("m").expired());
  for (const auto& [name, t] : ref::testing::random_feeds(g, 5))
    ASSERT_TRUE((*ex)->set_input(name, std::span<const float>(t.data)).ok());
  ASSERT_TRUE((*ex)->run().ok());
  EXPECT_EQ((*ex)->output(0).value(), kept);
  EXPECT_EQ((*ex)->stats().static_bytes, kept_stats.static_bytes);
}

// Each weight is freed as soon as the prologue has copied it, not once every
// weight has been: while the executor is made, the process holds about one
// weight more than the graph did. Three weights of 37.7 MB (each above
// glibc's largest mmap threshold, so freeing one unmaps it) in the
// convolutions' blocked layout; releasing them only at the end, or zeroing
// the static block at once, held 113 MB more.
TEST(CpuExecutor, ReleasingWeightsFreesEachAsSoonAsItIsCopied) {
  constexpr const char* kGraph = R"(graph big {
  input x: f32[1,1024,4,4]
  weight a: f32[1024,1024,3,3]
  weight b: f32[1024,1024,3,3]
  weight c: f32[1024,1024,3,3]
  %p = conv2d(x, a, pad=same)
  %q = conv2d(%p, b, pad=same)
  %r = conv2d(%q, c, pad=same)
  output y = %r
})";
  if (TSO_UNDER_ASAN) GTEST_SKIP() << "AddressSanitizer holds freed memory in quarantine";
  const int64_t weight_bytes = int64_t{1024} * 1024 * 9 * 4;
  Graph g = ref::testing::graph_with_weights(kGraph, 3);
  ExecutorOptions o;
  o.winograd = o.pointwise_product = ExecutorOptions::Choice::kOff;
  Expected<std::unique_ptr<Executor>> ex = Error{"not made"};
  const std::optional<int64_t> peak =
      tso::testing::added_peak_bytes([&] { ex = Executor::create_releasing_weights(g, o); });
  if (!peak) GTEST_SKIP() << "the peak resident memory cannot be reset (/proc/self/clear_refs)";
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  ASSERT_GE((*ex)->stats().static_bytes, 3 * weight_bytes) << "the weights were not copied";
  EXPECT_LT(*peak, 2 * weight_bytes);
}

TEST(CpuExecutor, ChannelsLastInputsTakeNhwcBytes) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,3,2,2]
  %r = neg(x)
  output y = %r
})",
                                                   3);
  ExecutorOptions o;
  o.channels_last_inputs = true;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  // NHWC: pixel-major, channel-minor; the output comes back row-major NCHW.
  std::vector<float> nhwc(12);
  for (int p = 0; p < 4; ++p)
    for (int c = 0; c < 3; ++c) nhwc[p * 3 + c] = static_cast<float>(10 * c + p);
  ASSERT_TRUE((*ex)->set_input("x", std::span<const float>(nhwc)).ok());
  ASSERT_TRUE((*ex)->run().ok());
  Expected<std::vector<float>> y = (*ex)->output(0);
  ASSERT_TRUE(y.ok()) << y.error().message;
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 4; ++p) EXPECT_EQ((*y)[c * 4 + p], -static_cast<float>(10 * c + p));
}

// A batchnorm of a channels-last input runs as tso's own kernel when its
// channels are no multiple of 8 (oneDNN's is SSE4.1-wide there) and as
// oneDNN's otherwise; both match the reference.
TEST(CpuExecutor, ChannelsLastBatchNormOfAnyChannelCountMatchesTheReference) {
  for (int channels : {84, 96}) {
    SCOPED_TRACE(channels);
    const std::string c = std::to_string(channels);
    const Graph g = ref::testing::graph_with_weights(
        "graph g {\n  input x: f32[2," + c + ",5,7]\n  weight s: f32[" + c + "]\n  weight b: f32[" +
            c + "]\n  weight m: f32[" + c + "]\n  weight v: f32[" + c +
            "]\n  %n = batchnorm(x, s, b, m, v, epsilon=0.001)\n  output y = %n\n}",
        3);
    std::map<std::string, ref::Tensor<float>> feeds = ref::testing::random_feeds(g, 5);
    Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feeds);
    ASSERT_TRUE(want.ok()) << want.error().message;
    ExecutorOptions o;
    o.channels_last_inputs = true;
    Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message;
    const std::vector<float>& x = feeds.at("x").data;
    const int64_t pixels = 35;
    std::vector<float> nhwc(x.size());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t p = 0; p < pixels; ++p)
          nhwc[(n * pixels + p) * channels + ch] = x[(n * channels + ch) * pixels + p];
    ASSERT_TRUE((*ex)->set_input("x", std::span<const float>(nhwc)).ok());
    ASSERT_TRUE((*ex)->run().ok());
    Expected<std::vector<float>> y = (*ex)->output(0);
    ASSERT_TRUE(y.ok()) << y.error().message;
    EXPECT_LE(relative_error(*y, (*want)[0].data), 1e-5);
    bool own = false;
    for (const StepTime& s : testing::profiled_steps(g, o))
      own = own || s.what.find("batchnorm (own)") != std::string::npos;
    EXPECT_EQ(own, channels % 8 != 0);
  }
}

std::vector<std::byte> halves_of(const std::vector<float>& v) {
  std::vector<std::byte> b(v.size() * 2);
  for (size_t k = 0; k < v.size(); ++k) {
    const uint16_t h = float_to_half(v[k]);
    std::memcpy(b.data() + 2 * k, &h, 2);
  }
  return b;
}

// An f16 graph runs with every f16 tensor widened to f32 (widen_f16.h): its
// f16 input is read as f16, its f16 weights converted, comparisons,
// selections and a product computed in f32, and its f16 outputs are the
// reference executor's values rounded to f16; a Cast of an f16 result to
// f32 is that result at f32's precision.
TEST(CpuExecutor, AnF16GraphRunsWidenedToF32) {
  Expected<Graph> p = parse_graph(R"(graph half {
  input x: f16[2,4]
  input c: bool[2,4]
  weight w: f16[4,3]
  %m = matmul(x, w, act=relu)
  %n = neg(x)
  %s = where(c, x, %n)
  %g = greater(x, %n)
  %f = cast(%m, to="f32")
  output m = %m
  output s = %s
  output g = %g
  output f = %f
})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::vector<float> w = {0.5f, -1, 0.25f, 2, 0.125f, -0.5f, -1.5f, 1, 3, 0.75f, -2, 1.25f};
  GraphBuilder b(p->name());
  for (const Node& n : p->nodes()) {
    Node copy = n;
    if (n.op == Op::Weight)
      copy.data = std::make_shared<WeightData>(WeightData{n.outs[0], halves_of(w)});
    b.add_node(std::move(copy));
  }
  for (const GraphOutput& o : p->outputs()) b.output(o.name, o.ref);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;

  const std::vector<float> x = {1.5f, -0.25f, 3, 0.1f, -2, 0.75f, 1, -1};
  const std::vector<uint8_t> c = {1, 0, 1, 0, 0, 1, 1, 0};
  std::map<std::string, ref::Tensor<float>> feeds;
  std::vector<float> x_half(x.size());
  for (size_t k = 0; k < x.size(); ++k) x_half[k] = half_to_float(float_to_half(x[k]));
  feeds["x"] = ref::Tensor<float>(Shape{2, 4}, x_half);
  feeds["c"] = ref::Tensor<float>(Shape{2, 4}, std::vector<float>(c.begin(), c.end()));
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(*g, feeds);
  ASSERT_TRUE(want.ok()) << want.error().message;

  Expected<std::unique_ptr<Executor>> ex = Executor::create(*g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  ASSERT_TRUE((*ex)->set_input("x", halves_of(x)).ok());
  ASSERT_TRUE((*ex)->set_input("c", std::as_bytes(std::span(c))).ok());
  ASSERT_TRUE((*ex)->run().ok());
  for (int k : {0, 1}) {
    Expected<std::vector<std::byte>> got = (*ex)->output_bytes(k);
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(got->size(), (*want)[k].data.size() * 2) << "output " << k << " is not f16";
    for (size_t i = 0; i < (*want)[k].data.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, got->data() + 2 * i, 2);
      EXPECT_EQ(h, float_to_half((*want)[k].data[i])) << "output " << k << ", element " << i;
    }
  }
  Expected<std::vector<std::byte>> greater = (*ex)->output_bytes(2);
  ASSERT_TRUE(greater.ok()) << greater.error().message;
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(static_cast<uint8_t>((*greater)[i]), (*want)[2].data[i]) << i;
  Expected<std::vector<float>> wide = (*ex)->output(3);
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  EXPECT_LE(relative_error(*wide, (*want)[3].data), 1e-6);
}

TEST(CpuExecutor, OpaqueNodesAreAnErrorNamingTheOperator) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[2,3]
  %o: i64[2,6] = opaque(x, op_type="NonZero")
  output y = %o
})",
                                  "<test>");
  ASSERT_TRUE(g.ok()) << g.error().message;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*g, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message.find("'NonZero'"), std::string::npos) << ex.error().message;
  EXPECT_NE(ex.error().message.find("%o"), std::string::npos) << ex.error().message;
}

TEST(CpuExecutor, APlanLargerThanTheMachineIsAnErrorBeforeAllocating) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,1,1,1]
  %p = pad(x, pads=[0,0,0,0,0,0,300000,300000])
  %r = relu(%p)
  output y = %r
})",
                                                   3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_FALSE(ex.ok()) << "a 720 GB plan";
  EXPECT_NE(ex.error().message.find("needs"), std::string::npos) << ex.error().message;
  EXPECT_NE(ex.error().message.find("available"), std::string::npos) << ex.error().message;
}

// Each tensor fits in int64 bytes (the graph checker refuses the others);
// together they do not, and the plan says so before adding up offsets.
TEST(CpuExecutor, BuffersWhoseSumOverflowsAreAnErrorBeforeAllocating) {
  const Graph g = ref::testing::graph_with_weights(R"(graph g {
  input x: f32[576460752303423488]
  input y: f32[576460752303423488]
  input z: f32[576460752303423488]
  %a = add(x, y)
  %b = add(%a, z)
  output o = %b
})",
                                                   3);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.error().message, "the CPU plan: its buffers together exceed 2^63 bytes");
}

TEST(CpuExecutor, ResultsDoNotDependOnTheThreadCount) {
  const Case& c = ref::testing::kCases[0];
  const Graph g = ref::testing::graph_with_weights(c.text, 3);
  std::map<std::string, ref::Tensor<float>> feeds = ref::testing::random_feeds(g, 5);
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2}) {
    ExecutorOptions o;
    o.threads = threads;
    Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message;
    for (const auto& [name, t] : feeds)
      ASSERT_TRUE((*ex)->set_input(name, std::span<const float>(t.data)).ok());
    ASSERT_TRUE((*ex)->run().ok());
    outs.push_back(*(*ex)->output(0));
    EXPECT_EQ((*ex)->stats().threads, threads);
  }
  EXPECT_LE(relative_error(outs[0], outs[1]), 1e-5);
}

}  // namespace
}  // namespace tso::cpu
