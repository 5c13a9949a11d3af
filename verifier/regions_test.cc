// The region check against brute force: for every mutant family, the
// positions covered by the wrong boxes are exactly those where the programs
// differ when evaluated whole (reference executor, Mod, several random
// inputs); mutants caught only by a step position, the boxes' tiling and the
// positions that decide them, and the errors.
#include "verifier/regions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>

#include "core/text_format.h"
#include "runtime/reference/executor.h"
#include "verifier/box_derivation.h"
#include "verifier/position_eval.h"

namespace tso::verifier {
namespace {

using Positions = std::set<std::pair<int, int64_t>>;  // (output, row-major index)

// `text` with every {NAME} replaced by its value.
std::string fill(std::string text, const std::map<std::string, int64_t>& vars) {
  for (const auto& [name, value] : vars) {
    const std::string key = "{" + name + "}";
    for (size_t at; (at = text.find(key)) != std::string::npos;)
      text.replace(at, key.size(), std::to_string(value));
  }
  return text;
}

Graph parse(const std::string& text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.error().message << "\n" << text;
  return g.ok() ? *g : Graph{};
}

std::vector<int64_t> strides(const Shape& s) {
  std::vector<int64_t> st(s.rank(), 1);
  for (int i = s.rank() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Every position of the boxes; a position covered twice fails the test.
Positions covered(const Graph& g, const std::vector<std::pair<int, Box>>& boxes) {
  Positions out;
  for (const auto& [o, box] : boxes) {
    const Shape& shape = g.type(g.outputs()[o].ref).shape;
    const std::vector<int64_t> st = strides(shape);
    std::vector<int64_t> at = box.starts;
    bool empty = false;
    for (size_t a = 0; a < at.size(); ++a) empty = empty || box.starts[a] >= box.ends[a];
    if (empty) continue;
    while (true) {
      int64_t flat = 0;
      for (size_t a = 0; a < at.size(); ++a) flat += at[a] * st[a];
      EXPECT_TRUE(out.insert({o, flat}).second) << "position covered twice in output " << o;
      int a = static_cast<int>(at.size()) - 1;
      for (; a >= 0; --a) {
        if (++at[a] < box.ends[a]) break;
        at[a] = box.starts[a];
      }
      if (a < 0) break;
    }
  }
  return out;
}

Positions covered(const Graph& g, const std::vector<Box>& boxes) {
  std::vector<std::pair<int, Box>> tagged;
  for (const Box& b : boxes) tagged.push_back({b.output, b});
  return covered(g, tagged);
}

// Positions where the whole programs differ on any of `runs` random inputs.
Positions brute_force(const Graph& source, const Graph& mutant, int runs = 3) {
  std::mt19937_64 rng(7);
  Positions out;
  for (int run = 0; run < runs; ++run) {
    std::map<std::string, ref::Tensor<ref::Mod>> feeds;
    for (const Graph* g : {&source, &mutant})
      for (int i : g->input_nodes()) {
        const Node& n = g->node(i);
        if (feeds.count(n.name)) continue;
        ref::Tensor<ref::Mod> t(n.outs[0].shape);
        for (ref::Mod& v : t.data) v = ref::Mod(rng());
        feeds.emplace(n.name, std::move(t));
      }
    Expected<std::vector<ref::Tensor<ref::Mod>>> a = ref::evaluate<ref::Mod>(source, feeds);
    Expected<std::vector<ref::Tensor<ref::Mod>>> b = ref::evaluate<ref::Mod>(mutant, feeds);
    EXPECT_TRUE(a.ok() && b.ok());
    if (!a.ok() || !b.ok()) return out;
    for (size_t o = 0; o < a->size(); ++o)
      for (int64_t i = 0; i < (*a)[o].numel(); ++i)
        if (!((*a)[o].data[i] == (*b)[o].data[i])) out.insert({static_cast<int>(o), i});
  }
  return out;
}

// Positions where the whole programs differ in double on any of `runs`
// inputs drawn from [-1, 1]: the truth for clip, whose Mod form clamps
// random field elements (the region check uses another surrogate).
Positions brute_force_real(const Graph& source, const Graph& mutant, int runs = 16) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Positions out;
  for (int run = 0; run < runs; ++run) {
    std::map<std::string, ref::Tensor<double>> feeds;
    for (int i : source.input_nodes()) {
      ref::Tensor<double> t(source.node(i).outs[0].shape);
      for (double& v : t.data) v = uniform(rng);
      feeds.emplace(source.node(i).name, std::move(t));
    }
    Expected<std::vector<ref::Tensor<double>>> a = ref::evaluate<double>(source, feeds);
    Expected<std::vector<ref::Tensor<double>>> b = ref::evaluate<double>(mutant, feeds);
    EXPECT_TRUE(a.ok() && b.ok());
    if (!a.ok() || !b.ok()) return out;
    for (size_t o = 0; o < a->size(); ++o)
      for (int64_t i = 0; i < (*a)[o].numel(); ++i)
        if (std::abs((*a)[o].data[i] - (*b)[o].data[i]) > 1e-9)
          out.insert({static_cast<int>(o), i});
  }
  return out;
}

RegionResult decide(const Graph& source, const Graph& mutant) {
  Expected<RegionResult> r = decide_regions(source, mutant);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : RegionResult{};
}

// The boxes the check decides: they tile each output exactly, and every
// position that decides a box lies inside it.
std::vector<std::pair<int, Layout>> check_boxes(const Graph& source, const Graph& mutant) {
  Expected<std::vector<Layout>> ls = output_layouts(source), lm = output_layouts(mutant);
  EXPECT_TRUE(ls.ok() && lm.ok());
  std::vector<std::pair<int, Layout>> out;
  if (!ls.ok() || !lm.ok()) return out;
  Positions all;
  for (size_t o = 0; o < ls->size(); ++o) {
    const Layout layout = refine((*ls)[o], (*lm)[o]);
    const Shape& shape = source.type(source.outputs()[o].ref).shape;
    std::vector<std::pair<int, Box>> pieces_of_all;
    for (const SubBox& box : boxes_of(layout)) {
      std::vector<std::pair<int, Box>> pieces;
      for (auto& [s, e] : contiguous_pieces(layout, box))
        pieces.push_back({int(o), {int(o), s, e}});
      Positions inside = covered(source, pieces);
      for (const std::vector<int64_t>& p : deciding_positions(layout, box)) {
        int64_t flat = 0;
        for (int a = 0; a < shape.rank(); ++a) flat += p[a] * strides(shape)[a];
        EXPECT_TRUE(inside.count({int(o), flat})) << "a deciding position lies outside its box";
      }
      pieces_of_all.insert(pieces_of_all.end(), pieces.begin(), pieces.end());
    }
    Positions tiled = covered(source, pieces_of_all);  // fails on overlaps
    EXPECT_EQ(static_cast<int64_t>(tiled.size()), shape.numel())
        << "boxes do not tile output " << o;
    out.push_back({int(o), layout});
  }
  return out;
}

// The main property: the region check agrees with brute force exactly.
void expect_exact(const Graph& source, const Graph& mutant, size_t expected_wrong) {
  check_boxes(source, mutant);
  const Positions truth = brute_force(source, mutant);
  EXPECT_EQ(truth.size(), expected_wrong) << "the mutant is not the one meant";
  const RegionResult r = decide(source, mutant);
  EXPECT_EQ(covered(source, r.wrong), truth);
  EXPECT_GT(r.boxes, 0);
  EXPECT_GT(r.false_equal_bound, 0);
  EXPECT_LT(r.false_equal_bound, 1e-16);
}

// ---- families --------------------------------------------------------------

const char* kConv = R"(graph source {
  input x: f32[{N},{C},{H},{W}]
  weight w: f32[{O},{CG},{K},{K}]
  %y = conv2d(x, w, pad=[{P},{P},{P},{P}], stride=[{S},{S}], groups={G})
  output y = %y
})";

// Two images stacked along H, convolved once, split back: wrong at the seam.
const char* kStacked = R"(graph mutant {
  input x: f32[2,{C},{H},{W}]
  weight w: f32[{O},{CG},{K},{K}]
  %a, %b = split(x, axis=0, sizes=[1,1])
  %s = concat(%a, %b, axis=2)
  %c = conv2d(%s, w, pad=[{P},{P},{P},{P}], stride=[{S},{S}], groups={G})
  %d, %e = split(%c, axis=2, sizes=[{HO},{HO}])
  %y = concat(%d, %e, axis=0)
  output y = %y
})";

