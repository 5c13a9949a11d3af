// gather on the CPU runtime against the reference executor: embedding
// lookups on i64 token ids fed at run time, ViT's class token by a stored
// i32 scalar, lookups large enough to run in parallel, constant lookups in
// the prologue, and indices out of range as errors naming the node. Exact:
// gather copies values. Also expand and cast, on a transformers attention
// mask, and the comparisons, logic, cumsum and integer arithmetic of RoBERTa's
// position ids and of masks built from float comparisons; and grid_sample
// (gathers at computed positions) in every mode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "core/testing/stored_weights.h"
#include "core/text_format.h"
#include "runtime/cpu/executor.h"
#include "runtime/reference/executor.h"

namespace tso::cpu {
namespace {

using tso::testing::with_values;

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Feeds: `ids` to the i64 input "ids" (when the graph has one), seeded
// floats to the f32 inputs.
struct Feeds {
  std::map<std::string, ref::Tensor<float>> reference;
  std::map<std::string, std::vector<std::byte>> bytes;
};

Feeds feeds_for(const Graph& g, const std::vector<int64_t>& ids) {
  Feeds f;
  std::mt19937_64 rng(5);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    std::vector<float> v;
    if (n.outs[0].dtype == DType::kI64) {
      v.assign(ids.begin(), ids.end());
      f.bytes[n.name] = bytes_of(ids);
    } else {
      v.resize(n.outs[0].shape.numel());
      for (float& x : v) x = dist(rng);
      f.bytes[n.name] = bytes_of(v);
    }
    f.reference[n.name] = ref::Tensor<float>(n.outs[0].shape, std::move(v));
  }
  return f;
}

// Runs `g` on `threads` threads; its outputs, after checking them against
// the reference executor (equal, or within 1e-5 after a matrix product).
std::vector<std::vector<float>> expect_matches_reference(const Graph& g,
                                                         const std::vector<int64_t>& ids,
                                                         int threads = 0) {
  const Feeds f = feeds_for(g, ids);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, f.reference);
  EXPECT_TRUE(want.ok()) << want.error().message;
  ExecutorOptions o;
  o.threads = threads;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!want || !ex) return {};
  for (const auto& [name, b] : f.bytes) EXPECT_TRUE((*ex)->set_input(name, b).ok()) << name;
  Status s = (*ex)->run();
  EXPECT_TRUE(s.ok()) << s.error().message;
  std::vector<std::vector<float>> outs;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(k));
    EXPECT_TRUE(got.ok()) << got.error().message;
    if (!got) return {};
    const std::vector<float>& w = (*want)[k].data;
    EXPECT_EQ(got->size(), w.size());
    for (size_t i = 0; i < w.size() && i < got->size(); ++i)
      EXPECT_NEAR((*got)[i], w[i], 1e-5 * (1 + std::abs(w[i]))) << g.outputs()[k].name << " " << i;
    outs.push_back(std::move(*got));
  }
  return outs;
}

std::vector<int64_t> ids_in(int64_t count, int64_t extent, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(-extent, extent - 1);
  std::vector<int64_t> v(count);
  for (int64_t& x : v) x = d(rng);
  return v;
}

constexpr const char* kEmbedding = R"(graph embed {
  input ids: i64[4,16]
  weight table: f32[50,32]
  weight w: f32[32,8]
  %e = gather(table, ids, axis=0)
  %p = matmul(%e, w, act=relu)
  output emb = %e
  output y = %p
})";

TEST(CpuGather, EmbeddingLookupOnTokenIdsThenAProjection) {
  const Graph g = with_values(kEmbedding, {});
  expect_matches_reference(g, ids_in(64, 50, 1));
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  Expected<std::vector<StepTime>> steps = (*ex)->profile_steps(1);
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  bool own = false;
  for (const StepTime& s : *steps) own = own || s.what == "gather (own)";
  EXPECT_TRUE(own);
}

// 1024 rows of 256 bytes: the copy runs on the OpenMP team, with the same
// result on one thread and two.
TEST(CpuGather, LargeLookupsGiveTheSameRowsOnAnyThreadCount) {
  const Graph g = with_values(R"(graph big {
  input ids: i64[1024]
  weight table: f32[1000,64]
  %e = gather(table, ids, axis=0)
  output y = %e
})",
                              {});
  const std::vector<int64_t> ids = ids_in(1024, 1000, 2);
  std::vector<std::vector<float>> one = expect_matches_reference(g, ids, 1);
  std::vector<std::vector<float>> two = expect_matches_reference(g, ids, 2);
  EXPECT_EQ(one, two);
}

