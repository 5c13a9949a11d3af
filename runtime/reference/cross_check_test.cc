// Cross-checks between independent formulations of the same computation:
// the executor's im2col convolution against a direct seven-loop one written
// here, grouped convolution against split + plain convolutions + concat, and
// float against double on seeded random graphs over every operator.
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "core/testing/random_graph.h"
#include "core/text_format.h"
#include "runtime/reference/test_util.h"

namespace tso::ref {
namespace {

using namespace tso::ref::testing;
using Ints = std::vector<int64_t>;

struct ConvCase {
  int64_t n, c, h, w, k, kh, kw, stride_h, stride_w, dil_h, dil_w, groups;
  std::array<int64_t, 4> pad;  // top, left, bottom, right
};

// The textbook definition, straight from ONNX's Conv: no im2col, no GEMM.
Tensor<double> direct_conv(const Tensor<double>& x, const Tensor<double>& w, const ConvCase& c) {
  const int64_t oh = (c.h + c.pad[0] + c.pad[2] - c.dil_h * (c.kh - 1) - 1) / c.stride_h + 1;
  const int64_t ow = (c.w + c.pad[1] + c.pad[3] - c.dil_w * (c.kw - 1) - 1) / c.stride_w + 1;
  const int64_t cg = c.c / c.groups, kg = c.k / c.groups;
  Tensor<double> y(Shape{c.n, c.k, oh, ow});
  for (int64_t b = 0; b < c.n; ++b)
    for (int64_t o = 0; o < c.k; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          const int64_t g = o / kg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < c.kh; ++p)
              for (int64_t q = 0; q < c.kw; ++q) {
                int64_t r = i * c.stride_h - c.pad[0] + p * c.dil_h;
                int64_t s = j * c.stride_w - c.pad[1] + q * c.dil_w;
                if (r < 0 || r >= c.h || s < 0 || s >= c.w) continue;
                acc += x.data[((b * c.c + g * cg + ci) * c.h + r) * c.w + s] *
                       w.data[((o * cg + ci) * c.kh + p) * c.kw + q];
              }
          y.data[((b * c.k + o) * oh + i) * ow + j] = acc;
        }
  return y;
}

TEST(CrossCheck, Im2colConvMatchesDirectConvolution) {
  const ConvCase cases[] = {
      {1, 3, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}},
      {2, 4, 8, 6, 6, 3, 1, 2, 1, 1, 1, 2, {0, 0, 1, 0}},
      {1, 4, 9, 9, 4, 3, 3, 2, 2, 2, 2, 4, {2, 1, 0, 2}},   // depthwise, dilated
      {1, 2, 5, 5, 3, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}},   // 1x1: the no-im2col path
      {2, 6, 5, 8, 6, 1, 3, 1, 3, 1, 2, 3, {0, 2, 0, 2}},
  };
  std::mt19937_64 rng(7);
  for (const ConvCase& c : cases) {
    Tensor<double> x = random_tensor<double>(Shape{c.n, c.c, c.h, c.w}, rng);
    Tensor<double> w = random_tensor<double>(Shape{c.k, c.c / c.groups, c.kh, c.kw}, rng);
    Attrs a = attrs({{AttrKey::stride, Ints{c.stride_h, c.stride_w}},
                     {AttrKey::dilation, Ints{c.dil_h, c.dil_w}},
                     {AttrKey::groups, c.groups},
                     {AttrKey::pad, Padding{Padding::kExplicit, c.pad}}});
    Tensor<double> got = eval1<double>(node(Op::Conv2d, a), {x, w});
    Tensor<double> want = direct_conv(x, w, c);
    ASSERT_EQ(to_string(got.shape), to_string(want.shape));
    EXPECT_LT(relative_error(got, want), 1e-12) << "case with groups " << c.groups;
  }
}

// conv(x, w; groups=2) == concat(conv(x0, w0), conv(x1, w1)) with x and w
// split in halves along channels: exact on Mod, so any indexing slip shows.
TEST(CrossCheck, GroupedConvIsSplitConvConcat) {
  const char* grouped = R"(graph g {
  input x: f32[2,4,6,6]
  input w: f32[6,2,3,3]
  %0 = conv2d(x, w, pad=same, groups=2)
  output y = %0
})";
  const char* split = R"(graph s {
  input x: f32[2,4,6,6]
  input w: f32[6,2,3,3]
  %x0, %x1 = split(x, axis=1, sizes=[2,2])
  %w0, %w1 = split(w, axis=0, sizes=[3,3])
  %y0 = conv2d(%x0, %w0, pad=same)
  %y1 = conv2d(%x1, %w1, pad=same)
  %y = concat(%y0, %y1, axis=1)
  output y = %y
})";
  Expected<Graph> a = parse_graph(grouped, "grouped");
  Expected<Graph> b = parse_graph(split, "split");
  ASSERT_TRUE(a.ok() && b.ok());
  std::mt19937_64 rng(11);
  std::map<std::string, Tensor<Mod>> feeds = {
      {"x", random_tensor<Mod>(Shape{2, 4, 6, 6}, rng)},
      {"w", random_tensor<Mod>(Shape{6, 2, 3, 3}, rng)}};
  Expected<std::vector<Tensor<Mod>>> ya = evaluate<Mod>(*a, feeds);
  Expected<std::vector<Tensor<Mod>>> yb = evaluate<Mod>(*b, feeds);
  ASSERT_TRUE(ya.ok() && yb.ok());
  EXPECT_TRUE(close((*ya)[0], (*yb)[0]));
}

// float and double agree on random graphs over every operator, within a
// tolerance that scales with float's epsilon.
TEST(CrossCheck, FloatAgreesWithDoubleOnRandomGraphs) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    tso::testing::RandomGraphOptions options;
    options.opaque = false;
    Graph g = tso::testing::random_graph(seed, options);
    std::mt19937_64 rng(seed);
    std::map<std::string, Tensor<double>> feeds_d;
    std::map<std::string, Tensor<float>> feeds_f;
    for (const Node& n : g.nodes()) {
      if (n.op != Op::Input && !(n.op == Op::Weight && !n.data)) continue;
      // Positive inputs keep sqrt, pow and div away from their poles.
      Tensor<double> t = random_tensor<double>(n.outs[0].shape, rng, 0.5, 1.5);
      // Integer tensors are gather's indices: 0 or 1, valid for any axis of 2
      // or more; bool tensors (masks) hold 0 and 1.
      if (n.outs[0].dtype == DType::kI64 || n.outs[0].dtype == DType::kBool)
        for (double& v : t.data) v = std::floor(v);
      feeds_f.emplace(n.name, cast<float>(t));
      feeds_d.emplace(n.name, std::move(t));
    }
    Expected<std::vector<Tensor<double>>> d = evaluate<double>(g, feeds_d);
    Expected<std::vector<Tensor<float>>> f = evaluate<float>(g, feeds_f);
    ASSERT_EQ(d.ok(), f.ok()) << "seed " << seed;
    if (!d.ok()) continue;  // e.g. a weight with non-finite data: same error both ways
    for (size_t i = 0; i < d->size(); ++i) {
      bool finite = true;
      for (double v : (*d)[i].data) finite = finite && std::isfinite(v);
      if (!finite) continue;  // pow and exp chains can overflow; nothing to compare
      EXPECT_LT(relative_error((*f)[i], (*d)[i]), 1e-4) << "seed " << seed << ", output " << i
                                                        << "\n" << print(g);
      ++compared;
    }
  }
  EXPECT_GT(compared, 60);
}

}  // namespace
}  // namespace tso::ref