std::map<std::string, int64_t> conv_vars(int64_t h, int64_t w, int64_t stride = 1,
                                         int64_t groups = 1) {
  return {{"N", 2},
          {"C", 4},
          {"H", h},
          {"W", w},
          {"O", 4},
          {"CG", 4 / groups},
          {"K", 3},
          {"P", 1},
          {"S", stride},
          {"G", groups},
          {"HO", (h - 1) / stride + 1}};
}

TEST(Regions, BatchStackedAlongH) {
  for (int64_t h : {5, 6}) {
    auto v = conv_vars(h, 5);
    // The last row of image 0 and the first of image 1, all channels and columns.
    expect_exact(parse(fill(kConv, v)), parse(fill(kStacked, v)), 2 * 4 * 5);
  }
}

TEST(Regions, StridedConvStackedAlongH) {
  // Stride 2 over even H: image 1's first row reads image 0's last row
  // (where the source reads padding); image 0's last row stays inside it.
  for (int64_t h : {6, 8}) {
    auto v = conv_vars(h, 6, 2);
    expect_exact(parse(fill(kConv, v)), parse(fill(kStacked, v)), 4 * 3);
  }
}

TEST(Regions, GroupedConvStackedAlongH) {
  auto v = conv_vars(6, 5, 1, 2);
  expect_exact(parse(fill(kConv, v)), parse(fill(kStacked, v)), 2 * 4 * 5);
}

// Tiles of H moved into the batch without halo: wrong at the tile borders.
const char* kTiles = R"(graph mutant {
  input x: f32[{N},{C},{H},{W}]
  weight w: f32[{O},{C},3,3]
  %r = reshape(x, shape=[{N},{C},2,{H2},{W}])
  %t = transpose(%r, perm=[2,0,1,3,4])
  %b = reshape(%t, shape=[{N2},{C},{H2},{W}])
  %c = conv2d(%b, w, pad=[1,1,1,1])
  %u = reshape(%c, shape=[2,{N},{O},{H2},{W}])
  %v = transpose(%u, perm=[1,2,0,3,4])
  %y = reshape(%v, shape=[{N},{O},{H},{W}])
  output y = %y
})";

// The same with a halo of one row: exact.
const char* kTilesHalo = R"(graph mutant {
  input x: f32[{N},{C},{H},{W}]
  weight w: f32[{O},{C},3,3]
  %p = pad(x, pads=[0,0,1,0,0,0,1,0])
  %t0 = slice(%p, starts=[0], ends=[{H2P}], axes=[2], steps=[1])
  %t1 = slice(%p, starts=[{H2}], ends=[{HP}], axes=[2], steps=[1])
  %b = concat(%t0, %t1, axis=0)
  %c = conv2d(%b, w, pad=[0,1,0,1])
  %d, %e = split(%c, axis=0, sizes=[{N},{N}])
  %y = concat(%d, %e, axis=2)
  output y = %y
})";

std::map<std::string, int64_t> tile_vars(int64_t h, int64_t w) {
  return {{"N", 2}, {"C", 3}, {"O", 2}, {"H", h}, {"W", w},  {"H2", h / 2},      {"N2", 4},
          {"K", 3}, {"P", 1}, {"S", 1}, {"G", 1}, {"CG", 3}, {"H2P", h / 2 + 2}, {"HP", h + 2}};
}

