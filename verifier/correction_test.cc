// Corrections: the mutant with its wrong boxes recomputed equals the source
// on the reference executor (double, 1e-9), for hand-written mutants of the
// PET families and for random boxes of every operator the planner knows;
// a correction that misses a box or recomputes a shifted one is caught.
#include "verifier/correction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "core/checker.h"
#include "core/text_format.h"
#include "runtime/reference/executor.h"
#include "verifier/numeric.h"
#include "verifier/regions.h"

namespace tso::verifier {
namespace {

Graph parse(const std::string& text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? *g : Graph{};
}

Box box(int output, std::vector<int64_t> starts, std::vector<int64_t> ends) {
  return {output, std::move(starts), std::move(ends)};
}

// Whether `mutant` differs from `source` exactly on the positions of
// `boxes`, on one random input: the hand-written boxes are the true ones.
void expect_wrong_exactly_on(const Graph& source, const Graph& mutant,
                             const std::vector<Box>& boxes) {
  std::mt19937_64 rng(7);
  auto feeds = random_feeds(source, rng);
  auto a = ref::evaluate<double>(source, feeds), b = ref::evaluate<double>(mutant, feeds);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  for (size_t o = 0; o < a->size(); ++o) {
    const Shape& s = (*a)[o].shape;
    std::vector<int64_t> at(s.rank(), 0);
    for (size_t i = 0; i < (*a)[o].data.size(); ++i) {
      for (int d = s.rank() - 1, rest = static_cast<int>(i); d >= 0; rest /= s[d], --d)
        at[d] = rest % s[d];
      bool in_box = false;
      for (const Box& x : boxes) {
        bool inside = x.output == static_cast<int>(o);
        for (int d = 0; inside && d < s.rank(); ++d)
          inside = x.starts[d] <= at[d] && at[d] < x.ends[d];
        in_box = in_box || inside;
      }
      const bool differs = std::abs((*a)[o].data[i] - (*b)[o].data[i]) > 1e-9;
      ASSERT_EQ(differs, in_box) << "output " << o << " position " << i;
    }
  }
}

// The largest relative error of `g` against `source` over two random inputs.
double error_against(const Graph& source, const Graph& g) {
  std::mt19937_64 rng(11);
  double worst = 0;
  for (int t = 0; t < 2; ++t) {
    Expected<double> e = compare_graphs(source, g, rng);
    EXPECT_TRUE(e.ok()) << e.error().message;
    worst = std::max(worst, e.ok() ? *e : INFINITY);
  }
  return worst;
}

Graph corrected(const Graph& source, const Graph& mutant, const std::vector<Box>& wrong) {
  Expected<Graph> g = correct(source, mutant, wrong);
  EXPECT_TRUE(g.ok()) << g.error().message;
  if (!g.ok()) return mutant;
  Status s = check(*g);
  EXPECT_TRUE(s.ok()) << s.error().message << "\n" << print(*g);
  return *g;
}

// The boxes where the region check finds `g` wrong.
std::vector<Box> wrong_boxes(const Graph& source, const Graph& g) {
  Expected<RegionResult> r = decide_regions(source, g);
  EXPECT_TRUE(r.ok()) << r.error().message << "\n" << print(g);
  return r.ok() ? r->wrong : std::vector<Box>{};
}

// The full round: the boxes are the mutant's wrong positions, the mutant
// is wrong, its correction is not, on the reference executor and for the
// region check; the boxes the region check finds correct it too.
void expect_corrects(const Graph& source, const Graph& mutant, const std::vector<Box>& wrong) {
  expect_wrong_exactly_on(source, mutant, wrong);
  EXPECT_GT(error_against(source, mutant), 1e-3);
  Graph g = corrected(source, mutant, wrong);
  EXPECT_LE(error_against(source, g), kDoubleTolerance) << print(g);
  EXPECT_TRUE(wrong_boxes(source, g).empty()) << print(g);
  std::vector<Box> found = wrong_boxes(source, mutant);
  EXPECT_FALSE(found.empty());
  Graph by_check = corrected(source, mutant, found);
  EXPECT_LE(error_against(source, by_check), kDoubleTolerance) << print(by_check);
}

// Two images stacked along H and convolved once: the rows beside the seam
// read the other image instead of the padding.
std::string stacked_h(const std::string& x, const std::string& w, const std::string& attrs,
                      int64_t h) {
  return R"(graph mutant {
  input x: f32)" +
         x + R"(
  weight w: f32)" +
         w + R"(
  %0, %1 = split(x, axis=0, sizes=[1,1])
  %2 = concat(%0, %1, axis=2)
  %3 = conv2d(%2, w)" +
         attrs + R"()
  %4, %5 = split(%3, axis=2, sizes=[)" +
         std::to_string(h) + "," + std::to_string(h) + R"(])
  %6 = concat(%4, %5, axis=0)
  output y = %6
})";
}

