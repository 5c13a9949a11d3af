#include "verifier/position_eval.h"

#include <algorithm>
#include <bit>

#include "core/error.h"
#include "runtime/reference/scalar.h"
#include "verifier/box_derivation.h"

namespace tso::verifier {

namespace {

using ref::Mod;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t name_hash(std::string_view name) {  // FNV-1a: the same on every platform
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// The key of one input in one test; its elements hash from it with one
// mixing round each (they sit in the inner loop of every reduction).
uint64_t input_key(uint64_t seed, int test, uint64_t name) {
  return mix(mix(mix(seed) ^ static_cast<uint64_t>(test)) ^ name);
}

Mod element(uint64_t key, int64_t flat) {
  // A 62-bit value reduced without a division.
  Mod m;
  m.v = Mod::reduce(mix(key ^ static_cast<uint64_t>(flat) * 0xd6e8feb86659fd93ull) >> 2);
  return m;
}

// Row-major strides, 0 past the rank (so a flat index is one fixed-length
// dot product).
std::array<int64_t, Shape::kMaxRank> strides_of(const Shape& s) {
  std::array<int64_t, Shape::kMaxRank> st{};
  for (int i = s.rank() - 1; i >= 0; --i) st[i] = i == s.rank() - 1 ? 1 : st[i + 1] * s[i + 1];
  return st;
}

// a . b in the field: each reduced product is below 2^31, so their sum
// cannot overflow 64 bits for any row a tensor can hold.
Mod dot(const Mod* a, const Mod* b, int64_t n) {
  uint64_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += Mod::reduce(uint64_t{a[k].v} * b[k].v);
  return Mod(s);
}

constexpr int kFlatBits = 40;

// clip's surrogate, the one that is not the reference executor's: that one
// clamps in the order of the signed representatives, which sends nearly every
// random field element to a bound, so two different arguments would clip
// alike about half the time. Here clip is x (x + k) with k hashed from the
// bounds: degree 2, and different bounds give different polynomials.
Mod clip(const Node& n, Mod x) {
  Mod k;
  k.v = Mod::reduce(mix(mix(std::bit_cast<uint64_t>(n.attrs.f(AttrKey::min))) ^
                        std::bit_cast<uint64_t>(n.attrs.f(AttrKey::max))) >>
                    2);
  return x * (x + k);
}

// A conv2d's, matmul's or gemm's fused activation: the standalone operator's
// surrogate (clip's keyed by the node's bounds, as a standalone clip's).
Mod activation(const Node& n, Mod x) {
  switch (n.attrs.act(AttrKey::act)) {
    case Act::kNone:
      return x;
    case Act::kRelu:
      return ref::fn::relu(x);
    case Act::kSigmoid:
      return ref::fn::sigmoid(x);
    case Act::kTanh:
      return ref::fn::tanh(x);
    case Act::kGelu:
      return ref::fn::gelu(x);
    case Act::kClip:
      return clip(n, x);
  }
  TSO_CHECK(false, "unknown activation");
}

// The surrogates' degrees (runtime/reference/executor.h lists them).
int activation_degree(Act a) {
  switch (a) {
    case Act::kNone:
      return 1;
    case Act::kRelu:
    case Act::kClip:
      return 2;
    case Act::kSigmoid:
    case Act::kTanh:
      return 3;
    case Act::kGelu:
      return 6;
  }
  TSO_CHECK(false, "unknown activation");
}

int position_wise_degree(Op op) {
  switch (op) {
    case Op::Relu:
    case Op::Sqrt:
    case Op::Clip:
      return 2;
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Exp:
      return 3;
    case Op::Erf:
      return 5;
    case Op::Gelu:
      return 6;
    default:  // neg
      return 1;
  }
}

Mod position_wise(const Node& n, Mod x) {
  switch (n.op) {
    case Op::Relu:
      return ref::fn::relu(x);
    case Op::Sigmoid:
      return ref::fn::sigmoid(x);
    case Op::Tanh:
      return ref::fn::tanh(x);
    case Op::Erf:
      return ref::fn::erf(x);
    case Op::Gelu:
      return ref::fn::gelu(x);
    case Op::Exp:
      return ref::fn::exp(x);
    case Op::Sqrt:
      return ref::fn::sqrt(x);
    case Op::Clip:
      return clip(n, x);
    default:  // neg
      return -x;
  }
}

bool is_position_wise(Op op) {
  switch (op) {
    case Op::Neg:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Exp:
    case Op::Sqrt:
    case Op::Clip:
      return true;
    default:
      return false;
  }
}

// The operators that compute their positions (memoized per test); the
// others move data, or are constants.
bool computed(Op op) {
  switch (op) {
    case Op::Conv2d:
    case Op::AvgPool:
    case Op::Matmul:
    case Op::Gemm:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::ScalarMul:
      return true;
    default:
      return is_position_wise(op);
  }
}

bool constant(Op op) {
  return op == Op::ConstOnes || op == Op::ConstPool || op == Op::ConstEye || op == Op::ConstEyeConv;
}

}  // namespace

Mod input_value(uint64_t seed, int test, std::string_view name, int64_t flat) {
  return element(input_key(seed, test, name_hash(name)), flat);
}

int polynomial_degree(const Graph& g) {
  std::vector<int> deg(g.size(), 0);
  int worst = 1;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    int sum = 0, max = 0;
    for (const TensorRef& r : n.args) {
      sum += deg[r.node];
      max = std::max(max, deg[r.node]);
    }
    switch (n.op) {
      case Op::Input:
      case Op::Weight:
        deg[i] = 1;
        break;
      case Op::Conv2d:  // x * w + bias
      case Op::Gemm:    // a * b + c
        deg[i] = std::max(deg[n.args[0].node] + deg[n.args[1].node],
                          n.args.size() > 2 ? deg[n.args[2].node] : 0);
        break;
      case Op::Matmul:
      case Op::Mul:
      case Op::ScalarMul:
        deg[i] = sum;
        break;
      default:  // sums and data movement
        deg[i] = is_position_wise(n.op) ? position_wise_degree(n.op) * max : max;
    }
    if (n.attrs.has(AttrKey::act)) deg[i] *= activation_degree(n.attrs.act(AttrKey::act));
  }
  for (const GraphOutput& o : g.outputs()) worst = std::max(worst, deg[o.ref.node]);
  return worst;
}

PositionEvaluator::PositionEvaluator(const Graph& g) : g_(g), info_(g.size()) {
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    for (const TensorType& t : n.outs) info_[i].strides.push_back(strides_of(t.shape));
    if (n.op == Op::Input || n.op == Op::Weight) info_[i].name_hash = name_hash(n.name);
    for (const TensorType& t : n.outs) TSO_CHECK(t.shape.numel() < (int64_t{1} << kFlatBits));
  }
}