// ViT's class token (x[:, 0]) by a stored i32 scalar, and a lookup along
// the last axis (rows of one element) by stored i64 indices.
TEST(CpuGather, ClassTokenAndInnerAxesByStoredIndices) {
  const Graph g = with_values(R"(graph vit {
  input x: f32[2,5,8]
  weight first: i32[]
  weight cols: i64[3]
  %r = relu(x)
  %c = gather(%r, first, axis=1)
  %l = gather(%r, cols, axis=-1)
  output cls = %c
  output last = %l
})",
                              {{"first", {0}}, {"cols", {7, -1, 0}}});
  std::vector<std::vector<float>> out = expect_matches_reference(g, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].size(), 16u);
  EXPECT_EQ(out[1].size(), 30u);
}

// A reflect pad of the innermost axis as the importer writes it: one
// element per index, 64 x 130 rows of them (past the size that runs on the
// OpenMP team), i32 and i64 indices counting from either end; the same
// result on one thread and two.
TEST(CpuGather, SingleElementRowsOfAPadGiveTheSameValuesOnAnyThreadCount) {
  for (const char* type : {"i64", "i32"}) {
    std::vector<double> cols{1};  // reflect by 1; odd columns from the front, even from the end
    for (int k = 0; k < 128; ++k) cols.push_back(k % 2 ? k : k - 128);
    cols.push_back(-2);
    const Graph g = with_values(std::string(R"(graph pad {
  input x: f32[64,130,128]
  weight cols: )") + type + R"([130]
  %l = gather(x, cols, axis=-1)
  output y = %l
})",
                                {{"cols", cols}});
    std::vector<std::vector<float>> one = expect_matches_reference(g, {}, 1);
    std::vector<std::vector<float>> two = expect_matches_reference(g, {}, 2);
    EXPECT_EQ(one, two) << type;
  }
}

// grid_sample (RAFT's lookups) after a convolution whose blocked output it
// reads as row-major, in every mode and padding mode, on one thread and two.
TEST(CpuGridSample, EveryModeAfterAConvolutionOnAnyThreadCount) {
  const Graph g = with_values(R"(graph warp {
  input x: f32[2,8,9,10]
  input grid: f32[2,5,7,2]
  weight w: f32[8,8,3,3]
  %c = conv2d(x, w, pad=same)
  %a = grid_sample(%c, grid)
  %b = grid_sample(%c, grid, mode="nearest", padding_mode="border", align_corners=1)
  %r = grid_sample(%c, grid, padding_mode="reflection")
  output y = %a
  output z = %b
  output u = %r
})",
                              {});
  std::vector<std::vector<float>> one = expect_matches_reference(g, {}, 1);
  std::vector<std::vector<float>> two = expect_matches_reference(g, {}, 2);
  EXPECT_EQ(one, two);
}

// top_k after a convolution (1x1: a product, which no plan computes by
// Winograd's less exact sums), along the channels and along the last axis,
// largest and smallest, over enough lines for the OpenMP team; and of rows
// with ties and NaN (0 / 0 where z is 0): NaN first among the largest, last
// among the smallest, the lower index first among equals. Indices read as f32.
TEST(CpuTopK, LargestAndSmallestWithTiesAndNaNOnAnyThreadCount) {
  const Graph g = with_values(R"(graph proposals {
  input x: f32[1,8,24,24]
  weight w: f32[16,8,1,1]
  weight z: i64[2,8]
  %c = conv2d(x, w)
  %v, %i = top_k(%c, axis=1, k=5)
  %s, %j = top_k(%c, axis=-1, k=24, largest=0)
  %f = cast(z, to="f32")
  %q = div(%f, %f)
  %u = mul(%f, %q)
  %tv, %ti = top_k(%u, axis=1, k=4)
  %bv, %bi = top_k(%u, axis=1, k=4, largest=0, sorted=0)
  %if = cast(%i, to="f32")
  %jf = cast(%j, to="f32")
  %tf = cast(%ti, to="f32")
  %bf = cast(%bi, to="f32")
  output v = %v
  output i = %if
  output s = %s
  output j = %jf
  output ti = %tf
  output bf = %bf
})",
                              {{"z", {2, 0, 1, 2, 0, 1, 1, 1, 3, 3, 0, 3, 3, 3, 3, 3}}});
  const std::vector<std::vector<float>> one = expect_matches_reference(g, {}, 1);
  const std::vector<std::vector<float>> two = expect_matches_reference(g, {}, 2);
  EXPECT_EQ(one, two);
  ASSERT_EQ(one.size(), 6u);
  // Row 0 of u: 2, NaN, 1, 2, NaN, 1, 1, 1; row 1: 3, 3, NaN, 3, 3, 3, 3, 3
  // (their values, NaN among them, are not outputs: NaN equals nothing).
  EXPECT_EQ(one[4], (std::vector<float>{1, 4, 0, 3, 2, 0, 1, 3}));
  EXPECT_EQ(one[5], (std::vector<float>{2, 5, 6, 7, 0, 1, 3, 4}));
}