TEST(Regions, TilesWithoutHalo) {
  for (int64_t h : {6, 8}) {
    auto v = tile_vars(h, 5);
    expect_exact(parse(fill(kConv, v)), parse(fill(kTiles, v)), 2 * 2 * 2 * 5);
  }
}

TEST(Regions, TilesWithHalo) {
  for (int64_t h : {6, 8}) {
    auto v = tile_vars(h, 7);
    expect_exact(parse(fill(kConv, v)), parse(fill(kTilesHalo, v)), 0);
  }
}

// A dilated convolution as a plain one over the four interleaved sub-images.
const char* kDilated = R"(graph source {
  input x: f32[{N},{C},{H},{W}]
  weight w: f32[{O},{C},3,3]
  %y = conv2d(x, w, pad=[2,2,2,2], dilation=[2,2])
  output y = %y
})";

// {PERM} places the sub-images back; {REORDER}, when not empty, reorders
// the four sub-images (ph, pw) = 0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1) after the
// conv (a split and a concat, which cut the batch at every sub-image).
const char* kInterleaved = R"(graph mutant {
  input x: f32[{N},{C},{H},{W}]
  weight w: f32[{O},{C},3,3]
  %r = reshape(x, shape=[{N},{C},{H2},2,{W2},2])
  %t = transpose(%r, perm=[3,5,0,1,2,4])
  %b = reshape(%t, shape=[{N4},{C},{H2},{W2}])
  %c = conv2d(%b, w, pad=[1,1,1,1])
  {REORDER}
  %u = reshape({SRC}, shape=[2,2,{N},{O},{H2},{W2}])
  %v = transpose(%u, perm={PERM})
  %y = reshape(%v, shape=[{N},{O},{H},{W}])
  output y = %y
})";

std::string interleaved(int64_t h, int64_t w, const std::string& order = "",
                        const std::string& perm = "[2,3,4,0,5,1]", int64_t c = 3, int64_t o = 2) {
  std::string text = kInterleaved;
  const std::string reorder =
      order.empty() ? ""
                    : "%s0, %s1, %s2, %s3 = split(%c, axis=0, sizes=[{N},{N},{N},{N}])\n"
                      "  %o = concat(" +
                          order + ", axis=0)";
  text.replace(text.find("{REORDER}"), 9, reorder);
  text.replace(text.find("{SRC}"), 5, order.empty() ? "%c" : "%o");
  text.replace(text.find("{PERM}"), 6, perm);
  return fill(
      text,
      {{"N", 1}, {"C", c}, {"O", o}, {"H", h}, {"W", w}, {"H2", h / 2}, {"W2", w / 2}, {"N4", 4}});
}

std::string dilated(int64_t h, int64_t w, int64_t c = 3, int64_t o = 2) {
  return fill(kDilated, {{"N", 1}, {"C", c}, {"O", o}, {"H", h}, {"W", w}});
}

TEST(Regions, DilatedAsInterleaved) {
  for (auto [h, w] : {std::pair{6, 8}, std::pair{8, 6}, std::pair{4, 10}})
    expect_exact(parse(dilated(h, w)), parse(interleaved(h, w)), 0);
}

// Odd H padded to even, convolved, sliced back: exact.
TEST(Regions, OddPaddedToEven) {
  const Graph source = parse(fill(kConv, conv_vars(7, 5)));
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[2,4,7,5]
  weight w: f32[4,4,3,3]
  %p = pad(x, pads=[0,0,0,0,0,0,1,1])
  %c = conv2d(%p, w, pad=[1,1,1,1])
  %y = slice(%c, starts=[0,0], ends=[7,5], axes=[2,3], steps=[1,1])
  output y = %y
})");
  expect_exact(source, mutant, 0);
}

// Two sibling convolutions on one input as one grouped convolution.
TEST(Regions, SiblingConvsAsGroupedConv) {
  const Graph source = parse(R"(graph source {
  input x: f32[1,3,6,5]
  weight w1: f32[2,3,3,3]
  weight w2: f32[4,3,3,3]
  %a = conv2d(x, w1, pad=[1,1,1,1])
  %b = conv2d(x, w2, pad=[1,1,1,1])
  output a = %a
  output b = %b
})");
  // Groups need equal halves: w1 gets two more output channels, dropped after.
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[1,3,6,5]
  weight w1: f32[2,3,3,3]
  weight w2: f32[4,3,3,3]
  %w1p = pad(w1, pads=[0,0,0,0,2,0,0,0])
  %w = concat(%w1p, w2, axis=0)
  %xx = concat(x, x, axis=1)
  %c = conv2d(%xx, %w, pad=[1,1,1,1], groups=2)
  %a, %z, %b = split(%c, axis=1, sizes=[2,2,4])
  output a = %a
  output b = %b
})");
  expect_exact(source, mutant, 0);
}

// Two products of equal shapes as one batched product.
TEST(Regions, MatmulsAsBatchedMatmul) {
  const Graph source = parse(R"(graph source {
  input a1: f32[5,4]
  input b1: f32[4,3]
  input a2: f32[5,4]
  input b2: f32[4,3]
  %p = matmul(a1, b1)
  %q = matmul(a2, b2)
  output p = %p
  output q = %q
})");
  const Graph mutant = parse(R"(graph mutant {
  input a1: f32[5,4]
  input b1: f32[4,3]
  input a2: f32[5,4]
  input b2: f32[4,3]
  %a = concat(a1, a2, axis=0)
  %a3 = reshape(%a, shape=[2,5,4])
  %b = concat(b1, b2, axis=0)
  %b3 = reshape(%b, shape=[2,4,3])
  %c = matmul(%a3, %b3)
  %p, %q = split(%c, axis=0, sizes=[1,1])
  %p2 = reshape(%p, shape=[5,3])
  %q2 = reshape(%q, shape=[5,3])
  output p = %p2
  output q = %q2
})");
  expect_exact(source, mutant, 0);
}