void PositionEvaluator::start(uint64_t seed, int test) {
  for (size_t i = 0; i < info_.size(); ++i)
    info_[i].key = input_key(seed, test, info_[i].name_hash);
  memo_.clear();
}

Mod PositionEvaluator::output(int o, std::span<const int64_t> index) {
  Index idx{};
  std::copy(index.begin(), index.end(), idx.begin());
  return value(g_.outputs()[o].ref, idx);
}

int64_t PositionEvaluator::flat(TensorRef r, const Index& idx) const {
  const Strides& st = info_[r.node].strides[r.output];
  int64_t f = 0;
  for (int i = 0; i < Shape::kMaxRank; ++i) f += idx[i] * st[i];
  return f;
}

Mod PositionEvaluator::value(TensorRef r, const Index& idx) {
  ++reads_;
  const Node& n = g_.node(r.node);
  switch (n.op) {
    case Op::Input:
    case Op::Weight:
      return element(info_[r.node].key, flat(r, idx));
    case Op::ConstOnes:
    case Op::ConstPool:
      return Mod(1);
    case Op::ConstEye:
      return Mod(idx[0] == idx[1] ? 1 : 0);
    case Op::ConstEyeConv: {
      const Shape& s = n.outs[0].shape;
      return Mod(idx[0] == idx[1] && idx[2] == s[2] / 2 && idx[3] == s[3] / 2 ? 1 : 0);
    }
    default:
      break;
  }
  if (!computed(n.op)) return move(n, r, idx);
  const uint64_t key = static_cast<uint64_t>(r.node) << kFlatBits | flat(r, idx);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  const Mod v = compute(n, idx);
  memo_.emplace(key, v);
  return v;
}

