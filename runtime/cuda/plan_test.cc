#include "runtime/cuda/plan.h"

#include <gtest/gtest.h>

#include "runtime/cuda/test_graphs.h"

namespace tso::cuda {
namespace {

using testing::node_named;
using testing::parse;

const StepPlan* step_of(const Plan& p, int node) {
  for (const StepPlan& s : p.steps)
    if (s.node == node) return &s;
  return nullptr;
}

TEST(Plan, KernelChoicePerNode) {
  Graph g = parse(R"(graph g {
  input x: f32[1,3,8,8]
  weight w: f32[4,3,3,3]
  weight b: f32[4]
  %c = conv2d(x, w, b, pad=same, act=relu)
  %p = maxpool(%c, kernel=[2,2], stride=[2,2])
  %f = flatten(%p, axis=1)
  %s = softmax(%f, axis=1)
  output y = %s
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->steps.size(), 3u) << "flatten is a view, not a step";
  EXPECT_EQ(p->steps[0].kernel, Kernel::kConv);
  EXPECT_EQ(p->steps[1].kernel, Kernel::kPool);
  EXPECT_EQ(p->steps[2].kernel, Kernel::kSoftmax);
  EXPECT_EQ(p->sources.size(), 3u);
  EXPECT_EQ(p->views, 1);
  // x, w and b in the static block, each 256-aligned.
  EXPECT_EQ(p->static_bytes, 768 + 512 + 256);
  const int f = node_named(g, "%f"), pool = node_named(g, "%p");
  EXPECT_EQ(p->tensor({f, 0}).offset, p->tensor({pool, 0}).offset);
  EXPECT_EQ(p->tensor({f, 0}).storage, Storage::kArena);
}

TEST(Plan, ArenaReusesDeadTensorsAndReportsPeak) {
  Graph g = parse(R"(graph g {
  input x: f32[1024]
  %a = relu(x)
  %b = sigmoid(%a)
  %c = tanh(%b)
  %d = exp(%c)
  output y = %d
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->arena.total_bytes, 4 * 4096);
  EXPECT_EQ(p->arena.peak_bytes, 2 * 4096) << "a chain needs two live buffers at a time";
  EXPECT_NE(p->tensor({node_named(g, "%a"), 0}).offset, p->tensor({node_named(g, "%b"), 0}).offset);
}

TEST(Plan, ConcatInputsAreWrittenInPlaceWhenTheLayoutAllows) {
  Graph g = parse(R"(graph g {
  input x: f32[1,2,4,4]
  %a = relu(x)
  %b = sigmoid(x)
  %c = concat(%a, %b, x, %a, axis=1)
  output y = %c
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const int a = node_named(g, "%a"), b = node_named(g, "%b"), c = node_named(g, "%c");
  const StepPlan* s = step_of(*p, c);
  ASSERT_NE(s, nullptr);
  // a and b in place; x is a graph input and the second a a repeat: copied.
  EXPECT_EQ(s->in_place, (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(p->concat_inputs_in_place, 2);
  const int64_t base = p->tensor({c, 0}).offset;
  EXPECT_EQ(p->tensor({a, 0}).offset, base);
  EXPECT_EQ(p->tensor({b, 0}).offset, base + 128);
  EXPECT_EQ(p->arena.peak_bytes, 512) << "the concat output is the only arena buffer";
}

TEST(Plan, ConcatAlongAnInnerAxisOfABatchCopies) {
  Graph g = parse(R"(graph g {
  input x: f32[2,3]
  %a = relu(x)
  %c = concat(%a, %a, axis=1)
  output y = %c
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->concat_inputs_in_place, 0);
  EXPECT_EQ(p->views, 0);
}

TEST(Plan, NestedConcatsChainTheirViews) {
  Graph g = parse(R"(graph g {
  input x: f32[1,2,4]
  %a = relu(x)
  %b = tanh(x)
  %c = concat(%a, %b, axis=1)
  %d = exp(x)
  %e = concat(%d, %c, axis=1)
  output y = %e
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok());
  const int64_t e = p->tensor({node_named(g, "%e"), 0}).offset;
  EXPECT_EQ(p->tensor({node_named(g, "%d"), 0}).offset, e);
  EXPECT_EQ(p->tensor({node_named(g, "%a"), 0}).offset, e + 32);
  EXPECT_EQ(p->tensor({node_named(g, "%b"), 0}).offset, e + 64);
}

TEST(Plan, UpdateSliceWritesIntoADeadBase) {
  Graph g = parse(R"(graph g {
  input x: f32[1,2,4,4]
  input p: f32[1,1,2,2]
  %a = relu(x)
  %u = update_slice(%a, p, starts=[0,1,1,1])
  %v = tanh(%u)
  output y = %v
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const int a = node_named(g, "%a"), u = node_named(g, "%u");
  const StepPlan* s = step_of(*p, u);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kernel, Kernel::kUpdateSlice);
  EXPECT_EQ(s->in_place, (std::vector<bool>{true, false}));
  EXPECT_EQ(p->updates_in_place, 1);
  EXPECT_EQ(p->tensor({u, 0}).parent, p->tensor_id({a, 0}));
  EXPECT_EQ(p->tensor({u, 0}).offset, p->tensor({a, 0}).offset);
  Expected<Plan> off = make_plan(g, PlanOptions{.update_in_place = false});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->updates_in_place, 0);
  EXPECT_NE(off->tensor({u, 0}).offset, off->tensor({a, 0}).offset);
}

// Corrections write one box each: a chain of updates shares one buffer.
TEST(Plan, ChainedUpdatesWriteOneBuffer) {
  Graph g = parse(R"(graph g {
  input x: f32[1,2,4,4]
  input p: f32[1,1,2,2]
  input q: f32[1,2,1,4]
  %a = relu(x)
  %u = update_slice(%a, p, starts=[0,1,1,1])
  %v = update_slice(%u, q, starts=[0,0,3,0])
  output y = %v
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->updates_in_place, 2);
  EXPECT_EQ(p->tensor({node_named(g, "%v"), 0}).offset, p->tensor({node_named(g, "%a"), 0}).offset);
}

// The base is copied when anything reads its memory later: another reader of
// the base, a graph output, a graph input, or a concat input placed in the
// base and read after the update.
TEST(Plan, UpdateSliceCopiesABaseStillNeeded) {
  for (const char* text : {R"(graph g {
  input x: f32[1,2,4]
  input p: f32[1,1,2]
  %a = relu(x)
  %u = update_slice(%a, p, starts=[0,0,1])
  %w = add(%u, %a)
  output y = %w
})",
                           R"(graph g {
  input x: f32[1,2,4]
  input p: f32[1,1,2]
  %a = relu(x)
  %u = update_slice(%a, p, starts=[0,0,1])
  output y = %u
  output z = %a
})",
                           R"(graph g {
  input x: f32[1,2,4]
  input p: f32[1,1,2]
  %u = update_slice(x, p, starts=[0,0,1])
  output y = %u
})",
                           R"(graph g {
  input x: f32[1,1,4]
  input p: f32[1,1,2]
  %a = relu(x)
  %b = tanh(x)
  %c = concat(%a, %b, axis=1)
  %u = update_slice(%c, p, starts=[0,0,1])
  %w = add(%u, %b)
  output y = %w
})"}) {
    Graph g = parse(text);
    Expected<Plan> p = make_plan(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const int u = node_named(g, "%u");
    EXPECT_EQ(step_of(*p, u)->in_place, (std::vector<bool>{false, false})) << text;
    EXPECT_EQ(p->updates_in_place, 0) << text;
    EXPECT_EQ(p->tensor({u, 0}).parent, -1) << text;
  }
}