std::string single_conv(const std::string& x, const std::string& w, const std::string& attrs) {
  return "graph source {\n  input x: f32" + x + "\n  weight w: f32" + w + "\n  %0 = conv2d(x, w" +
         attrs + ")\n  output y = %0\n}";
}

TEST(Correction, StackedImagesSeamRows) {
  Graph source = parse(single_conv("[2,3,6,5]", "[4,3,3,3]", ", pad=same"));
  Graph mutant = parse(stacked_h("[2,3,6,5]", "[4,3,3,3]", ", pad=same", 6));
  std::vector<Box> wrong{box(0, {0, 0, 5, 0}, {1, 4, 6, 5}), box(0, {1, 0, 0, 0}, {2, 4, 1, 5})};
  expect_corrects(source, mutant, wrong);

  // Each box's conv reads two rows of one image (its own and its neighbour
  // inside the image) with one row of padding on the seam's far side, and
  // the weight whole.
  Graph g = corrected(source, mutant, wrong);
  int convs = 0;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::Conv2d || n.name.rfind("correction/", 0) != 0) continue;
    ++convs;
    EXPECT_EQ(g.type(n.args[0]).shape, (Shape{1, 3, 2, 5})) << n.name;
    EXPECT_EQ(g.node(n.args[1].node).op, Op::Weight) << n.name;
    const Padding& p = n.attrs.pad(AttrKey::pad);
    EXPECT_EQ(p.mode, Padding::kExplicit);
    EXPECT_EQ(p.pads[1] + p.pads[3], 2);            // W: the original padding
    EXPECT_EQ(p.pads[0] + p.pads[2], 1) << n.name;  // H: the image's border only
  }
  EXPECT_EQ(convs, 2);
  EXPECT_EQ(g.node(g.outputs()[0].ref.node).op, Op::UpdateSlice);
  EXPECT_EQ(g.node(g.outputs()[0].ref.node).name, "correction/box1/update_slice");
}

// A relu after the convolution in both programs, as in PET's CSRNet rules:
// the region check finds the seam rows, and each box's correction applies
// the relu to its own convolution's box. In double the relu hides part of
// the seam (where both values are negative), so the boxes are the region
// check's (on Mod), not the double differences.
TEST(Correction, StackedConvReluSeamRows) {
  const std::string source_text = R"(graph source {
  input x: f32[2,3,6,5]
  weight w: f32[4,3,3,3]
  weight b: f32[4]
  %0 = conv2d(x, w, b, pad=same)
  %1 = relu(%0)
  output y = %1
})";
  Graph source = parse(source_text);
  Graph mutant = parse(R"(graph mutant {
  input x: f32[2,3,6,5]
  weight w: f32[4,3,3,3]
  weight b: f32[4]
  %0, %1 = split(x, axis=0, sizes=[1,1])
  %2 = concat(%0, %1, axis=2)
  %3 = conv2d(%2, w, b, pad=same)
  %4 = relu(%3)
  %5, %6 = split(%4, axis=2, sizes=[6,6])
  %7 = concat(%5, %6, axis=0)
  output y = %7
})");
  const std::vector<Box> seam{box(0, {0, 0, 5, 0}, {1, 4, 6, 5}),
                              box(0, {1, 0, 0, 0}, {2, 4, 1, 5})};
  EXPECT_EQ(wrong_boxes(source, mutant), seam);
  EXPECT_GT(error_against(source, mutant), 1e-3);
  Graph g = corrected(source, mutant, seam);
  EXPECT_LE(error_against(source, g), kDoubleTolerance) << print(g);
  EXPECT_TRUE(wrong_boxes(source, g).empty()) << print(g);
  int relus = 0;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::Relu || n.name.rfind("correction/", 0) != 0) continue;
    ++relus;
    EXPECT_EQ(g.node(n.args[0].node).op, Op::Conv2d) << n.name;
    EXPECT_EQ(g.type(n.args[0]).shape, (Shape{1, 4, 1, 5})) << n.name;
  }
  EXPECT_EQ(relus, 2);

  // The relu fused into the source's convolution: the same boxes, the same
  // correction.
  std::string fused_text = source_text;
  fused_text.replace(fused_text.find("pad=same)"), 9, "pad=same, act=relu)");
  fused_text.erase(fused_text.find("  %1 = relu(%0)\n"), 16);
  fused_text.replace(fused_text.find("output y = %1"), 13, "output y = %0");
  Graph fused = parse(fused_text);
  EXPECT_EQ(wrong_boxes(fused, mutant), seam);
  EXPECT_LE(error_against(fused, corrected(fused, mutant, seam)), kDoubleTolerance);
}