// The position of an operand of shape `s` that numpy broadcasting stretches
// to position `idx` of `out`.
PositionEvaluator::Index PositionEvaluator::broadcast(const Shape& s, const Shape& out,
                                                      const Index& idx) {
  Index a{};
  for (int i = 0; i < s.rank(); ++i) a[i] = s[i] == 1 ? 0 : idx[i + out.rank() - s.rank()];
  return a;
}

Mod PositionEvaluator::compute(const Node& n, const Index& idx) {
  switch (n.op) {
    case Op::Conv2d:
      return activation(n, conv(n, idx));
    case Op::AvgPool:
      return avgpool(n, idx);
    case Op::Matmul:
      return activation(n, matmul(n, idx));
    case Op::Gemm:
      return activation(n, gemm(n, idx));
    case Op::ScalarMul:
      return value(n.args[0], idx) * value(n.args[1], Index{});
    case Op::Add:
    case Op::Sub:
    case Op::Mul: {
      const Shape& out = n.outs[0].shape;
      const Mod a = value(n.args[0], broadcast(shape(n.args[0]), out, idx));
      const Mod b = value(n.args[1], broadcast(shape(n.args[1]), out, idx));
      return n.op == Op::Add ? a + b : n.op == Op::Sub ? a - b : a * b;
    }
    default:
      return position_wise(n, value(n.args[0], idx));
  }
}

Mod PositionEvaluator::conv(const Node& n, const Index& idx) {
  const Shape &xs = shape(n.args[0]), &ws = shape(n.args[1]);
  const int64_t groups = n.attrs.i(AttrKey::groups);
  const int64_t cg = xs[1] / groups, group = idx[1] / (ws[0] / groups);
  const Window wh = window(n, xs, ws, 0), ww = window(n, xs, ws, 1);
  Mod sum = n.args.size() > 2 ? value(n.args[2], Index{idx[1]}) : Mod();
  Index xi{idx[0], group * cg, 0, 0}, wi{idx[1], 0, 0, 0};
  std::vector<Mod> x(cg), w(cg);  // one tap's channels
  for (int64_t i = 0; i < wh.k; ++i) {
    xi[2] = idx[2] * wh.stride + i * wh.dil - wh.pad_lo;
    if (xi[2] < 0 || xi[2] >= xs[2]) continue;
    wi[2] = i;
    for (int64_t j = 0; j < ww.k; ++j) {
      xi[3] = idx[3] * ww.stride + j * ww.dil - ww.pad_lo;
      if (xi[3] < 0 || xi[3] >= xs[3]) continue;
      wi[3] = j;
      row(n.args[0], xi, 1, 1, cg, x.data());
      row(n.args[1], wi, 1, 1, cg, w.data());
      sum += dot(x.data(), w.data(), cg);
    }
  }
  return sum;
}

Mod PositionEvaluator::avgpool(const Node& n, const Index& idx) {
  const Shape& xs = shape(n.args[0]);
  const Window wh = window(n, xs, xs, 0), ww = window(n, xs, xs, 1);
  const int64_t hs = idx[2] * wh.stride - wh.pad_lo, ws = idx[3] * ww.stride - ww.pad_lo;
  const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + wh.k, xs[2]);
  const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + ww.k, xs[3]);
  Mod sum;
  Index xi{idx[0], idx[1], 0, w0};
  std::vector<Mod> x(std::max<int64_t>(w1 - w0, 0));
  for (xi[2] = h0; xi[2] < h1; ++xi[2]) {
    row(n.args[0], xi, 3, 1, w1 - w0, x.data());
    for (Mod v : x) sum += v;
  }
  const int64_t count =
      n.attrs.i(AttrKey::count_include_pad) != 0
          ? (std::min(hs + wh.k, xs[2] + wh.pad_hi) - std::max(hs, -wh.pad_lo)) *
                (std::min(ws + ww.k, xs[3] + ww.pad_hi) - std::max(ws, -ww.pad_lo))
          : (h1 - h0) * (w1 - w0);
  return ref::fn::div(sum, Mod::from_signed(count));
}

