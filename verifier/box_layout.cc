#include "verifier/box_layout.h"

#include <algorithm>

#include "core/error.h"

namespace tso::verifier {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

std::vector<int64_t> strides_of(const AxisLayout& axis) {
  std::vector<int64_t> s(axis.size(), 1);
  for (int k = static_cast<int>(axis.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * axis[k + 1].extent;
  return s;
}

// Drops unit sub-axes of an axis that has longer ones.
AxisLayout normalized(AxisLayout axis) {
  AxisLayout out;
  for (SubAxis& s : axis)
    if (s.extent > 1) out.push_back(std::move(s));
  if (out.empty()) out.push_back(whole(extent_of(axis)));
  return out;
}

// `axis` split further so that its sub-axes are `radix` (extents, outer
// first), whose strides include all of the axis's.
AxisLayout to_radix(const AxisLayout& axis, const std::vector<int64_t>& radix) {
  AxisLayout reversed;
  size_t next = radix.size();  // radix entries are consumed from the inner end
  for (auto it = axis.rbegin(); it != axis.rend(); ++it) {
    SubAxis cur = *it;
    while (cur.extent > radix[next - 1]) {
      auto [outer, inner] = split(cur, radix[--next]);
      reversed.push_back(std::move(inner));
      cur = std::move(outer);
    }
    TSO_CHECK(cur.extent == radix[next - 1], "radix does not refine the axis");
    reversed.push_back(std::move(cur));
    --next;
  }
  return AxisLayout(reversed.rbegin(), reversed.rend());
}

}  // namespace

SubAxis cut_at(int64_t extent, std::vector<int64_t> cuts) {
  for (int64_t& c : cuts) c = std::clamp<int64_t>(c, 0, extent);
  cuts.push_back(0);
  cuts.push_back(extent);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return {extent, std::move(cuts)};
}

SubAxis whole(int64_t extent) { return cut_at(extent, {}); }

SubAxis every_position(int64_t extent) {
  std::vector<int64_t> cuts;
  for (int64_t i = 0; i <= extent; ++i) cuts.push_back(i);
  return {extent, std::move(cuts)};
}

Layout plain(const Shape& shape) {
  Layout l;
  for (int64_t d : shape.dims()) l.push_back({whole(d)});
  return l;
}

Layout every_position(const Shape& shape) {
  Layout l;
  for (int64_t d : shape.dims()) l.push_back({every_position(d)});
  return l;
}

int64_t extent_of(const AxisLayout& axis) {
  int64_t e = 1;
  for (const SubAxis& s : axis) e *= s.extent;
  return e;
}

// A box (lo rows, hi rows) x (inner interval) lies in one interval of the
// original when no cut falls strictly inside a row it spans: rows holding a
// cut are isolated (floor and ceil), and the cut's offset cuts the inner
// sub-axis.
std::pair<SubAxis, SubAxis> split(const SubAxis& s, int64_t inner) {
  TSO_CHECK(inner > 0 && s.extent % inner == 0, "split of a sub-axis by a non-divisor");
  std::vector<int64_t> outer_cuts, inner_cuts;
  for (int64_t b : s.cuts) {
    outer_cuts.push_back(floor_div(b, inner));
    outer_cuts.push_back(floor_div(b + inner - 1, inner));
    inner_cuts.push_back(b % inner);
  }
  return {cut_at(s.extent / inner, std::move(outer_cuts)), cut_at(inner, std::move(inner_cuts))};
}

SubAxis flatten(const AxisLayout& axis) {
  AxisLayout a = normalized(axis);
  if (a.size() == 1) return a[0];
  const SubAxis& inner = a.back();
  const int64_t rows = extent_of(a) / inner.extent;
  std::vector<int64_t> cuts;
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t b : inner.cuts) cuts.push_back(m * inner.extent + b);
  return cut_at(extent_of(a), std::move(cuts));
}

AxisLayout refine(const AxisLayout& a0, const AxisLayout& b0) {
  AxisLayout a = normalized(a0), b = normalized(b0);
  const int64_t extent = extent_of(a);
  TSO_CHECK(extent == extent_of(b), "refining layouts of different extents");
  auto union_cuts = [](const SubAxis& x, const SubAxis& y) {
    std::vector<int64_t> cuts = x.cuts;
    cuts.insert(cuts.end(), y.cuts.begin(), y.cuts.end());
    return cut_at(x.extent, std::move(cuts));
  };
  if (extent <= 1) return {union_cuts(a[0], b[0])};
  std::vector<int64_t> strides = strides_of(a), sb = strides_of(b);
  strides.insert(strides.end(), sb.begin(), sb.end());
  strides.push_back(extent);
  std::sort(strides.begin(), strides.end());
  strides.erase(std::unique(strides.begin(), strides.end()), strides.end());
  std::vector<int64_t> radix;  // outer first
  for (size_t k = strides.size() - 1; k > 0; --k) {
    if (strides[k] % strides[k - 1] != 0) return {union_cuts(flatten(a), flatten(b))};
    radix.push_back(strides[k] / strides[k - 1]);
  }
  AxisLayout ra = to_radix(a, radix), rb = to_radix(b, radix), out;
  for (size_t k = 0; k < radix.size(); ++k) out.push_back(union_cuts(ra[k], rb[k]));
  return out;
}

Layout refine(const Layout& a, const Layout& b) {
  TSO_CHECK(a.size() == b.size(), "refining layouts of different ranks");
  Layout out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(refine(a[i], b[i]));
  return out;
}

Layout reshape(const Layout& in, const Shape& out) {
  if (out.numel() == 0) return plain(out);
  std::vector<SubAxis> atoms;
  for (const AxisLayout& axis : in)
    for (const SubAxis& s : axis)
      if (s.extent > 1) atoms.push_back(s);
  Layout result(out.rank());
  size_t next = 0;
  for (int o = 0; o < out.rank();) {
    const int64_t d = out[o];
    if (d <= 1) {
      result[o++] = {whole(d)};
      continue;
    }
    AxisLayout subs;
    int64_t have = 1;  // divides d
    while (have < d) {
      SubAxis& a = atoms[next];
      const int64_t need = d / have;
      if (need % a.extent == 0) {
        subs.push_back(a);
        have *= a.extent;
        ++next;
      } else if (a.extent % need == 0) {
        auto [outer, inner] = split(a, a.extent / need);
        subs.push_back(std::move(outer));
        a = std::move(inner);
        have = d;
      } else {
        break;
      }
    }
    if (have == d) {
      result[o++] = std::move(subs);
      continue;
    }
    // No split aligns: cut every position of the output axes up to the next
    // boundary both shapes share.
    int64_t out_prod = d, in_prod = have;
    int last = o;
    while (out_prod != in_prod) {
      if (in_prod < out_prod)
        in_prod *= atoms[next++].extent;
      else
        out_prod *= out[++last];
    }
    for (; o <= last; ++o) result[o] = {every_position(out[o])};
  }
  return result;
}

std::vector<SubBox> boxes_of(const Layout& layout) {
  std::vector<std::pair<int, int>> subs;  // (axis, sub-axis), in order
  for (int a = 0; a < static_cast<int>(layout.size()); ++a)
    for (int k = 0; k < static_cast<int>(layout[a].size()); ++k) {
      if (layout[a][k].extent == 0) return {};
      subs.push_back({a, k});
    }
  std::vector<size_t> at(subs.size(), 0);  // interval index per sub-axis
  std::vector<SubBox> boxes;
  while (true) {
    SubBox box(layout.size());
    for (size_t i = 0; i < subs.size(); ++i) {
      const std::vector<int64_t>& cuts = layout[subs[i].first][subs[i].second].cuts;
      box[subs[i].first].push_back({cuts[at[i]], cuts[at[i] + 1]});
    }
    boxes.push_back(std::move(box));
    int i = static_cast<int>(subs.size()) - 1;
    for (; i >= 0; --i) {
      if (++at[i] + 1 < layout[subs[i].first][subs[i].second].cuts.size()) break;
      at[i] = 0;
    }
    if (i < 0) return boxes;
  }
}

std::vector<std::vector<int64_t>> deciding_positions(const Layout& layout, const SubBox& box) {
  std::vector<int64_t> corner(layout.size(), 0);
  std::vector<std::vector<int64_t>> strides;
  for (size_t a = 0; a < layout.size(); ++a) {
    strides.push_back(strides_of(layout[a]));
    for (size_t k = 0; k < layout[a].size(); ++k) corner[a] += box[a][k].lo * strides[a][k];
  }
  std::vector<std::vector<int64_t>> positions{corner};
  for (size_t a = 0; a < layout.size(); ++a)
    for (size_t k = 0; k < layout[a].size(); ++k)
      if (box[a][k].hi - box[a][k].lo > 1) {
        positions.push_back(corner);
        positions.back()[a] += strides[a][k];
      }
  return positions;
}

std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> contiguous_pieces(
    const Layout& layout, const SubBox& box) {
  // Per axis: the ranges whose union is the box's positions on that axis.
  std::vector<std::vector<Interval>> ranges(layout.size());
  for (size_t a = 0; a < layout.size(); ++a) {
    const std::vector<int64_t> stride = strides_of(layout[a]);
    const std::vector<Interval>& iv = box[a];
    // Sub-axes inside `last` span their whole extent: one range per
    // combination of the coordinates outside it.
    size_t last = iv.size() - 1;
    while (last > 0 && iv[last].lo == 0 && iv[last].hi == layout[a][last].extent) --last;
    std::vector<int64_t> coord(last);
    for (size_t k = 0; k < last; ++k) coord[k] = iv[k].lo;
    while (true) {
      int64_t base = 0;
      for (size_t k = 0; k < last; ++k) base += coord[k] * stride[k];
      ranges[a].push_back({base + iv[last].lo * stride[last], base + iv[last].hi * stride[last]});
      int k = static_cast<int>(last) - 1;
      for (; k >= 0; --k) {
        if (++coord[k] < iv[k].hi) break;
        coord[k] = iv[k].lo;
      }
      if (k < 0) break;
    }
  }
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pieces;
  std::vector<size_t> at(layout.size(), 0);
  while (true) {
    std::vector<int64_t> starts, ends;
    for (size_t a = 0; a < layout.size(); ++a) {
      starts.push_back(ranges[a][at[a]].lo);
      ends.push_back(ranges[a][at[a]].hi);
    }
    pieces.push_back({std::move(starts), std::move(ends)});
    int a = static_cast<int>(layout.size()) - 1;
    for (; a >= 0; --a) {
      if (++at[a] < ranges[a].size()) break;
      at[a] = 0;
    }
    if (a < 0) return pieces;
  }
}

}  // namespace tso::verifier