TEST(Correction, EmptyBoxesReturnTheMutant) {
  Graph source = parse(single_conv("[2,3,6,5]", "[4,3,3,3]", ", pad=same"));
  Graph mutant = parse(stacked_h("[2,3,6,5]", "[4,3,3,3]", ", pad=same", 6));
  Expected<Graph> g = correct(source, mutant, {});
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(*g, mutant);
}

// Tiles of H moved into the batch without halo: the rows at the tile
// border miss their neighbours.
TEST(Correction, TilesInTheBatchWithoutHalo) {
  Graph source = parse(single_conv("[1,3,8,5]", "[4,3,3,3]", ", pad=same"));
  Graph mutant = parse(R"(graph mutant {
  input x: f32[1,3,8,5]
  weight w: f32[4,3,3,3]
  %0, %1 = split(x, axis=2, sizes=[4,4])
  %2 = concat(%0, %1, axis=0)
  %3 = conv2d(%2, w, pad=same)
  %4, %5 = split(%3, axis=0, sizes=[1,1])
  %6 = concat(%4, %5, axis=2)
  output y = %6
})");
  expect_corrects(source, mutant, {box(0, {0, 0, 3, 0}, {1, 4, 5, 5})});
}

// Stride 2 with asymmetric padding: only the first row of the second image
// reaches across the seam.
TEST(Correction, StridedConvolution) {
  const std::string attrs = ", stride=[2,2], pad=[1,0,0,1], dilation=[1,2]";
  Graph source = parse(single_conv("[2,3,8,7]", "[4,3,3,2]", attrs));
  Graph mutant = parse(stacked_h("[2,3,8,7]", "[4,3,3,2]", attrs, 4));
  expect_corrects(source, mutant, {box(0, {1, 0, 0, 0}, {2, 4, 1, 3})});
}

TEST(Correction, GroupedConvolution) {
  const std::string attrs = ", pad=same, groups=2";
  Graph source = parse(single_conv("[2,4,6,6]", "[6,2,3,3]", attrs));
  Graph mutant = parse(stacked_h("[2,4,6,6]", "[6,2,3,3]", attrs, 6));
  expect_corrects(source, mutant,
                  {box(0, {0, 0, 5, 0}, {1, 6, 6, 6}), box(0, {1, 0, 0, 0}, {2, 6, 1, 6})});
}

// A batched product whose last row was taken from the other batch entry
// (a stacked layout off by one at the seam).
TEST(Correction, BatchedMatmulSeam) {
  Graph source = parse(R"(graph source {
  input a: f32[2,4,3]
  input b: f32[2,3,5]
  %0 = matmul(a, b)
  output y = %0
})");
  Graph mutant = parse(R"(graph mutant {
  input a: f32[2,4,3]
  input b: f32[2,3,5]
  %0 = slice(a, starts=[0], ends=[3], axes=[1], steps=[1])
  %1, %2 = split(a, axis=0, sizes=[1,1])
  %3 = concat(%2, %1, axis=0)
  %4 = slice(%3, starts=[3], ends=[4], axes=[1], steps=[1])
  %5 = concat(%0, %4, axis=1)
  %6 = matmul(%5, b)
  output y = %6
})");
  expect_corrects(source, mutant, {box(0, {0, 3, 0}, {2, 4, 5})});
}