TEST(Regions, AvgPoolStackedAlongH) {
  const Graph source = parse(R"(graph source {
  input x: f32[2,4,6,5]
  %y = avgpool(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1])
  output y = %y
})");
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[2,4,6,5]
  %a, %b = split(x, axis=0, sizes=[1,1])
  %s = concat(%a, %b, axis=2)
  %c = avgpool(%s, kernel=[3,3], stride=[1,1], pad=[1,1,1,1])
  %d, %e = split(%c, axis=2, sizes=[6,6])
  %y = concat(%d, %e, axis=0)
  output y = %y
})");
  expect_exact(source, mutant, 2 * 4 * 5);
}

// A correction's shape: the interior written over a wrong base is right,
// the ring around it wrong.
TEST(Regions, UpdateSlice) {
  const Graph source = parse(R"(graph source {
  input x: f32[1,2,6,7]
  weight w: f32[2,2,3,3]
  %y = conv2d(x, w, pad=[1,1,1,1])
  output y = %y
})");
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[1,2,6,7]
  weight w: f32[2,2,3,3]
  weight v: f32[2,2,3,3]
  %base = conv2d(x, v, pad=[1,1,1,1])
  %inner = conv2d(x, w)
  %y = update_slice(%base, %inner, starts=[0,0,1,1])
  output y = %y
})");
  expect_exact(source, mutant, 2 * (6 * 7 - 4 * 5));
}

// ---- position-wise operators -------------------------------------------------

// `text` with `op` applied to node `%name`'s result: that node becomes
// `%name0`, and `%name = op(%name0)` follows it.
std::string then_apply(std::string text, const std::string& name, const std::string& op) {
  const std::string line = "  %" + name + " = ";
  const size_t at = text.find(line);
  EXPECT_NE(at, std::string::npos) << "no node %" << name;
  if (at == std::string::npos) return text;
  text.replace(at, line.size(), "  %" + name + "0 = ");
  text.insert(text.find('\n', at), "\n  %" + name + " = " + op + "(%" + name + "0)");
  return text;
}

// PET's CSRNet rewrite: the dilated convolution and its relu both run on
// the interleaved sub-images.
TEST(Regions, DilatedReluAsInterleaved) {
  for (auto [h, w] : {std::pair{6, 8}, std::pair{8, 6}}) {
    const Graph source = parse(then_apply(dilated(h, w), "y", "relu"));
    const Graph mutant = parse(then_apply(interleaved(h, w), "c", "relu"));
    EXPECT_EQ(polynomial_degree(source), 4);
    expect_exact(source, mutant, 0);
  }
}

// The relu applied after the sub-images are placed back in one, before in
// the other: exact; and after a transpose in one, before in the other.
TEST(Regions, ReluBeforeOrAfterLayout) {
  const Graph after = parse(then_apply(interleaved(6, 8), "y", "relu"));
  const Graph before = parse(then_apply(interleaved(6, 8), "c", "relu"));
  expect_exact(after, before, 0);
  const Graph source = parse(R"(graph source {
  input x: f32[1,3,6,5]
  weight w: f32[2,3,3,3]
  %c = conv2d(x, w, pad=[1,1,1,1])
  %t = transpose(%c, perm=[0,2,3,1])
  %y = sigmoid(%t)
  output y = %y
})");
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[1,3,6,5]
  weight w: f32[2,3,3,3]
  %c = conv2d(x, w, pad=[1,1,1,1])
  %s = sigmoid(%c)
  %y = transpose(%s, perm=[0,2,3,1])
  output y = %y
})");
  expect_exact(source, mutant, 0);
}

// Stacked images with the relu after the conv: the seam rows stay wrong,
// and only they.
TEST(Regions, BatchStackedConvRelu) {
  for (int64_t h : {5, 6}) {
    auto v = conv_vars(h, 5);
    expect_exact(parse(then_apply(fill(kConv, v), "y", "relu")),
                 parse(then_apply(fill(kStacked, v), "c", "relu")), 2 * 4 * 5);
  }
}

// Every other position-wise operator on the stacked family: the same seam.
TEST(Regions, BatchStackedConvEachUnaryOperator) {
  auto v = conv_vars(6, 5);
  for (const char* op : {"sigmoid", "tanh", "erf", "gelu", "exp", "sqrt", "neg"}) {
    SCOPED_TRACE(op);
    expect_exact(parse(then_apply(fill(kConv, v), "y", op)),
                 parse(then_apply(fill(kStacked, v), "c", op)), 2 * 4 * 5);
  }
}

// Tiles without halo with act=relu fused into the conv: wrong at the tile
// borders; with a halo exact.
TEST(Regions, TilesWithFusedRelu) {
  auto fused = [](std::string text) {
    text.insert(text.find(")", text.find("conv2d(")), ", act=relu");
    return text;
  };
  auto v = tile_vars(6, 5);
  expect_exact(parse(fused(fill(kConv, v))), parse(fused(fill(kTiles, v))), 2 * 2 * 2 * 5);
  v = tile_vars(6, 7);
  expect_exact(parse(fused(fill(kConv, v))), parse(fused(fill(kTilesHalo, v))), 0);
  // The fused form and the standalone relu are the same program.
  expect_exact(parse(fused(fill(kConv, v))), parse(then_apply(fill(kTilesHalo, v), "c", "relu")),
               0);
}

