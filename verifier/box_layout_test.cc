// The layout algebra's invariant, checked exhaustively on seeded random
// layouts: a layout derived from another (split, flatten, refine, reshape)
// describes the same row-major positions, and inside each of its boxes the
// original's sub-axis coordinates stay in one box of the original and are
// affine in the derived ones.
#include "verifier/box_layout.h"

#include <gtest/gtest.h>

#include <random>

namespace tso::verifier {
namespace {

// Sub-axis coordinates (all axes, outer first) of a row-major position.
std::vector<int64_t> coords(const Layout& l, int64_t flat) {
  std::vector<int64_t> c;
  for (auto a = l.rbegin(); a != l.rend(); ++a)
    for (auto s = a->rbegin(); s != a->rend(); ++s) {
      c.push_back(s->extent == 0 ? 0 : flat % s->extent);
      if (s->extent != 0) flat /= s->extent;
    }
  return {c.rbegin(), c.rend()};
}

std::vector<int64_t> subs(const Layout& l) {
  std::vector<int64_t> e;
  for (const AxisLayout& a : l)
    for (const SubAxis& s : a) e.push_back(s.extent);
  return e;
}

int64_t flat_of(const std::vector<int64_t>& extents, const std::vector<int64_t>& c) {
  int64_t f = 0;
  for (size_t k = 0; k < c.size(); ++k) f = f * extents[k] + c[k];
  return f;
}

// The interval index of each coordinate.
std::vector<size_t> box_of(const Layout& l, const std::vector<int64_t>& c) {
  std::vector<size_t> b;
  size_t k = 0;
  for (const AxisLayout& a : l)
    for (const SubAxis& s : a) {
      b.push_back(std::upper_bound(s.cuts.begin(), s.cuts.end(), c[k++]) - s.cuts.begin());
    }
  return b;
}

void expect_refines(const Layout& orig, const Layout& derived, const std::string& what) {
  const std::vector<int64_t> de = subs(derived);
  for (const SubBox& box : boxes_of(derived)) {
    std::vector<int64_t> lo, hi;
    for (const auto& a : box)
      for (const Interval& iv : a) lo.push_back(iv.lo), hi.push_back(iv.hi);
    const std::vector<int64_t> c0 = coords(orig, flat_of(de, lo));
    std::vector<std::vector<int64_t>> step;  // orig coordinates' change per derived step
    for (size_t k = 0; k < lo.size(); ++k) {
      std::vector<int64_t> p = lo;
      p[k] += hi[k] - lo[k] > 1;
      std::vector<int64_t> ck = coords(orig, flat_of(de, p));
      for (size_t j = 0; j < ck.size(); ++j) ck[j] -= c0[j];
      step.push_back(ck);
    }
    std::vector<int64_t> p = lo;
    while (true) {
      const std::vector<int64_t> c = coords(orig, flat_of(de, p));
      ASSERT_EQ(box_of(orig, c), box_of(orig, c0)) << what << ": a box spans two of the original";
      for (size_t j = 0; j < c.size(); ++j) {
        int64_t expect = c0[j];
        for (size_t k = 0; k < p.size(); ++k) expect += (p[k] - lo[k]) * step[k][j];
        ASSERT_EQ(c[j], expect) << what << ": not affine inside a box";
      }
      int k = static_cast<int>(p.size()) - 1;
      for (; k >= 0; --k) {
        if (++p[k] < hi[k]) break;
        p[k] = lo[k];
      }
      if (k < 0) break;
    }
  }
}

SubAxis random_sub(int64_t extent, std::mt19937_64& rng) {
  std::vector<int64_t> cuts;
  for (int i = 0; i < 3; ++i)
    cuts.push_back(std::uniform_int_distribution<int64_t>(0, extent)(rng));
  return cut_at(extent, cuts);
}

AxisLayout random_axis(const std::vector<int64_t>& radix, std::mt19937_64& rng) {
  AxisLayout a;
  for (int64_t r : radix) a.push_back(random_sub(r, rng));
  return a;
}

TEST(BoxLayout, SplitFlattenRefine) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const SubAxis s = random_sub(12, rng);
    for (int64_t inner : {2, 3, 4, 6}) {
      auto [outer, in] = split(s, inner);
      expect_refines({{s}}, {{outer, in}}, "split");
    }
    const AxisLayout a = random_axis({3, 4}, rng), b = random_axis({6, 2}, rng),
                     c = random_axis({2, 6}, rng), d = random_axis({12}, rng);
    expect_refines({a}, {{flatten(a)}}, "flatten");
    for (const AxisLayout* x : {&a, &b, &c, &d})
      for (const AxisLayout* y : {&a, &b, &c, &d}) {
        const Layout r{refine(*x, *y)};
        expect_refines({*x}, r, "refine");
        expect_refines({*y}, r, "refine");
      }
  }
}

TEST(BoxLayout, Reshape) {
  std::mt19937_64 rng(5);
  const std::vector<std::pair<std::vector<std::vector<int64_t>>, Shape>> cases = {
      {{{2}, {6}}, Shape{3, 4}},       {{{4}, {6}}, Shape{2, 2, 6}}, {{{2}, {3}, {4}}, Shape{6, 4}},
      {{{6, 2}}, Shape{4, 3}},         {{{2, 2}, {3}}, Shape{2, 6}}, {{{12}}, Shape{1, 3, 1, 4}},
      {{{3, 4}, {2}}, Shape{3, 2, 4}}, {{{5}, {4}}, Shape{2, 10}}};
  for (int trial = 0; trial < 100; ++trial)
    for (const auto& [radices, out] : cases) {
      Layout in;
      for (const auto& r : radices) in.push_back(random_axis(r, rng));
      expect_refines(in, reshape(in, out), "reshape to " + to_string(out));
    }
}

}  // namespace
}  // namespace tso::verifier