// A lookup of stored rows by stored indices runs once, in the prologue; its
// indices are checked there.
TEST(CpuGather, ConstantLookupsRunInThePrologue) {
  const char* text = R"(graph rows {
  input x: f32[3,4]
  weight table: f32[10,4]
  weight pick: i64[3]
  %e = gather(table, pick, axis=0)
  %s = add(x, %e)
  output y = %s
})";
  const Graph g = with_values(text, {{"pick", {9, -10, 2}}});
  expect_matches_reference(g, {});
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ((*ex)->stats().steps, 1);  // the add
  Expected<std::unique_ptr<Executor>> bad =
      Executor::create(with_values(text, {{"pick", {9, 10, 2}}}), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "node '%e' (gather): gather: index 10 at position 1 is out of range for axis 0 of "
            "f32[10,4]");
}

// Token ids come at run time: one out of range stops the run with an error
// naming the node, the index and its position; the next run with valid ids
// succeeds.
TEST(CpuGather, AnIndexOutOfRangeAtRunTimeIsAnErrorNamingTheNode) {
  const Graph g = with_values(kEmbedding, {});
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  std::vector<int64_t> ids = ids_in(64, 50, 3);
  ids[37] = 50;
  ASSERT_TRUE((*ex)->set_input("ids", bytes_of(ids)).ok());
  Status s = (*ex)->run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "node '%e' (gather): gather: index 50 at position 37 is out of range for axis 0 of "
            "f32[50,32]");
  ids[37] = -51;
  ASSERT_TRUE((*ex)->set_input("ids", bytes_of(ids)).ok());
  s = (*ex)->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("index -51 at position 37"), std::string::npos)
      << s.error().message;
  ids[37] = -50;
  ASSERT_TRUE((*ex)->set_input("ids", bytes_of(ids)).ok());
  EXPECT_TRUE((*ex)->run().ok());
}

// DeBERTa's relative-position attention: scores [batch, heads, query, 2 x
// span] read one element per (query, key) at stored positions, negative ones
// counting from the end; an i32 variant, and one large enough to run in
// parallel.
TEST(CpuGather, ElementsOfRelativePositionScores) {
  for (const char* type : {"i64", "i32"}) {
    for (int64_t heads : {4, 64}) {
      const std::string h = std::to_string(heads);
      const std::string text = "graph c2p {\n  input x: f32[2," + h +
                               ",8,16]\n  weight pos: " + type + "[2," + h + R"(,8,8]
  %r = relu(x)
  %g = gather_elements(%r, pos, axis=-1)
  output y = %g
})";
      const std::vector<int64_t> pos = ids_in(2 * heads * 64, 16, 9);
      const Graph g = with_values(text, {{"pos", std::vector<double>(pos.begin(), pos.end())}});
      std::vector<std::vector<float>> out = expect_matches_reference(g, {});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].size(), static_cast<size_t>(2 * heads * 64));
    }
  }
}

// Indices fed at run time along the middle axis of a smaller index tensor:
// one out of range is an error naming the node, the index and its position.
TEST(CpuGather, ElementIndicesOutOfRangeAtRunTimeAreAnErrorNamingTheNode) {
  const Graph g = with_values(R"(graph pick {
  input x: f32[3,4,5]
  input ids: i64[2,3,5]
  %g = gather_elements(x, ids, axis=1)
  output y = %g
})",
                              {});
  std::vector<int64_t> ids = ids_in(30, 4, 4);
  expect_matches_reference(g, ids);
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  ids[17] = 4;
  ASSERT_TRUE((*ex)->set_input("ids", bytes_of(ids)).ok());
  ASSERT_TRUE((*ex)->set_input("x", bytes_of(std::vector<float>(60, 1.f))).ok());
  Status s = (*ex)->run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "node '%g' (gather_elements): gather_elements: index 4 at position 17 is out of range "
            "for axis 1 of f32[3,4,5]");
}