// Two convolutions with a sigmoid between them over stacked images: the
// second convolution widens the wrong rows to two on each side of the seam.
TEST(Regions, StackedConvSigmoidConv) {
  const Graph source = parse(R"(graph source {
  input x: f32[2,3,6,5]
  weight w: f32[4,3,3,3]
  weight v: f32[2,4,3,3]
  %c = conv2d(x, w, pad=[1,1,1,1])
  %s = sigmoid(%c)
  %y = conv2d(%s, v, pad=[1,1,1,1])
  output y = %y
})");
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[2,3,6,5]
  weight w: f32[4,3,3,3]
  weight v: f32[2,4,3,3]
  %a, %b = split(x, axis=0, sizes=[1,1])
  %t = concat(%a, %b, axis=2)
  %c = conv2d(%t, w, pad=[1,1,1,1])
  %s = sigmoid(%c)
  %e = conv2d(%s, v, pad=[1,1,1,1])
  %d, %f = split(%e, axis=2, sizes=[6,6])
  %y = concat(%d, %f, axis=0)
  output y = %y
})");
  EXPECT_EQ(polynomial_degree(source), 7);
  expect_exact(source, mutant, 4 * 2 * 5);
  const RegionResult r = decide(source, mutant);
  EXPECT_EQ(r.wrong,
            (std::vector<Box>{{0, {0, 0, 4, 0}, {1, 2, 6, 5}}, {0, {1, 0, 0, 0}, {2, 2, 2, 5}}}));
}

// A relu on the wrong tensor: on the grouped conv before the split (the
// second output, which has none in the source, is wrong) and on the other
// piece of the split (both outputs wrong).
TEST(Regions, ReluOnTheWrongTensorCaught) {
  const Graph source = parse(R"(graph source {
  input x: f32[1,3,6,5]
  weight w1: f32[2,3,3,3]
  weight w2: f32[4,3,3,3]
  %a = conv2d(x, w1, pad=[1,1,1,1])
  %r = relu(%a)
  %b = conv2d(x, w2, pad=[1,1,1,1])
  output a = %r
  output b = %b
})");
  const std::string grouped = R"(graph mutant {
  input x: f32[1,3,6,5]
  weight w1: f32[2,3,3,3]
  weight w2: f32[4,3,3,3]
  %w1p = pad(w1, pads=[0,0,0,0,2,0,0,0])
  %w = concat(%w1p, w2, axis=0)
  %xx = concat(x, x, axis=1)
  %c = conv2d(%xx, %w, pad=[1,1,1,1], groups=2)
  %a, %z, %b = split(%c, axis=1, sizes=[2,2,4])
  output a = %a
  output b = %b
})";
  std::string right = grouped;
  right.replace(right.find("output a = %a"), 13, "%r = relu(%a)\n  output a = %r");
  expect_exact(source, parse(right), 0);
  expect_exact(source, parse(then_apply(grouped, "c", "relu")), 4 * 6 * 5);
  std::string swapped = grouped;
  swapped.replace(swapped.find("output b = %b"), 13, "%r = relu(%b)\n  output b = %r");
  expect_exact(source, parse(swapped), (2 + 4) * 6 * 5);
}

// clip's Mod clamp sends random field elements to its bounds, so the truth
// here is computed in double; the check uses its own surrogate, which also
// tells clips with other bounds apart.
TEST(Regions, StackedConvClip) {
  auto v = conv_vars(6, 5);
  auto clipped = [](std::string text, const std::string& name, const std::string& bounds) {
    text = then_apply(text, name, "relu");
    const std::string relu = "relu(%" + name + "0)";
    text.replace(text.find(relu), relu.size(), "clip(%" + name + "0, " + bounds + ")");
    return text;
  };
  const Graph source = parse(clipped(fill(kConv, v), "y", "min=0, max=6"));
  const Graph mutant = parse(clipped(fill(kStacked, v), "c", "min=0, max=6"));
  const Positions truth = brute_force_real(source, mutant);
  EXPECT_EQ(truth.size(), 2u * 4 * 5);
  EXPECT_EQ(covered(source, decide(source, mutant).wrong), truth);
  EXPECT_EQ(polynomial_degree(source), 4);
  const Graph other = parse(clipped(fill(kConv, v), "y", "min=0, max=5"));
  EXPECT_EQ(covered(source, decide(source, other).wrong).size(), 2u * 4 * 6 * 5);
  EXPECT_TRUE(decide(source, source).wrong.empty());
}

// gemm with act=relu as two gemms over the halves of A's rows (A given
// transposed): exact; without the act, or with another alpha, on the second
// half: its rows wrong.
TEST(Regions, GemmFusedReluSplitRows) {
  const Graph source = parse(R"(graph source {
  input a: f32[3,6]
  input b: f32[4,3]
  input c: f32[4]
  %y = gemm(a, b, c, trans_a=1, trans_b=1, alpha=2, beta=3, act=relu)
  output y = %y
})");
  const std::string mutant = R"(graph mutant {
  input a: f32[3,6]
  input b: f32[4,3]
  input c: f32[4]
  %a0, %a1 = split(a, axis=1, sizes=[2,4])
  %p = gemm(%a0, b, c, trans_a=1, trans_b=1, alpha=2, beta=3, act=relu)
  %q = gemm(%a1, b, c, trans_a=1, trans_b=1, alpha=2, beta=3, act={ACT})
  %y = concat(%p, %q, axis=0)
  output y = %y
})";
  EXPECT_EQ(polynomial_degree(source), 4);
  std::string exact = mutant, no_act = mutant, alpha = mutant;
  exact.replace(exact.find("{ACT}"), 5, "relu");
  no_act.replace(no_act.find("{ACT}"), 5, "none");
  alpha.replace(alpha.find("{ACT}"), 5, "relu");
  alpha.replace(alpha.rfind("alpha=2"), 7, "alpha=1");
  expect_exact(source, parse(exact), 0);
  expect_exact(source, parse(no_act), 4 * 4);
  expect_exact(source, parse(alpha), 4 * 4);
}