// Three images stacked: four seam rows on one output, a chain of four
// update_slice nodes.
TEST(Correction, SeveralBoxesOnOneOutput) {
  Graph source = parse(single_conv("[3,2,5,4]", "[2,2,3,3]", ", pad=same"));
  Graph mutant = parse(R"(graph mutant {
  input x: f32[3,2,5,4]
  weight w: f32[2,2,3,3]
  %0, %1, %2 = split(x, axis=0, sizes=[1,1,1])
  %3 = concat(%0, %1, %2, axis=2)
  %4 = conv2d(%3, w, pad=same)
  %5, %6, %7 = split(%4, axis=2, sizes=[5,5,5])
  %8 = concat(%5, %6, %7, axis=0)
  output y = %8
})");
  std::vector<Box> wrong{box(0, {0, 0, 4, 0}, {1, 2, 5, 4}), box(0, {1, 0, 0, 0}, {2, 2, 1, 4}),
                         box(0, {1, 0, 4, 0}, {2, 2, 5, 4}), box(0, {2, 0, 0, 0}, {3, 2, 1, 4})};
  expect_corrects(source, mutant, wrong);
  Graph g = corrected(source, mutant, wrong);
  int writes = 0;
  for (TensorRef r = g.outputs()[0].ref; g.node(r.node).op == Op::UpdateSlice;
       r = g.node(r.node).args[0])
    ++writes;
  EXPECT_EQ(writes, 4);
}

// Two outputs (a convolution and a pooling of it), both computed on the
// stacked images: the boxes of each output are written into that output
// alone; the pooling's seam is two rows deep on each side.
TEST(Correction, TwoOutputs) {
  Graph source = parse(R"(graph source {
  input x: f32[2,2,4,4]
  weight w: f32[3,2,3,3]
  %0 = conv2d(x, w, pad=same)
  %1 = avgpool(%0, kernel=[3,3], pad=[1,1,1,1])
  output y = %0
  output z = %1
})");
  Graph mutant = parse(R"(graph mutant {
  input x: f32[2,2,4,4]
  weight w: f32[3,2,3,3]
  %0, %1 = split(x, axis=0, sizes=[1,1])
  %2 = concat(%0, %1, axis=2)
  %3 = conv2d(%2, w, pad=same)
  %4 = avgpool(%3, kernel=[3,3], pad=[1,1,1,1])
  %5, %6 = split(%3, axis=2, sizes=[4,4])
  %7 = concat(%5, %6, axis=0)
  %8, %9 = split(%4, axis=2, sizes=[4,4])
  %10 = concat(%8, %9, axis=0)
  output y = %7
  output z = %10
})");
  expect_corrects(source, mutant,
                  {box(0, {0, 0, 3, 0}, {1, 3, 4, 4}), box(0, {1, 0, 0, 0}, {2, 3, 1, 4}),
                   box(1, {0, 0, 2, 0}, {1, 3, 4, 4}), box(1, {1, 0, 0, 0}, {2, 3, 2, 4})});
}

// Soundness (issue 15 point 7): a correction that leaves a wrong box out,
// or recomputes a box one row off, is caught by the numeric comparison and
// by the region check, which finds the box left wrong.
TEST(Correction, MissingOrShiftedBoxIsCaught) {
  Graph source = parse(single_conv("[2,3,6,5]", "[4,3,3,3]", ", pad=same"));
  Graph mutant = parse(stacked_h("[2,3,6,5]", "[4,3,3,3]", ", pad=same", 6));
  const Box seam0 = box(0, {0, 0, 5, 0}, {1, 4, 6, 5}), seam1 = box(0, {1, 0, 0, 0}, {2, 4, 1, 5});
  const Box shifted = box(0, {0, 0, 4, 0}, {1, 4, 5, 5});
  const std::vector<std::pair<std::vector<Box>, Box>> cases = {
      {{seam0}, seam1}, {{seam1}, seam0}, {{shifted, seam1}, seam0}};
  for (const auto& [given, missed] : cases) {
    Graph g = corrected(source, mutant, given);
    EXPECT_GT(error_against(source, g), 1e-3);
    EXPECT_EQ(wrong_boxes(source, g), std::vector<Box>{missed}) << print(g);
  }
}