TEST(Plan, SplitIsAViewOnlyWhenPiecesAreContiguous) {
  Graph g = parse(R"(graph g {
  input x: f32[1,6,2]
  %r = relu(x)
  %s0, %s1 = split(%r, axis=1, sizes=[2,4])
  %t0, %t1 = split(%r, axis=2, sizes=[1,1])
  %u = relu(%t0)
  output y = %u
  output v = %s0
  output z = %s1
  output w = %t1
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const int r = node_named(g, "%r"), s = node_named(g, "%s0"), t = node_named(g, "%t0");
  EXPECT_EQ(p->tensor({s, 1}).offset, p->tensor({r, 0}).offset + 16);
  EXPECT_EQ(p->tensor({s, 1}).parent, p->tensor_id({r, 0}));
  const StepPlan* st = step_of(*p, t);
  ASSERT_NE(st, nullptr) << "a split along the last axis of [1,6,2] copies";
  EXPECT_EQ(st->kernel, Kernel::kCopy);
}

TEST(Plan, AliveTensorsNeverShareBytes) {
  Graph g = parse(R"(graph g {
  input x: f32[1,8,16,16]
  %a = relu(x)
  %b = sigmoid(%a)
  %c = add(%a, %b)
  %d = tanh(%c)
  %e = mul(%d, %a)
  output y = %e
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok());
  // %a is read by %e, so it must not share memory with %b, %c or %d.
  const int64_t a = p->tensor({node_named(g, "%a"), 0}).offset;
  for (const char* n : {"%b", "%c", "%d", "%e"}) {
    const int64_t o = p->tensor({node_named(g, n), 0}).offset;
    EXPECT_TRUE(o + 8192 <= a || a + 8192 <= o) << n;
  }
}

TEST(Plan, AsymmetricConvPaddingGetsScratchForThePaddedInput) {
  Graph g = parse(R"(graph g {
  input x: f32[1,2,8,8]
  weight w: f32[2,2,2,2]
  %c = conv2d(x, w, pad=same)
  output y = %c
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].scratch_bytes, (std::vector<int64_t>{1 * 2 * 9 * 9 * 4}));
  EXPECT_EQ(p->steps[0].scratch_offsets.size(), 1u);
}