// Every position of `text`'s first output, each evaluated alone, equals the
// whole program on the reference executor (Mod, the same input values).
void expect_positions_equal_the_reference_executor(const std::string& text) {
  SCOPED_TRACE(text);
  const Graph g = parse(text);
  std::map<std::string, ref::Tensor<ref::Mod>> feeds;
  for (int i : g.input_nodes()) {
    ref::Tensor<ref::Mod> t(g.node(i).outs[0].shape);
    for (int64_t k = 0; k < t.numel(); ++k) t.data[k] = input_value(5, 1, g.node(i).name, k);
    feeds.emplace(g.node(i).name, std::move(t));
  }
  Expected<std::vector<ref::Tensor<ref::Mod>>> whole = ref::evaluate<ref::Mod>(g, feeds);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  PositionEvaluator e(g);
  e.start(5, 1);
  const Shape& s = (*whole)[0].shape;
  std::vector<int64_t> at(s.rank(), 0);
  for (int64_t k = 0; k < s.numel(); ++k) {
    for (int64_t d = s.rank() - 1, rest = k; d >= 0; rest /= s[d], --d) at[d] = rest % s[d];
    ASSERT_EQ(e.output(0, at).v, (*whole)[0].data[k].v) << "position " << k;
  }
}

// A position evaluated alone equals the whole program on the reference
// executor (Mod, the same input values), for every position-wise operator
// but clip, fused activations and gemm's transposes, scales and bias.
TEST(Regions, PositionsEqualTheReferenceExecutor) {
  std::vector<std::string> programs;
  for (const char* op : {"relu", "sigmoid", "tanh", "erf", "gelu", "exp", "sqrt", "neg"})
    programs.push_back(then_apply(fill(kConv, conv_vars(5, 4)), "y", op));
  for (const char* act : {"relu", "sigmoid", "tanh"}) {
    std::string conv = fill(kConv, conv_vars(5, 4));
    conv.insert(conv.find(")", conv.find("conv2d(")), std::string(", act=") + act);
    programs.push_back(conv);
    programs.push_back(std::string("graph g {\n  input a: f32[2,5,3]\n  input b: f32[3,4]\n") +
                       "  %y = matmul(a, b, act=" + act + ")\n  output y = %y\n}");
  }
  for (const char* t : {"trans_a=0, trans_b=0", "trans_a=1, trans_b=1"})
    programs.push_back(
        std::string("graph g {\n  input a: f32[4,4]\n  input b: f32[4,4]\n  input c: f32[4,1]\n") +
        "  %y = gemm(a, b, c, alpha=3, beta=-2, act=tanh, " + t + ")\n  output y = %y\n}");
  for (const std::string& text : programs) expect_positions_equal_the_reference_executor(text);
}

// The reductions read their operands a row at a time (`PositionEvaluator::
// row`): through every data movement operator, along the axis it moves and
// across the others, with seams inside the row (a concat's, a pad's border,
// an update's patch), strided slices, a reshape that carries over from one
// axis into the next, and chains of them.
TEST(Regions, ReductionsReadThroughDataMovementAsTheReferenceExecutor) {
  const std::string head = "graph g {\n  input a: f32[1,2,4,5]\n  input b: f32[1,3,4,5]\n";
  const std::string conv5 = "  input w: f32[2,5,3,3]\n";
  const std::string out = "  output y = %y\n}";
  const std::vector<std::string> programs = {
      // along the channels a convolution reduces over
      head + conv5 + "  %x = concat(a, b, axis=1)\n  %y = conv2d(%x, w, pad=[1,1,1,1])\n" + out,
      head + conv5 + "  %x = concat(b, a, axis=1)\n  %y = conv2d(%x, w, pad=[0,1,2,1])\n" + out,
      head + "  input w: f32[2,2,3,3]\n" +
          "  %x = slice(b, axes=[1,3], starts=[0,1], ends=[3,5], steps=[2,1])\n" +
          "  %y = conv2d(%x, w, pad=[1,1,1,1])\n" + out,
      head + "  input w: f32[2,6,3,3]\n" +
          "  %x = pad(b, pads=[0,1,0,1,0,2,1,0], value=2)\n  %y = conv2d(%x, w)\n" + out,
      head + conv5 + "  input p: f32[1,2,2,3]\n" +
          "  %x = concat(a, b, axis=1)\n  %u = update_slice(%x, p, starts=[0,2,1,1])\n" +
          "  %y = conv2d(%u, w, pad=[1,1,1,1])\n" + out,
      head + "  input w: f32[2,2,3,3]\n" +
          "  %s, %t = split(b, axis=1, sizes=[1,2])\n  %y = conv2d(%t, w, pad=[1,1,1,1])\n" + out,
      head + "  input w: f32[2,4,3,3]\n" +
          "  %t = transpose(a, perm=[0,2,1,3])\n  %y = conv2d(%t, w, pad=[1,1,1,1])\n" + out,
      // a reshape of [1,6,2,5]: channel steps of 10 cross b's H-by-W planes of 20
      head + "  input w: f32[2,6,3,3]\n" +
          "  %r = reshape(b, shape=[1,6,2,5])\n  %y = conv2d(%r, w, pad=[1,1,1,1])\n" + out,
      // ... and of a concat, whose seam a row past H's end would miss
      head + "  input w: f32[2,10,3,3]\n  %x = concat(a, b, axis=1)\n" +
          "  %r = reshape(%x, shape=[1,10,2,5])\n  %y = conv2d(%r, w, pad=[1,1,1,1])\n" + out,
      head + "  input w: f32[3,3,1,1]\n" +
          "  %r = reshape(a, shape=[1,8,5])\n  %t = transpose(%r, perm=[0,2,1])\n" +
          "  %q = reshape(%t, shape=[1,5,2,4])\n  %c = concat(%q, %q, axis=1)\n" +
          "  %s = slice(%c, axes=[1], starts=[1], ends=[7], steps=[2])\n" +
          "  %y = conv2d(%s, w)\n" + out,
      // the weight moved: enlarged, or sliced from a concat
      head + "  input w: f32[2,2,1,1]\n  %e = enlarge(w, kernel=[3,3])\n" +
          "  %y = conv2d(a, %e, pad=[1,1,1,1])\n" + out,
      head + "  input w: f32[2,2,3,3]\n  input v: f32[2,3,3,3]\n" +
          "  %k = concat(w, v, axis=1)\n  %x = concat(a, b, axis=1)\n" +
          "  %y = conv2d(%x, %k, stride=[2,2], pad=[1,1,1,1])\n" + out,
      // the window's row of an average pool, and the products' reduction axes
      head + "  %x = pad(a, pads=[0,0,1,2,0,0,0,1], value=3)\n" +
          "  %y = avgpool(%x, kernel=[3,3], pad=[1,1,1,1], count_include_pad=1)\n" + out,
      head + "  %x = concat(a, a, axis=3)\n  %y = avgpool(%x, kernel=[2,3], stride=[1,2])\n" + out,
      "graph g {\n  input a: f32[2,3,4]\n  input b: f32[2,6,5]\n" +
          std::string("  %t = transpose(a, perm=[0,2,1])\n  %c = concat(%t, %t, axis=2)\n") +
          "  %y = matmul(%c, b)\n" + out,
      "graph g {\n  input a: f32[3,4]\n  input b: f32[5,1]\n  input c: f32[5,2]\n" +
          std::string("  %k = concat(b, c, axis=1)\n") +
          "  %y = gemm(a, %k, trans_a=1, trans_b=1)\n" + out,
  };
  for (const std::string& text : programs) expect_positions_equal_the_reference_executor(text);
}

