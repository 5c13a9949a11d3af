#include "verifier/box_derivation.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tso::verifier {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Output position o reads input position offset + o * step (step != 0):
// the positions where that read crosses a cut of the input.
std::vector<int64_t> mapped_cuts(const SubAxis& in, int64_t offset, int64_t step) {
  std::vector<int64_t> cuts;
  for (int64_t b : in.cuts)
    cuts.push_back(step > 0 ? ceil_div(b - offset, step) : floor_div(offset - b, -step) + 1);
  return cuts;
}

// Operands aligned at their last axis, numpy-style: an operand of extent 1
// on an axis the output stretches is constant along it and cuts nothing.
Layout broadcast(const std::vector<const Layout*>& ins, const std::vector<Shape>& shapes,
                 const Shape& out) {
  Layout l;
  for (int i = 0; i < out.rank(); ++i) {
    AxisLayout axis{whole(out[i])};
    for (size_t k = 0; k < ins.size(); ++k) {
      const int a = i - (out.rank() - shapes[k].rank());
      if (a >= 0 && shapes[k][a] == out[i]) axis = refine(axis, (*ins[k])[a]);
    }
    l.push_back(std::move(axis));
  }
  return l;
}

// conv2d and avgpool along H and W: a tap crossing a cut of the input (its
// ends, where the padding starts, included) changes the sum's terms.
// avgpool with count_include_pad also counts the padding a window reaches:
// the padded input's ends cut too.
void cut_windows(const Node& n, const Layout& x, const Shape& xs, const Shape& ws, const Shape& out,
                 Layout* l) {
  for (int d = 0; d < 2; ++d) {
    const Window win = window(n, xs, ws, d);
    SubAxis in = flatten(x[2 + d]);
    if (n.op == Op::AvgPool) {
      in.cuts.push_back(-win.pad_lo);
      in.cuts.push_back(xs[2 + d] + win.pad_hi);
    }
    std::vector<int64_t> cuts;
    for (int64_t j = 0; j < win.k; ++j) {
      std::vector<int64_t> c = mapped_cuts(in, j * win.dil - win.pad_lo, win.stride);
      cuts.insert(cuts.end(), c.begin(), c.end());
    }
    (*l)[2 + d] = {cut_at(out[2 + d], std::move(cuts))};
  }
}

// Output channels: the weight's cuts and the group boundaries (the reduced
// input channels of a group are the same for every output channel in it).
Layout conv(const Node& n, const Layout& x, const Shape& xs, const Layout& w, const Shape& ws,
            const Layout* bias, const Shape& out) {
  Layout l(4);
  l[0] = x[0];
  const int64_t groups = n.attrs.i(AttrKey::groups), per_group = out[1] / groups;
  std::vector<int64_t> ch = flatten(w[0]).cuts;
  for (int64_t g = 1; g < groups; ++g) ch.push_back(g * per_group);
  if (bias) {
    const std::vector<int64_t>& b = flatten((*bias)[0]).cuts;
    ch.insert(ch.end(), b.begin(), b.end());
  }
  l[1] = {cut_at(out[1], std::move(ch))};
  cut_windows(n, x, xs, ws, out, &l);
  return l;
}

// The batch axes broadcast; M comes from the left operand, N from the right.
Layout matmul(const Layout& a, const Shape& as, const Layout& b, const Shape& bs,
              const Shape& out) {
  const int ra = as.rank(), rb = bs.rank();
  const int na = std::max(ra - 2, 0), nb = std::max(rb - 2, 0);
  const int nout = out.rank() - (ra > 1) - (rb > 1);
  Layout la(a.begin(), a.begin() + na), lb(b.begin(), b.begin() + nb);
  Layout l = broadcast({&la, &lb}, {Shape(as.dims().first(na)), Shape(bs.dims().first(nb))},
                       Shape(out.dims().first(nout)));
  if (ra > 1) l.push_back(a[ra - 2]);
  if (rb > 1) l.push_back(b[rb - 1]);
  return l;
}

// M from A's rows (columns when trans_a), N from B's columns (rows when
// trans_b); C broadcasts to [M, N].
Layout gemm(const Node& n, const Layout& a, const Layout& b, const Layout* c, const Shape& cs,
            const Shape& out) {
  const Layout ab{a[n.attrs.i(AttrKey::trans_a) != 0], b[n.attrs.i(AttrKey::trans_b) == 0]};
  return c ? broadcast({&ab, c}, {out, cs}, out) : ab;
}