// A transformers attention mask (i64 0/1 per token) made an additive bias:
// unsqueezed, expanded to [batch, 1, seq, seq], cast to f32, inverted, cast
// to bool and selected; then a cast to i32 and back truncates the scores.
TEST(CpuGather, AnAttentionMaskExpandedAndCast) {
  const Graph g = with_values(R"(graph mask {
  input mask: i64[2,8]
  input scores: f32[2,4,8,8]
  weight one: f32[]
  weight low: f32[]
  %u = unsqueeze(mask, axes=[1,2])
  %e = expand(%u, shape=[2,1,8,8])
  %f = cast(%e, to="f32")
  %i = sub(one, %f)
  %b = cast(%i, to="bool")
  %w = where(%b, low, scores)
  %t = cast(%w, to="i32")
  %back = cast(%t, to="f32")
  output y = %w
  output z = %back
})",
                              {});
  std::vector<int64_t> mask(16, 1);
  mask[6] = mask[7] = mask[15] = 0;
  std::vector<std::vector<float>> out = expect_matches_reference(g, mask);
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < out[1].size(); ++i) EXPECT_EQ(out[1][i], std::trunc(out[0][i])) << i;
}

// RoBERTa's position ids: the tokens that are not padding (id 1) counted
// along the sequence in i32, back to i64 and offset by the padding id, the
// padding's own position selected by an i64 where, then looked up; run in parallel past the
// kernels' threshold on the long batch.
TEST(CpuLogic, PositionIdsFromTokenIds) {
  for (int64_t batch : {2, 2048}) {
    const std::string rows = std::to_string(batch);
    const std::string text = "graph positions {\n  input ids: i64[" + rows + R"(,16]
  weight pad: i64[]
  weight table: f32[18,8]
  %e = equal(ids, pad)
  %n = not(%e)
  %m = cast(%n, to="i32")
  %c = cumsum(%m, axis=1)
  %k = mul(%c, %m)
  %l = cast(%k, to="i64")
  %p = add(%l, pad)
  %s = where(%n, %p, pad)
  %g = gather(table, %s, axis=0)
  output y = %g
})";
    const Graph g = with_values(text, {{"pad", {1}}});
    std::vector<int64_t> ids = ids_in(batch * 16, 4, 7);
    for (int64_t& id : ids) id = std::abs(id);  // 0 to 4, a quarter of them padding
    expect_matches_reference(g, ids);
  }
}

// Masks from float comparisons (NaN-free inputs), their logic, where and
// cumsum in all directions, against the reference.
TEST(CpuLogic, FloatComparisonsLogicAndCumSum) {
  const Graph g = with_values(R"(graph masks {
  input x: f32[2,3,8]
  input z: f32[3,1]
  weight half: f32[1]
  %l = less(x, z)
  %g = greater(x, half)
  %e = equal(x, x)
  %n = not(%g)
  %a = and(%l, %e)
  %o = or(%a, %n)
  %w = where(%o, x, z)
  %c = cumsum(%w, axis=-1)
  %r = cumsum(x, axis=1, exclusive=1, reverse=1)
  output y = %c
  output r = %r
})",
                              {});
  expect_matches_reference(g, {});
}

// arg_max of token ids with ties (the first, or with select_last_index the
// last), of floats along a middle axis, and of rows with NaN, which is the
// largest: 0 / 0 where z is 0. The i64 results are read as f32.
TEST(CpuLogic, ArgMaxOfIdsAndFloatsWithTiesAndNaN) {
  const Graph g = with_values(R"(graph picks {
  input ids: i64[2,8]
  input x: f32[2,3,8]
  weight z: i64[2,8]
  %a = arg_max(ids, axis=1, keepdims=0)
  %b = arg_max(ids, axis=-1, select_last_index=1)
  %c = arg_max(x, axis=1)
  %f = cast(z, to="f32")
  %q = div(%f, %f)
  %n = arg_max(%q, axis=1, keepdims=0)
  %l = arg_max(%q, axis=1, keepdims=0, select_last_index=1)
  %af = cast(%a, to="f32")
  %bf = cast(%b, to="f32")
  %cf = cast(%c, to="f32")
  %nf = cast(%n, to="f32")
  %lf = cast(%l, to="f32")
  output a = %af
  output b = %bf
  output c = %cf
  output n = %nf
  output l = %lf
})",
                              {{"z", {1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}});
  const std::vector<std::vector<float>> outs = expect_matches_reference(g, ids_in(16, 3, 9));
  ASSERT_EQ(outs.size(), 5u);
  EXPECT_EQ(outs[3], (std::vector<float>{1, 0}));  // the first NaN; the first of equals
  EXPECT_EQ(outs[4], (std::vector<float>{3, 7}));  // the last NaN; the last of equals
}

// Integer division has no CPU kernel: an error naming the node, not a wrong
// answer.
TEST(CpuLogic, IntegerDivisionIsAnErrorNamingTheNode) {
  const Graph g = with_values(R"(graph halve {
  input ids: i64[4]
  weight two: i64[]
  %d = div(ids, two)
  output y = %d
})",
                              {{"two", {2}}});
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message.find("node '%d' (div) computes on i64[4]"), std::string::npos)
      << ex.error().message;
}

}  // namespace
}  // namespace tso::cpu