TEST(Correction, RejectsBadBoxesAndMismatchedPrograms) {
  Graph source = parse(single_conv("[2,3,6,5]", "[4,3,3,3]", ", pad=same"));
  Graph mutant = parse(stacked_h("[2,3,6,5]", "[4,3,3,3]", ", pad=same", 6));
  Expected<Graph> outside = correct(source, mutant, {box(0, {0, 0, 5, 0}, {1, 4, 7, 5})});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().message,
            "box 0 (starts [0,0,5,0], ends [1,4,7,5]) does not lie inside output 'y' of type "
            "f32[2,4,6,5]");
  Expected<Graph> output = correct(source, mutant, {box(1, {0}, {1})});
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.error().message,
            "box 0 (starts [0], ends [1]) names output 1 of a graph with 1");
  Graph other = parse(single_conv("[2,3,6,5]", "[4,3,3,3]", ", pad=valid"));
  Expected<Graph> types = correct(other, mutant, {});
  ASSERT_FALSE(types.ok());
  EXPECT_EQ(types.error().message,
            "output 0 is f32[2,4,4,3] in the source and f32[2,4,6,5] in the mutant");
}

// CSRNet's 512-channel 28x28 convolution on two stacked images: the
// correction of the seam recomputes 2 of the 56 output rows.
TEST(Correction, CsrnetSeamCostsAFractionOfTheConvolution) {
  Graph source = parse(single_conv("[2,512,28,28]", "[512,512,3,3]", ", pad=same"));
  Graph mutant = parse(stacked_h("[2,512,28,28]", "[512,512,3,3]", ", pad=same", 28));
  Graph g =
      corrected(source, mutant,
                {box(0, {0, 0, 27, 0}, {1, 512, 28, 28}), box(0, {1, 0, 0, 0}, {2, 512, 1, 28})});
  int64_t correction = 0, full = 0;
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name.rfind("correction/", 0) == 0) correction += node_flops(g, i);
  for (int i = 0; i < source.size(); ++i) full += node_flops(source, i);
  EXPECT_EQ(correction * 28, full);
}

// The source with one box of one output increased by one: wrong exactly
// there.
Graph off_by_one_on(const Graph& source, const Box& b) {
  GraphBuilder builder(source.name());
  for (const Node& n : source.nodes()) builder.add_node(n);
  const TensorRef y = source.outputs()[b.output].ref;
  std::vector<int64_t> axes, steps, shape;
  for (size_t a = 0; a < b.starts.size(); ++a) {
    axes.push_back(static_cast<int64_t>(a));
    steps.push_back(1);
    shape.push_back(b.ends[a] - b.starts[a]);
  }
  Attrs s, o, u;
  s.set(AttrKey::starts, b.starts).set(AttrKey::ends, b.ends).set(AttrKey::axes, axes);
  s.set(AttrKey::steps, steps);
  o.set(AttrKey::shape, shape);
  u.set(AttrKey::starts, b.starts);
  TensorRef part = *builder.add1(Op::Slice, {y}, s);
  TensorRef ones = *builder.add1(Op::ConstOnes, {}, o);
  TensorRef changed = *builder.add1(Op::Add, {part, ones});
  TensorRef written = *builder.add1(Op::UpdateSlice, {y, changed}, u);
  for (size_t i = 0; i < source.outputs().size(); ++i)
    builder.output(source.outputs()[i].name,
                   static_cast<int>(i) == b.output ? written : source.outputs()[i].ref);
  Expected<Graph> g = builder.finish();
  EXPECT_TRUE(g.ok()) << g.error().message;
  return *g;
}