// reads() counts every element read at every level, as a position-by-position
// walk does: a 1x1 convolution's output over a concat of 2 and 3 channels
// reads itself, then 5 elements of the concat, 5 of its inputs and 5 weights.
TEST(Regions, ReadsCountEveryElementAtEveryLevel) {
  const Graph g = parse(R"(graph g {
  input a: f32[1,2,3,3]
  input b: f32[1,3,3,3]
  input w: f32[4,5,1,1]
  %x = concat(a, b, axis=1)
  %y = conv2d(%x, w)
  output y = %y
})");
  PositionEvaluator e(g);
  e.start(5, 0);
  e.output(0, std::vector<int64_t>{0, 1, 2, 2});
  EXPECT_EQ(e.reads(), 16);
  e.output(0, std::vector<int64_t>{0, 1, 2, 2});  // remembered: one read
  EXPECT_EQ(e.reads(), 17);
}

// The degrees polynomial_degree assumes are the reference executor's
// surrogates': the (d+1)-th finite difference of a degree-d polynomial
// vanishes and its d-th does not.
TEST(Regions, SurrogateDegreesMatchTheReferenceExecutor) {
  for (const char* op : {"relu", "sigmoid", "tanh", "erf", "gelu", "exp", "sqrt", "neg"}) {
    SCOPED_TRACE(op);
    const Graph g = parse(std::string("graph g {\n  input x: f32[16]\n  %y = ") + op +
                          "(x)\n  output y = %y\n}");
    const int d = polynomial_degree(g);
    ref::Tensor<ref::Mod> x(Shape{16});
    for (int i = 0; i < 16; ++i) x.data[i] = ref::Mod(static_cast<uint64_t>(i));
    Expected<std::vector<ref::Tensor<ref::Mod>>> y = ref::evaluate<ref::Mod>(g, {{"x", x}});
    ASSERT_TRUE(y.ok()) << y.error().message;
    std::vector<ref::Mod> diff = (*y)[0].data;
    for (int k = 0; k < d; ++k)
      for (size_t i = 0; i + 1 < diff.size() - k; ++i) diff[i] = diff[i + 1] - diff[i];
    EXPECT_FALSE(diff[0] == ref::Mod()) << "degree below " << d;
    for (size_t i = 0; i + 1 < diff.size() - d; ++i)
      EXPECT_TRUE(diff[i + 1] - diff[i] == ref::Mod()) << "degree above " << d;
  }
}

// ---- soundness ---------------------------------------------------------------

// Positions of every box of the check that holds a position of `truth`: what
// the check reports when a box is wrong on part of it only.
Positions boxes_holding(const Graph& source, const Graph& mutant, const Positions& truth) {
  std::vector<std::pair<int, Box>> pieces;
  for (const auto& [o, layout] : check_boxes(source, mutant))
    for (const SubBox& box : boxes_of(layout)) {
      std::vector<std::pair<int, Box>> mine;
      for (auto& [s, e] : contiguous_pieces(layout, box)) mine.push_back({o, {o, s, e}});
      const Positions inside = covered(source, mine);
      if (std::any_of(inside.begin(), inside.end(), [&](auto& p) { return truth.count(p); }))
        pieces.insert(pieces.end(), mine.begin(), mine.end());
    }
  return covered(source, pieces);
}

// Boxes holding a differing position whose corner agrees on every test: a
// check from the corner alone would pass them.
int corner_only_misses(const Graph& source, const Graph& mutant, const Positions& truth) {
  PositionEvaluator es(source), em(mutant);
  int missed = 0;
  for (const auto& [o, layout] : check_boxes(source, mutant))
    for (const SubBox& box : boxes_of(layout)) {
      std::vector<std::pair<int, Box>> mine;
      for (auto& [s, e] : contiguous_pieces(layout, box)) mine.push_back({o, {o, s, e}});
      const Positions inside = covered(source, mine);
      if (std::none_of(inside.begin(), inside.end(), [&](auto& p) { return truth.count(p); }))
        continue;
      const std::vector<int64_t> corner = deciding_positions(layout, box)[0];
      bool agree = true;
      for (int t = 0; t < 2; ++t) {
        es.start(1, t);
        em.start(1, t);
        agree = agree && es.output(o, corner) == em.output(o, corner);
      }
      missed += agree;
    }
  return missed;
}