// The last two axes multiply; the leading ones broadcast; a rank-1 operand
// is a row (left) or column (right) whose unit axis the result drops.
Mod PositionEvaluator::matmul(const Node& n, const Index& idx) {
  const Shape &as = shape(n.args[0]), &bs = shape(n.args[1]);
  const int ra = as.rank(), rb = bs.rank();
  const int na = std::max(ra - 2, 0), nb = std::max(rb - 2, 0);
  const int nout = n.outs[0].shape.rank() - (ra > 1) - (rb > 1);
  Index ai{}, bi{};
  for (int k = 0; k < na; ++k) ai[k] = as[k] == 1 ? 0 : idx[nout - na + k];
  for (int k = 0; k < nb; ++k) bi[k] = bs[k] == 1 ? 0 : idx[nout - nb + k];
  if (ra > 1) ai[na] = idx[nout];
  if (rb > 1) bi[nb + 1] = idx[nout + (ra > 1)];
  const int ka = ra > 1 ? na + 1 : 0, kb = rb > 1 ? nb : 0;
  const int64_t depth = as[ra - 1];
  std::vector<Mod> a(depth), b(depth);
  row(n.args[0], ai, ka, 1, depth, a.data());
  row(n.args[1], bi, kb, 1, depth, b.data());
  return dot(a.data(), b.data(), depth);
}

// alpha op(A) op(B) + beta C, op transposing when asked, C broadcast.
Mod PositionEvaluator::gemm(const Node& n, const Index& idx) {
  const int ta = n.attrs.i(AttrKey::trans_a) != 0, tb = n.attrs.i(AttrKey::trans_b) != 0;
  Index ai{}, bi{};
  ai[ta] = idx[0];
  bi[1 - tb] = idx[1];
  const int64_t depth = shape(n.args[0])[1 - ta];
  std::vector<Mod> a(depth), b(depth);
  row(n.args[0], ai, 1 - ta, 1, depth, a.data());
  row(n.args[1], bi, tb, 1, depth, b.data());
  Mod sum = dot(a.data(), b.data(), depth);
  sum *= ref::fn::constant<Mod>(n.attrs.f(AttrKey::alpha));
  if (n.args.size() > 2)
    sum += ref::fn::constant<Mod>(n.attrs.f(AttrKey::beta)) *
           value(n.args[2], broadcast(shape(n.args[2]), n.outs[0].shape, idx));
  return sum;
}

PositionEvaluator::Index PositionEvaluator::unflatten(const Shape& s, int64_t f, Index x) {
  if (f <= UINT32_MAX) {  // 32-bit divisions: several times faster, and this is the hot loop
    uint32_t u = static_cast<uint32_t>(f);
    for (int i = s.rank() - 1; i >= 0; --i) {
      x[i] = u % static_cast<uint32_t>(s[i]);
      u /= static_cast<uint32_t>(s[i]);
    }
  } else {
    for (int i = s.rank() - 1; i >= 0; --i) {
      x[i] = f % s[i];
      f /= s[i];
    }
  }
  return x;
}

std::pair<int64_t, int64_t> PositionEvaluator::inside(int64_t p0, int64_t step, int64_t count,
                                                      int64_t lo, int64_t hi) {
  // The smallest k >= 0 with p0 + k * step >= bound (step > 0).
  const auto from = [&](int64_t bound) {
    return bound <= p0 ? int64_t{0} : (bound - p0 + step - 1) / step;
  };
  const int64_t first = std::min(from(lo), count);
  return {first, std::clamp(from(hi), first, count)};
}