Layout concat(const Node& n, const Graph& g, const std::vector<std::vector<Layout>>& of,
              const Shape& out) {
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  Layout l = of[n.args[0].node][n.args[0].output];
  std::vector<int64_t> cuts;
  int64_t at = 0;
  for (const TensorRef& r : n.args) {
    const Layout& part = of[r.node][r.output];
    for (int i = 0; i < out.rank(); ++i)
      if (i != axis) l[i] = refine(l[i], part[i]);
    for (int64_t b : flatten(part[axis]).cuts) cuts.push_back(at + b);
    at += g.type(r).shape[axis];
  }
  l[axis] = {cut_at(out[axis], std::move(cuts))};
  return l;
}

std::vector<Layout> split(const Node& n, const Layout& x) {
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  const SubAxis in = flatten(x[axis]);
  std::vector<Layout> outs;
  int64_t at = 0;
  for (int64_t size : n.attrs.ints(AttrKey::sizes)) {
    Layout l = x;
    std::vector<int64_t> cuts;
    for (int64_t b : in.cuts) cuts.push_back(b - at);
    l[axis] = {cut_at(size, std::move(cuts))};
    outs.push_back(std::move(l));
    at += size;
  }
  return outs;
}

Layout transpose(const Node& n, const Layout& x) {
  Layout l;
  for (int64_t p : n.attrs.ints(AttrKey::perm)) l.push_back(x[p]);  // one entry per axis
  return l;
}

// Slice attributes are normalized by inference: axes sorted, starts clamped,
// steps explicit.
Layout slice(const Node& n, const Layout& x, const Shape& xs, const Shape& out) {
  Layout l = x;
  const std::vector<int64_t>& axes = n.attrs.ints(AttrKey::axes);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = static_cast<int>(axes[i]);
    const int64_t start = n.attrs.ints(AttrKey::starts)[i], step = n.attrs.ints(AttrKey::steps)[i];
    if (start == 0 && step == 1 && out[a] == xs[a]) continue;
    l[a] = {cut_at(out[a], mapped_cuts(flatten(x[a]), start, step))};
  }
  return l;
}

// Shifts axis `a` of `x` by `begin` into an axis of extent `extent`; the
// shifted ends are the borders of what was written.
AxisLayout shifted(const AxisLayout& x, int64_t begin, int64_t extent) {
  std::vector<int64_t> cuts;
  for (int64_t b : flatten(x).cuts) cuts.push_back(b + begin);
  return {cut_at(extent, std::move(cuts))};
}

Layout pad(const Node& n, const Layout& x, const Shape& out) {
  const std::vector<int64_t>& pads = n.attrs.ints(AttrKey::pads);
  const int r = out.rank();
  Layout l = x;
  for (int i = 0; i < r; ++i)
    if (pads[i] != 0 || pads[i + r] != 0) l[i] = shifted(x[i], pads[i], out[i]);
  return l;
}

Layout enlarge(const Layout& w, const Shape& ws, const Shape& out) {
  Layout l = w;
  for (int i = 2; i < 4; ++i)
    if (out[i] != ws[i]) l[i] = shifted(w[i], (out[i] - ws[i]) / 2, out[i]);
  return l;
}

// Each box lies wholly inside the patch or wholly outside it.
Layout update_slice(const Node& n, const Layout& base, const Layout& patch, const Shape& ps,
                    const Shape& out) {
  const std::vector<int64_t>& starts = n.attrs.ints(AttrKey::starts);
  Layout l;
  for (int i = 0; i < out.rank(); ++i) {
    if (ps[i] == out[i]) {
      l.push_back(refine(base[i], patch[i]));
      continue;
    }
    std::vector<int64_t> cuts = flatten(base[i]).cuts;
    for (int64_t b : flatten(patch[i]).cuts) cuts.push_back(starts[i] + b);
    l.push_back({cut_at(out[i], std::move(cuts))});
  }
  return l;
}

std::vector<Layout> one(Layout l) { return std::vector<Layout>{std::move(l)}; }

Error not_supported(const Graph& g, int i, const std::string& why) {
  return Error{"region check: " + describe_node(g, i) + " " + why};
}