// Sources covering every rule of the planner, each with an operator at the
// output whose boxes reach back through the others.
const char* kPlannerSources[] = {
    R"(graph conv_windows {
  input x: f32[2,4,9,8]
  weight w: f32[6,2,3,2]
  weight c: f32[6]
  %0 = conv2d(x, w, c, stride=[2,1], pad=[2,0,1,1], dilation=[1,3], groups=2, act=relu)
  output y = %0
})",
    R"(graph conv_same_dilated {
  input x: f32[1,3,7,6]
  weight w: f32[4,3,3,3]
  %0 = conv2d(x, w, stride=[2,2], pad=same, dilation=[2,1])
  output y = %0
})",
    R"(graph depthwise_pad_conv {
  input x: f32[1,4,5,6]
  weight w: f32[4,1,3,3]
  %0 = pad(x, pads=[0,0,2,1,0,0,1,2], value=0.5)
  %1 = conv2d(%0, w, groups=4)
  output y = %1
})",
    R"(graph pools {
  input x: f32[2,3,9,8]
  %0 = avgpool(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1], count_include_pad=1, ceil_mode=1)
  %1 = avgpool(x, kernel=[3,3], stride=[2,3], pad=[1,0,1,2])
  %2 = maxpool(x, kernel=[2,3], stride=[2,2], pad=[1,1,0,1], ceil_mode=1)
  output a = %0
  output b = %1
  output c = %2
})",
    R"(graph products {
  input a: f32[2,1,4,3]
  input b: f32[3,3,5]
  input c: f32[5,4]
  input d: f32[6,5]
  input e: f32[6]
  %0 = matmul(a, b)
  %1 = gemm(c, d, e, trans_a=1, trans_b=1, alpha=0.5, beta=2)
  output y = %0
  output z = %1
})",
    R"(graph elementwise {
  input x: f32[2,3,4]
  input v: f32[3,1]
  input s: f32[]
  %0 = add(x, v)
  %1 = smul(%0, s)
  %2 = mul(%1, x)
  %3 = tanh(%2)
  output y = %3
})",
    R"(graph layout {
  input x: f32[2,3,8]
  input z: f32[2,3,4]
  %0 = slice(x, starts=[1,7], ends=[3,0], axes=[1,2], steps=[1,-2])
  %1 = transpose(%0, perm=[2,0,1])
  %2 = reshape(%1, shape=[4,4])
  %3, %4 = split(z, axis=2, sizes=[1,3])
  %5 = concat(%3, %4, %3, axis=2)
  %6 = reshape(%5, shape=[2,3,5])
  %7 = flatten(%6, axis=1)
  output y = %2
  output w = %7
})",
    R"(graph tiles_and_batchnorm {
  input x: f32[1,2,6,4]
  input m: f32[2]
  input v: f32[2]
  input g: f32[2]
  input b: f32[2]
  weight w: f32[2,2,3,3]
  %0 = reshape(x, shape=[1,2,3,2,4])
  %1 = transpose(%0, perm=[2,0,1,3,4])
  %2 = reshape(%1, shape=[3,2,2,4])
  %3 = conv2d(%2, w, pad=same)
  %4 = mul(v, v)
  %5 = batchnorm(%3, g, b, m, %4)
  %6 = global_avgpool(%5)
  output y = %5
  output p = %6
})",
};

// Every box of a few random shapes, on every output of every source: its
// correction restores the source.
TEST(Correction, RandomBoxesThroughEveryRule) {
  std::mt19937_64 rng(2021);
  for (const char* text : kPlannerSources) {
    Graph source = parse(text);
    for (int trial = 0; trial < 40; ++trial) {
      const int output = static_cast<int>(rng() % source.outputs().size());
      const Shape& s = source.type(source.outputs()[output].ref).shape;
      Box b{output, {}, {}};
      for (int64_t d : s) {
        int64_t lo = static_cast<int64_t>(rng() % d), hi = static_cast<int64_t>(rng() % d);
        if (rng() % 3 == 0) lo = 0, hi = d - 1;  // whole axes too
        b.starts.push_back(std::min(lo, hi));
        b.ends.push_back(std::max(lo, hi) + 1);
      }
      SCOPED_TRACE(source.name() + " seed 2021 trial " + std::to_string(trial));
      Graph mutant = off_by_one_on(source, b);
      Graph g = corrected(source, mutant, {b});
      EXPECT_LE(error_against(source, g), kDoubleTolerance) << print(g);
    }
  }
}

}  // namespace
}  // namespace tso::verifier