void PositionEvaluator::row_by_element(TensorRef r, Index idx, int axis, int64_t step,
                                       int64_t count, Mod* out) {
  for (int64_t k = 0; k < count; ++k, idx[axis] += step) out[k] = value(r, idx);
}

// Each case maps the whole row as move() maps one position; a seam along the
// row (a concat's, a pad's border, an update's patch) splits it into pieces.
// Operators that compute, reshapes and constants go element by element.
void PositionEvaluator::row(TensorRef r, Index idx, int axis, int64_t step, int64_t count,
                            Mod* out) {
  if (count <= 0) return;
  const Node& n = g_.node(r.node);
  switch (n.op) {
    case Op::Input:
    case Op::Weight: {
      reads_ += count;
      const uint64_t key = info_[r.node].key;
      const int64_t f = flat(r, idx), df = info_[r.node].strides[r.output][axis] * step;
      for (int64_t k = 0; k < count; ++k) out[k] = element(key, f + k * df);
      return;
    }
    case Op::Transpose: {
      reads_ += count;
      const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);
      Index x = idx;
      for (size_t i = 0; i < perm.size(); ++i) x[perm[i]] = idx[i];
      return row(n.args[0], x, static_cast<int>(perm[axis]), step, count, out);
    }
    case Op::Slice: {
      reads_ += count;
      const std::vector<int64_t>& axes = n.attrs.ints(AttrKey::axes);
      Index x = idx;
      int64_t s = step;
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t at = n.attrs.ints(AttrKey::steps)[i];
        x[axes[i]] = n.attrs.ints(AttrKey::starts)[i] + idx[axes[i]] * at;
        if (axes[i] == axis) s = step * at;
      }
      return row(n.args[0], x, axis, s, count, out);
    }
    case Op::Split: {
      reads_ += count;
      const int a = static_cast<int>(n.attrs.i(AttrKey::axis));
      Index x = idx;
      for (int k = 0; k < r.output; ++k) x[a] += n.attrs.ints(AttrKey::sizes)[k];
      return row(n.args[0], x, axis, step, count, out);
    }
    case Op::Concat: {
      const int a = static_cast<int>(n.attrs.i(AttrKey::axis));
      if (a != axis) {
        reads_ += count;
        Index x = idx;
        size_t k = 0;
        for (; k + 1 < n.args.size() && x[a] >= shape(n.args[k])[a]; ++k)
          x[a] -= shape(n.args[k])[a];
        return row(n.args[k], x, axis, step, count, out);
      }
      if (step <= 0) break;
      reads_ += count;
      int64_t base = 0;
      for (const TensorRef& arg : n.args) {
        const int64_t size = shape(arg)[a];
        const auto [first, last] = inside(idx[axis], step, count, base, base + size);
        Index x = idx;
        x[axis] += first * step - base;
        row(arg, x, axis, step, last - first, out + first);
        base += size;
      }
      return;
    }
    case Op::Pad:
    case Op::Enlarge: {
      if (step <= 0) break;
      reads_ += count;
      const Shape &in = shape(n.args[0]), &os = n.outs[0].shape;
      const Mod fill = n.op == Op::Pad ? ref::fn::constant<Mod>(n.attrs.f(AttrKey::value)) : Mod();
      Index x = idx;
      bool outside = false;
      for (int i = 0; i < os.rank(); ++i) {
        x[i] -= n.op == Op::Pad ? n.attrs.ints(AttrKey::pads)[i] : (os[i] - in[i]) / 2;
        outside = outside || (i != axis && (x[i] < 0 || x[i] >= in[i]));
      }
      const auto [first, last] =
          outside ? std::pair{count, count} : inside(x[axis], step, count, 0, in[axis]);
      std::fill(out, out + first, fill);
      x[axis] += first * step;
      row(n.args[0], x, axis, step, last - first, out + first);
      std::fill(out + last, out + count, fill);
      return;
    }
    case Op::UpdateSlice: {
      if (step <= 0) break;
      reads_ += count;
      const Shape& patch = shape(n.args[1]);
      Index x = idx;
      bool outside = false;
      for (int i = 0; i < n.outs[0].shape.rank(); ++i) {
        x[i] -= n.attrs.ints(AttrKey::starts)[i];
        outside = outside || (i != axis && (x[i] < 0 || x[i] >= patch[i]));
      }
      const auto [first, last] =
          outside ? std::pair{count, count} : inside(x[axis], step, count, 0, patch[axis]);
      row(n.args[0], idx, axis, step, first, out);
      x[axis] += first * step;
      row(n.args[1], x, axis, step, last - first, out + first);
      Index rest = idx;
      rest[axis] += last * step;
      row(n.args[0], rest, axis, step, count - last, out + last);
      return;
    }
    default: {
      if (computed(n.op) || constant(n.op) || step <= 0 || shape(n.args[0]).rank() == 0) break;
      // A reshape: the row is evenly spaced in the flat order, so in the
      // source it runs along the outermost axis whose stride divides that
      // spacing, in pieces that end where that axis would carry over.
      reads_ += count;
      const Shape& in = shape(n.args[0]);
      const Strides& st = info_[n.args[0].node].strides[n.args[0].output];
      const int64_t df = info_[r.node].strides[r.output][axis] * step;
      int b = 0;
      while (df % st[b] != 0) ++b;
      const int64_t sb = df / st[b];
      int64_t f = flat(r, idx);
      for (int64_t k = 0; k < count;) {
        const Index x = unflatten(in, f, idx);
        const int64_t m = std::min(count - k, (in[b] - 1 - x[b]) / sb + 1);
        row(n.args[0], x, b, sb, m, out + k);
        k += m;
        f += m * df;
      }
      return;
    }
  }
  row_by_element(r, idx, axis, step, count, out);
}