Expected<std::vector<Layout>> node_layouts(const Graph& g, int i,
                                           const std::vector<std::vector<Layout>>& of) {
  const Node& n = g.node(i);
  auto in = [&](int k) -> const Layout& { return of[n.args[k].node][n.args[k].output]; };
  auto shape = [&](int k) -> const Shape& { return g.type(n.args[k]).shape; };
  const Shape& out = n.outs[0].shape;
  switch (n.op) {
    case Op::Input:
    case Op::Weight:
    case Op::ConstOnes:
    case Op::ConstPool:
      return one(plain(out));
    case Op::ConstEye:  // values that change along the diagonal
    case Op::ConstEyeConv:
      return one(every_position(out));
    case Op::Conv2d:
      return one(
          conv(n, in(0), shape(0), in(1), shape(1), n.args.size() > 2 ? &in(2) : nullptr, out));
    case Op::AvgPool: {
      Layout l{in(0)[0], in(0)[1], {}, {}};
      cut_windows(n, in(0), shape(0), shape(0), out, &l);
      return one(l);
    }
    case Op::Matmul:
      return one(matmul(in(0), shape(0), in(1), shape(1), out));
    case Op::Gemm:
      // The field holds integers only: a fractional scale would be rounded,
      // and two programs scaling by different fractions could agree there.
      for (AttrKey k : {AttrKey::alpha, AttrKey::beta})
        if (n.attrs.f(k) != std::round(n.attrs.f(k)))
          return not_supported(g, i,
                               "has " + std::string(attr_info(k).name) + " = " +
                                   print_attr_value(n.attrs.f(k)) + ", not an integer");
      return one(gemm(n, in(0), in(1), n.args.size() > 2 ? &in(2) : nullptr,
                      n.args.size() > 2 ? shape(2) : out, out));
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
      return one(broadcast({&in(0), &in(1)}, {shape(0), shape(1)}, out));
    // Position-wise: output position p reads input position p alone, so the
    // input's boxes are the output's (a fused activation is the same).
    case Op::ScalarMul:
    case Op::Neg:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Exp:
    case Op::Sqrt:
    case Op::Clip:
      return one(in(0));
    case Op::Concat:
      return one(concat(n, g, of, out));
    case Op::Split:
      return split(n, in(0));
    case Op::Transpose:
      return one(transpose(n, in(0)));
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
      return one(reshape(in(0), out));
    case Op::Slice:
      return one(slice(n, in(0), shape(0), out));
    case Op::Pad:
      return one(pad(n, in(0), out));
    case Op::Enlarge:
      return one(enlarge(in(0), shape(0), out));
    case Op::UpdateSlice:
      return one(update_slice(n, in(0), in(1), shape(1), out));
    default:
      return not_supported(g, i, "is not a multilinear, position-wise or layout operator");
  }
}

}  // namespace

Window window(const Node& n, const Shape& x, const Shape& w, int d) {
  Window win;
  win.stride = n.attrs.ints(AttrKey::stride)[d];
  if (n.op == Op::Conv2d) {
    win.k = w[2 + d];
    win.dil = n.attrs.ints(AttrKey::dilation)[d];
  } else {
    win.k = n.attrs.ints(AttrKey::kernel)[d];
  }
  const Padding& p = n.attrs.pad(AttrKey::pad);
  if (p.mode == Padding::kSame) {
    const int64_t out = ceil_div(x[2 + d], win.stride), span = (win.k - 1) * win.dil + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * win.stride + span - x[2 + d]);
    win.pad_lo = total / 2;
    win.pad_hi = total - win.pad_lo;
  } else if (p.mode == Padding::kExplicit) {
    win.pad_lo = p.pads[d];
    win.pad_hi = p.pads[d + 2];
  }
  return win;
}

Expected<std::vector<Layout>> output_layouts(const Graph& g) {
  std::vector<std::vector<Layout>> of(g.size());
  for (int i = 0; i < g.size(); ++i) {
    Expected<std::vector<Layout>> l = node_layouts(g, i, of);
    if (!l) return l.error();
    of[i] = std::move(*l);
  }
  std::vector<Layout> outs;
  for (const GraphOutput& o : g.outputs()) outs.push_back(of[o.ref.node][o.ref.output]);
  return outs;
}

}  // namespace tso::verifier