// A mutant wrong on part of a box only: the check reports the boxes that
// hold its differing positions, whole, and the corner alone would miss some.
void expect_caught_by_steps(const Graph& source, const Graph& mutant) {
  const Positions truth = brute_force(source, mutant);
  ASSERT_FALSE(truth.empty());
  const RegionResult r = decide(source, mutant);
  const Positions reported = covered(source, r.wrong);
  EXPECT_EQ(reported, boxes_holding(source, mutant, truth));
  EXPECT_TRUE(std::includes(reported.begin(), reported.end(), truth.begin(), truth.end()));
  EXPECT_GT(corner_only_misses(source, mutant, truth), 0);
}

// Sub-images of one H parity placed at the other: wrong everywhere.
TEST(Regions, InterleaveParitiesSwapped) {
  expect_exact(parse(dilated(6, 8)), parse(interleaved(6, 8, "%s2, %s3, %s0, %s1")), 2 * 6 * 8);
}

// The W parities swapped in odd rows only: the split and concat that swap
// them cut the batch of sub-images apart, so the boxes keep one parity each.
TEST(Regions, InterleaveParitiesSwappedInOddRows) {
  expect_exact(parse(dilated(6, 8)), parse(interleaved(6, 8, "%s0, %s1, %s3, %s2")), 2 * 3 * 8);
}

// H and W parities exchanged by the transpose that places the sub-images
// back: wrong where the parities differ (a checkerboard). Every box spans
// both parities of both axes, so its corner (even, even) agrees and the
// steps along the interleave sub-axes catch it.
TEST(Regions, InterleaveParitiesTransposed) {
  const Graph source = parse(dilated(6, 6)), mutant = parse(interleaved(6, 6, "", "[2,3,4,1,5,0]"));
  EXPECT_EQ(brute_force(source, mutant).size(), 2u * 18);
  expect_caught_by_steps(source, mutant);
}

// The mutant reads x[2h] where the source reads x[h]: equal at the box's
// corner h = 0 only.
TEST(Regions, DoubledIndexCaughtByStep) {
  const Graph source = parse(R"(graph source {
  input x: f32[1,2,12,3]
  %y = slice(x, starts=[0], ends=[6], axes=[2], steps=[1])
  output y = %y
})");
  const Graph mutant = parse(R"(graph mutant {
  input x: f32[1,2,12,3]
  %y = slice(x, starts=[0], ends=[12], axes=[2], steps=[2])
  output y = %y
})");
  EXPECT_EQ(brute_force(source, mutant).size(), 2u * 5 * 3);
  expect_caught_by_steps(source, mutant);
}

// ---- errors --------------------------------------------------------------------

std::string error_of(const Graph& source, const Graph& mutant, RegionOptions options = {}) {
  Expected<RegionResult> r = decide_regions(source, mutant, options);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

TEST(Regions, Errors) {
  const Graph conv = parse(fill(kConv, conv_vars(6, 5)));
  const Graph maxpool = parse(R"(graph mutant {
  input x: f32[2,4,6,5]
  weight w: f32[4,4,3,3]
  %c = conv2d(x, w, pad=[1,1,1,1])
  %y = maxpool(%c, kernel=[1,1], stride=[1,1])
  output y = %y
})");
  EXPECT_EQ(error_of(conv, maxpool),
            "region check: node '%y' (maxpool) is not a multilinear, position-wise or layout "
            "operator");
  const Graph gemm = parse(R"(graph source {
  input a: f32[4,3]
  input b: f32[3,2]
  %y = gemm(a, b, alpha=0.5)
  output y = %y
})");
  EXPECT_EQ(error_of(gemm, gemm), "region check: node '%y' (gemm) has alpha = 0.5, not an integer");
  const Graph other = parse(fill(kConv, conv_vars(8, 5)));
  EXPECT_EQ(error_of(conv, other),
            "region check: output 0 is f32[2,4,6,5] in the source and f32[2,4,8,5] in the mutant");
  EXPECT_EQ(error_of(conv, conv, {.tests = 1}), "region check: tests = 1, at least 2 needed");
}

// PET's CSRNet layer: a 512-channel dilated 3x3 convolution at 28x28 as a
// plain one over the interleaved sub-images, decided from a few dozen
// positions.
TEST(Regions, CsrnetScale) {
  const Graph source = parse(dilated(28, 28, 512, 512));
  const Graph mutant = parse(interleaved(28, 28, "", "[2,3,4,0,5,1]", 512, 512));
  const auto start = std::chrono::steady_clock::now();
  const RegionResult r = decide(source, mutant);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.wrong.empty());
  EXPECT_EQ(r.boxes, 9);
  std::printf("CSRNet layer: %lld boxes, %lld positions, %.1f ms\n",
              static_cast<long long>(r.boxes), static_cast<long long>(r.positions), ms);
}

// Past a limit on boxes or on elements read the pair is not decided, and the
// error says which; the optimizer's limits (4096 boxes, 4 M elements) decide
// the CSRNet layer.
TEST(Regions, LimitsLeaveAPairUndecided) {
  const Graph source = parse(dilated(28, 28, 512, 512));
  const Graph mutant = parse(interleaved(28, 28, "", "[2,3,4,0,5,1]", 512, 512));
  RegionOptions o;
  o.max_boxes = 8;
  Expected<RegionResult> r = decide_regions(source, mutant, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "region check: 9 boxes, over 8; not decided");
  o.max_boxes = 0;
  o.max_reads = 1000;
  r = decide_regions(source, mutant, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("over 1000 tensor elements read"), std::string::npos)
      << r.error().message;
  o.max_boxes = 4096;
  o.max_reads = 4'000'000;
  r = decide_regions(source, mutant, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->wrong.empty());
}

}  // namespace
}  // namespace tso::verifier
