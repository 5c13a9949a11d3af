#include "verifier/region_plan.h"

#include <algorithm>

namespace tso::verifier {

Region full_region(const Shape& s) {
  Region r;
  for (int64_t d : s) r.push_back({0, d});
  return r;
}

bool is_full(const Region& r, const Shape& s) { return r == full_region(s); }

Shape region_shape(const Region& r) {
  Shape s;
  for (const Range& x : r) s.push_back(x.size());
  return s;
}

Region bounding(const Region& a, const Region& b) {
  TSO_CHECK(a.size() == b.size(), "regions of different ranks");
  Region r(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    r[i] = {std::min(a[i].lo, b[i].lo), std::max(a[i].hi, b[i].hi)};
  return r;
}

namespace {

using Ints = std::vector<int64_t>;

const Shape& arg_shape(const Graph& g, const Node& n, int arg) { return g.type(n.args[arg]).shape; }

Plan operator_plan(const Node& n, Region out) {
  Plan p;
  p.out = std::move(out);
  p.op = n.op;
  p.attrs = n.attrs;
  return p;
}

Plan forward_plan(Region out, Plan::Read read) {
  Plan p;
  p.kind = Plan::kForward;
  p.out = std::move(out);
  p.reads.push_back(std::move(read));
  return p;
}

// The whole output from whole arguments: operators without a rule below.
Plan whole_plan(const Graph& g, const Node& n, const Shape& out) {
  Plan p = operator_plan(n, full_region(out));
  for (int a = 0; a < static_cast<int>(n.args.size()); ++a)
    p.reads.push_back({a, full_region(arg_shape(g, n, a))});
  return p;
}

// The part of an operand that numpy broadcasting stretches to `want` of
// `out`: aligned at the trailing axis, an axis of extent 1 is read whole.
Region broadcast_read(const Shape& operand, const Shape& out, const Region& want) {
  Region r;
  const int offset = out.rank() - operand.rank();
  for (int i = 0; i < operand.rank(); ++i)
    r.push_back(operand[i] == 1 ? Range{0, 1} : want[i + offset]);
  return r;
}

Plan broadcast_plan(const Graph& g, const Node& n, const Shape& out, const Region& want) {
  Plan p = operator_plan(n, want);
  for (int a = 0; a < static_cast<int>(n.args.size()); ++a)
    p.reads.push_back({a, broadcast_read(arg_shape(g, n, a), out, want)});
  return p;
}

// One spatial axis of a sliding window with its padding resolved as the
// reference executor resolves it (`same`: the odd element at the end).
struct Window {
  int64_t in, span, stride, pad_lo, pad_hi, out;
};

Window window(const Padding& pad, int d, int64_t in, int64_t span, int64_t stride, int64_t out) {
  Window w{in, span, stride, 0, 0, out};
  if (pad.mode == Padding::kSame) {
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
    w.pad_lo = total / 2;
    w.pad_hi = total - w.pad_lo;
  } else if (pad.mode == Padding::kExplicit) {
    w.pad_lo = pad.pads[d];
    w.pad_hi = pad.pads[d + 2];
  }
  return w;
}

struct WindowRead {
  Range in;
  int64_t pad_lo, pad_hi;
};

// The input range the windows of outputs `*want` read, and the padding that
// makes the same windows over just that range give just those outputs: the
// part of the original padding the windows reach. The trailing padding stops
// where the original's does, so a ceil_mode window that runs past it is cut
// (and counted) as in the original. Windows that read only padding widen
// `*want` to the whole axis.
WindowRead window_read(const Window& w, Range* want) {
  if (want->lo > 0 || want->hi < w.out) {
    const int64_t lo = want->lo * w.stride - w.pad_lo;
    const int64_t hi = (want->hi - 1) * w.stride - w.pad_lo + w.span;
    const int64_t a = std::max<int64_t>(lo, 0), b = std::min(hi, w.in);
    if (a < b) return {{a, b}, a - lo, std::min(hi, w.in + w.pad_hi) - b};
  }
  *want = {0, w.out};
  return {{0, w.in}, w.pad_lo, w.pad_hi};
}

// conv2d and the pools: batch and channels as given (conv2d adjusts the
// channels), the two spatial axes through their windows.
Plan window_plan(const Node& n, const Shape& x, const Shape& out, Region want, int64_t kh,
                 int64_t kw, Region* x_read) {
  const Ints& stride = n.attrs.ints(AttrKey::stride);
  const Ints dil = n.attrs.has(AttrKey::dilation) ? n.attrs.ints(AttrKey::dilation) : Ints{1, 1};
  const Padding& pad = n.attrs.pad(AttrKey::pad);
  const int64_t k[2] = {kh, kw};
  Padding sliced{Padding::kExplicit, {}};
  for (int d = 0; d < 2; ++d) {
    Window w = window(pad, d, x[2 + d], (k[d] - 1) * dil[d] + 1, stride[d], out[2 + d]);
    WindowRead r = window_read(w, &want[2 + d]);
    (*x_read)[2 + d] = r.in;
    sliced.pads[d] = r.pad_lo;
    sliced.pads[d + 2] = r.pad_hi;
  }
  const bool whole_plane = want[2] == Range{0, out[2]} && want[3] == Range{0, out[3]};
  Plan p = operator_plan(n, want);
  if (!whole_plane) p.attrs.set(AttrKey::pad, sliced);
  return p;
}

Plan conv_plan(const Graph& g, const Node& n, const Shape& out, Region want) {
  const Shape &x = arg_shape(g, n, 0), &w = arg_shape(g, n, 1);
  const int64_t groups = n.attrs.i(AttrKey::groups);
  const int64_t cout_g = w[0] / groups, cin_g = x[1] / groups;
  // Output channels of one group read that group's input channels alone;
  // a range across groups is widened to whole groups.
  const int64_t g0 = want[1].lo / cout_g, g1 = (want[1].hi - 1) / cout_g + 1;
  int64_t sliced_groups = groups;
  Range channels{0, x[1]};
  if (groups > 1 && g1 - g0 == 1) {
    sliced_groups = 1;
    channels = {g0 * cin_g, g1 * cin_g};
  } else if (groups > 1) {
    sliced_groups = g1 - g0;
    want[1] = {g0 * cout_g, g1 * cout_g};
    channels = {g0 * cin_g, g1 * cin_g};
  }
  Region x_read{want[0], channels, {}, {}};
  Plan p = window_plan(n, x, out, std::move(want), w[2], w[3], &x_read);
  p.attrs.set(AttrKey::groups, sliced_groups);
  Region w_read = full_region(w);
  w_read[0] = p.out[1];
  p.reads = {{0, std::move(x_read)}, {1, std::move(w_read)}};
  if (n.args.size() == 3) p.reads.push_back({2, Region{p.out[1]}});
  return p;
}

Plan pool_plan(const Graph& g, const Node& n, const Shape& out, const Region& want) {
  const Shape& x = arg_shape(g, n, 0);
  const Ints& k = n.attrs.ints(AttrKey::kernel);
  Region x_read{want[0], want[1], {}, {}};
  Plan p = window_plan(n, x, out, want, k[0], k[1], &x_read);
  p.reads = {{0, std::move(x_read)}};
  return p;
}

// Batch axes broadcast; rows of A, columns of B, the whole reduction.
Plan matmul_plan(const Graph& g, const Node& n, const Shape& out, const Region& want) {
  Plan p = operator_plan(n, want);
  for (int a = 0; a < 2; ++a) {
    const Shape& s = arg_shape(g, n, a);
    Region r = broadcast_read(s, out, want);
    r[s.rank() - 1 - a] = {0, s[s.rank() - 1 - a]};  // A's columns, B's rows: the reduction
    p.reads.push_back({a, std::move(r)});
  }
  return p;
}

Plan gemm_plan(const Graph& g, const Node& n, const Shape& out, const Region& want) {
  Plan p = operator_plan(n, want);
  const bool ta = n.attrs.i(AttrKey::trans_a), tb = n.attrs.i(AttrKey::trans_b);
  const Shape &a = arg_shape(g, n, 0), &b = arg_shape(g, n, 1);
  Region ra(2), rb(2);
  ra[ta] = want[0];
  ra[!ta] = {0, a[!ta]};
  rb[!tb] = want[1];
  rb[tb] = {0, b[tb]};
  p.reads = {{0, std::move(ra)}, {1, std::move(rb)}};
  if (n.args.size() == 3) p.reads.push_back({2, broadcast_read(arg_shape(g, n, 2), out, want)});
  return p;
}

Plan global_pool_plan(const Graph& g, const Node& n, const Region& want) {
  Region r = full_region(arg_shape(g, n, 0));
  r[0] = want[0];
  r[1] = want[1];
  Plan p = operator_plan(n, want);
  p.reads.push_back({0, std::move(r)});
  return p;
}

Plan batchnorm_plan(const Node& n, const Region& want) {
  Plan p = operator_plan(n, want);
  p.reads.push_back({0, want});
  for (int a = 1; a < 5; ++a) p.reads.push_back({a, Region{want[1]}});
  return p;
}

// The pieces the range meets, each read on its own part of the range.
Plan concat_plan(const Graph& g, const Node& n, const Region& want) {
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  Plan p = operator_plan(n, want);
  int64_t offset = 0;
  for (int a = 0; a < static_cast<int>(n.args.size()); ++a) {
    const int64_t size = arg_shape(g, n, a)[axis];
    Range r{std::max(want[axis].lo, offset) - offset,
            std::min(want[axis].hi, offset + size) - offset};
    if (r.lo < r.hi) {
      Region read = want;
      read[axis] = r;
      p.reads.push_back({a, std::move(read)});
    }
    offset += size;
  }
  if (p.reads.size() == 1) return forward_plan(want, p.reads[0]);
  return p;
}

Plan split_plan(const Node& n, int output, const Region& want) {
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  const Ints& sizes = n.attrs.ints(AttrKey::sizes);
  int64_t offset = 0;
  for (int j = 0; j < output; ++j) offset += sizes[j];
  Region read = want;
  read[axis] = {want[axis].lo + offset, want[axis].hi + offset};
  return forward_plan(want, {0, std::move(read)});
}

Plan transpose_plan(const Node& n, const Region& want) {
  const Ints& perm = n.attrs.ints(AttrKey::perm);
  Region read(want.size());
  for (size_t a = 0; a < perm.size(); ++a) read[perm[a]] = want[a];
  Plan p = operator_plan(n, want);
  p.reads.push_back({0, std::move(read)});
  return p;
}

// Output index i along a sliced axis reads start + i * step; the sliced
// input is sliced again from its own first (or, stepping back, last) element.
Plan slice_plan(const Node& n, const Region& want) {
  const Ints &starts = n.attrs.ints(AttrKey::starts), &axes = n.attrs.ints(AttrKey::axes),
             &steps = n.attrs.ints(AttrKey::steps);
  Region read = want;
  Ints s, e, ax, st;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Range o = want[axes[i]];
    const int64_t first = starts[i] + o.lo * steps[i], last = starts[i] + (o.hi - 1) * steps[i];
    read[axes[i]] = {std::min(first, last), std::max(first, last) + 1};
    if (steps[i] == 1) continue;
    const int64_t len = read[axes[i]].size();
    ax.push_back(axes[i]);
    st.push_back(steps[i]);
    s.push_back(steps[i] > 0 ? 0 : len - 1);
    e.push_back(steps[i] > 0 ? len : -(len + 1));
  }
  if (ax.empty()) return forward_plan(want, {0, std::move(read)});
  Plan p = operator_plan(n, want);
  p.attrs.set(AttrKey::starts, s)
      .set(AttrKey::ends, e)
      .set(AttrKey::axes, ax)
      .set(AttrKey::steps, st);
  p.reads.push_back({0, std::move(read)});
  return p;
}

// The input part the range covers, padded by the part of the padding it
// covers; a range inside the padding alone widens to the whole axis.
Plan pad_plan(const Graph& g, const Node& n, Region want) {
  const Shape& x = arg_shape(g, n, 0);
  const Ints& pads = n.attrs.ints(AttrKey::pads);
  const int r = x.rank();
  Region read(r);
  Ints sliced(2 * r);
  bool padded = false;
  for (int i = 0; i < r; ++i) {
    int64_t lo = std::max<int64_t>(want[i].lo - pads[i], 0);
    int64_t hi = std::min(want[i].hi - pads[i], x[i]);
    if (lo >= hi) {
      want[i] = {0, x[i] + pads[i] + pads[i + r]};
      lo = 0, hi = x[i];
    }
    read[i] = {lo, hi};
    sliced[i] = lo - (want[i].lo - pads[i]);
    sliced[i + r] = (want[i].hi - pads[i]) - hi;
    padded = padded || sliced[i] > 0 || sliced[i + r] > 0;
  }
  if (!padded) return forward_plan(std::move(want), {0, std::move(read)});
  Plan p = operator_plan(n, std::move(want));
  p.attrs.set(AttrKey::pads, sliced);
  p.reads.push_back({0, std::move(read)});
  return p;
}

// The smallest box of the mixed-radix axes `dims` (outermost first) holding
// the linear positions [*lo, *hi): some leading axes at one index, one axis
// on a range, the rest whole. [*lo, *hi) grows to that box's positions.
Region enclosing_box(std::span<const int64_t> dims, int64_t* lo, int64_t* hi) {
  const int q = static_cast<int>(dims.size());
  Region box(q);
  if (q == 0) return box;
  std::vector<int64_t> inner(q + 1, 1);  // inner[a]: positions in one index of axis a - 1
  for (int a = q - 1; a >= 0; --a) inner[a] = inner[a + 1] * dims[a];
  int k = q - 1;
  while (k > 0 && *lo / inner[k] != (*hi - 1) / inner[k]) --k;
  for (int a = 0; a < k; ++a) {
    const int64_t digit = *lo / inner[a + 1] % dims[a];
    box[a] = {digit, digit + 1};
  }
  box[k] = {*lo / inner[k + 1] % dims[k], (*hi - 1) / inner[k + 1] % dims[k] + 1};
  for (int a = k + 1; a < q; ++a) box[a] = {0, dims[a]};
  *lo = *lo / inner[k + 1] * inner[k + 1];
  *hi = ((*hi - 1) / inner[k + 1] + 1) * inner[k + 1];
  return box;
}

// reshape, flatten, squeeze, unsqueeze: the axes fall into groups of equal
// products on both sides; within a group the range is widened until it is a
// box on both sides (alternately, until neither side grows it), so that the
// group's part of the input and of the output hold the same positions in the
// same order and a reshape of the one is the other.
Plan reshape_plan(const Graph& g, const Node& n, const Shape& out, const Region& want) {
  const Shape& x = arg_shape(g, n, 0);
  Region read, wide;
  int i = 0, j = 0;
  while (i < x.rank() || j < out.rank()) {
    const int i0 = i, j0 = j;
    int64_t pin = i < x.rank() ? x[i++] : 1, pout = j < out.rank() ? out[j++] : 1;
    while (pin != pout) {
      if (pin < pout)
        pin *= x[i++];
      else
        pout *= out[j++];
    }
    std::span<const int64_t> in_dims = x.dims().subspan(i0, i - i0);
    std::span<const int64_t> out_dims = out.dims().subspan(j0, j - j0);
    int64_t lo = 0, last = 0;
    for (int a = j0; a < j; ++a) {
      lo = lo * out[a] + want[a].lo;
      last = last * out[a] + want[a].hi - 1;
    }
    int64_t hi = last + 1, before_lo, before_hi;
    Region in_box, out_box;
    do {
      before_lo = lo, before_hi = hi;
      out_box = enclosing_box(out_dims, &lo, &hi);
      in_box = enclosing_box(in_dims, &lo, &hi);
    } while (lo != before_lo || hi != before_hi);
    read.insert(read.end(), in_box.begin(), in_box.end());
    wide.insert(wide.end(), out_box.begin(), out_box.end());
  }
  Plan p = operator_plan(n, wide);
  if (!is_full(wide, out)) {
    const Shape s = region_shape(wide);
    p.op = Op::Reshape;
    p.attrs = Attrs{};
    p.attrs.set(AttrKey::shape, Ints(s.begin(), s.end()));
  }
  p.reads.push_back({0, std::move(read)});
  return p;
}

}  // namespace

Plan plan_region(const Graph& g, int node, int output, const Region& want) {
  const Node& n = g.node(node);
  const Shape& out = n.outs[output].shape;
  switch (n.op) {
    case Op::Conv2d:
      return conv_plan(g, n, out, want);
    case Op::AvgPool:
    case Op::MaxPool:
      return pool_plan(g, n, out, want);
    case Op::Matmul:
      return matmul_plan(g, n, out, want);
    case Op::Gemm:
      return gemm_plan(g, n, out, want);
    case Op::GlobalAvgPool:
      return global_pool_plan(g, n, want);
    case Op::BatchNorm:
      return batchnorm_plan(n, want);
    case Op::Add:
    case Op::Mul:
    case Op::Sub:
    case Op::Div:
    case Op::Pow:
    case Op::Where:
    case Op::ScalarMul:  // its scalar is rank 0: read whole
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Sqrt:
    case Op::Neg:
    case Op::Exp:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::Softplus:
    case Op::Log:
    case Op::Abs:
    case Op::Sin:
    case Op::Cos:
    case Op::Max:
    case Op::Min:
    case Op::IsNaN:
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
    case Op::Not:
    case Op::And:
    case Op::Or:
      return broadcast_plan(g, n, out, want);
    case Op::Concat:
      return concat_plan(g, n, want);
    case Op::Split:
      return split_plan(n, output, want);
    case Op::Transpose:
      return transpose_plan(n, want);
    case Op::Slice:
      return slice_plan(n, want);
    case Op::Pad:
      return pad_plan(g, n, want);
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
      return reshape_plan(g, n, out, want);
    default:
      return whole_plan(g, n, out);
  }
}

}  // namespace tso::verifier