TEST(Plan, OpaqueAndNonFloatComputationAreErrorsNamingTheNode) {
  Graph opaque = parse(R"(graph g {
  input x: f32[2]
  %o: f32[2] = opaque(x, op_type="Hardmax")
  output y = %o
})");
  Expected<Plan> p = make_plan(opaque);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("node '%o' (opaque)"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("Hardmax"), std::string::npos);

  Graph ints = parse(R"(graph g {
  input x: i64[2]
  %r = relu(x)
  output y = %r
})");
  Expected<Plan> q = make_plan(ints);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message,
            "node '%r' (relu): the CUDA runtime computes in f32 only, got i64[2]");

  Graph moves = parse(R"(graph g {
  input x: i64[2,3]
  %t = transpose(x, perm=[1,0])
  output y = %t
})");
  EXPECT_TRUE(make_plan(moves).ok()) << "data movement takes any dtype";
}

TEST(Plan, IsNaNMasksF32AndWhereSelectsAnyDtype) {
  Graph guard = parse(R"(graph g {
  input p: f32[2,3]
  input k: i64[3]
  input j: i64[]
  %m = isnan(p)
  %w = where(%m, k, j)
  output y = %w
  output m = %m
})");
  Expected<Plan> p = make_plan(guard);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].kernel, Kernel::kIsNaN);
  EXPECT_EQ(p->steps[1].kernel, Kernel::kWhere);
  EXPECT_EQ(p->tensors[p->steps[0].outputs[0]].bytes, 6);  // one byte per bool

  Graph doubles = parse(R"(graph g {
  input p: f64[2]
  %m = isnan(p)
  output y = %m
})");
  Expected<Plan> q = make_plan(doubles);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message,
            "node '%m' (isnan): the CUDA runtime computes in f32 only, got f64[2]");
}

// The executor checks a plan against cudaMemGetInfo's free bytes before
// allocating; the decision itself needs no GPU.
TEST(Plan, DeviceMemoryIsCheckedBeforeAllocating) {
  Graph g = parse(R"(graph g {
  input x: f32[1024,1024]
  %r = relu(x)
  %s = sigmoid(%r)
  output y = %s
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const int64_t needed = p->static_bytes + p->arena.peak_bytes;
  EXPECT_EQ(needed, 3 * 4 * 1024 * 1024) << "the input, and two arena buffers alive together";
  EXPECT_TRUE(check_device_memory(*p, needed).ok());
  Status s = check_device_memory(*p, needed - 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "needs 12.0 MiB for the CUDA plan (static 4.0 MiB, arena 8.0 MiB) but the GPU has "
            "12.0 MiB available");
}

// Each tensor fits in int64 bytes (the graph checker refuses the others);
// together they do not, and the plan says so before adding up offsets.
TEST(Plan, BuffersWhoseSumOverflowsAreAnErrorNamingThePlan) {
  Graph g = parse(R"(graph g {
  input x: f32[576460752303423488]
  input y: f32[576460752303423488]
  %c = concat(x, y, axis=0)
  output z = %c
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "the CUDA plan: its buffers together exceed 2^63 bytes");
}

}  // namespace
}  // namespace tso::cuda