// Data movement: the position read, or the constant written.
Mod PositionEvaluator::move(const Node& n, TensorRef r, const Index& idx) {
  const Shape& out = n.outs[r.output].shape;
  const int rank = out.rank();
  Index x = idx;
  switch (n.op) {
    case Op::Concat: {
      const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
      size_t k = 0;
      for (; k + 1 < n.args.size() && x[axis] >= shape(n.args[k])[axis]; ++k)
        x[axis] -= shape(n.args[k])[axis];
      return value(n.args[k], x);
    }
    case Op::Split: {
      const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
      for (int k = 0; k < r.output; ++k) x[axis] += n.attrs.ints(AttrKey::sizes)[k];
      return value(n.args[0], x);
    }
    case Op::Transpose: {
      const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);  // one entry per axis
      for (int i = 0; i < rank; ++i) x[perm[i]] = idx[i];
      return value(n.args[0], x);
    }
    case Op::Slice: {
      const std::vector<int64_t>& axes = n.attrs.ints(AttrKey::axes);
      for (size_t i = 0; i < axes.size(); ++i)
        x[axes[i]] =
            n.attrs.ints(AttrKey::starts)[i] + idx[axes[i]] * n.attrs.ints(AttrKey::steps)[i];
      return value(n.args[0], x);
    }
    case Op::Pad:
    case Op::Enlarge: {
      const Shape& in = shape(n.args[0]);
      for (int i = 0; i < rank; ++i) {
        x[i] -= n.op == Op::Pad ? n.attrs.ints(AttrKey::pads)[i] : (out[i] - in[i]) / 2;
        if (x[i] < 0 || x[i] >= in[i])
          return n.op == Op::Pad ? ref::fn::constant<Mod>(n.attrs.f(AttrKey::value)) : Mod();
      }
      return value(n.args[0], x);
    }
    case Op::UpdateSlice: {
      const Shape& patch = shape(n.args[1]);
      bool inside = true;
      for (int i = 0; i < rank; ++i) {
        x[i] -= n.attrs.ints(AttrKey::starts)[i];
        inside = inside && x[i] >= 0 && x[i] < patch[i];
      }
      return inside ? value(n.args[1], x) : value(n.args[0], idx);
    }
    default:  // reshape and its kin: the same row-major position
      return value(n.args[0], unflatten(shape(n.args[0]), flat(r, idx), x));
  }
}

}  // namespace tso::verifier
