// Elementwise operators: unary functions (and fused activations), numpy-style
// broadcasting binary operators, scalar multiplication and clip; plus the
// shape helpers the other families share.
#include <algorithm>
#include <cmath>

#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

std::string shape_text(const Shape& s) { return to_string(s); }

Error shape_error(std::string_view op, const std::string& what) {
  return Error{std::string(op) + ": " + what};
}

bool normalize_axis(int64_t* axis, int rank) {
  if (*axis < 0) *axis += rank;
  return *axis >= 0 && *axis < rank;
}

Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  int r = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < r; ++i) {
    int ia = i - (r - a.rank()), ib = i - (r - b.rank());
    int64_t da = ia < 0 ? 1 : a[ia], db = ib < 0 ? 1 : b[ib];
    if (da != db && da != 1 && db != 1)
      return shape_error(op, "shapes " + shape_text(a) + " and " + shape_text(b) +
                                 " do not broadcast");
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.rank());
  int64_t acc = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> own = strides_of(s), st(out.rank(), 0);
  int off = out.rank() - s.rank();
  for (int i = 0; i < s.rank(); ++i) st[off + i] = s[i] == 1 ? 0 : own[i];
  return st;
}

namespace {

// y = f(a, b) over the broadcast shape `out`: an odometer over the outer
// dimensions around a strided inner loop, so a per-channel operand such as
// [1,C,1,1] costs no index arithmetic per element.
template <class S, class F>
void broadcast_loop(const Shape& out, const Tensor<S>& a, const Tensor<S>& b, S* y, F f) {
  int r = out.rank();
  if (out.numel() == 0) return;
  if (r == 0) {
    y[0] = f(a.data[0], b.data[0]);
    return;
  }
  std::vector<int64_t> sa = broadcast_strides(a.shape, out), sb = broadcast_strides(b.shape, out);
  int64_t inner = out[r - 1], ia = sa[r - 1], ib = sb[r - 1];
  int64_t outer = out.numel() / inner;
  std::vector<int64_t> idx(r, 0);
  const S* pa = a.data.data();
  const S* pb = b.data.data();
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < outer; ++o, y += inner) {
    for (int64_t j = 0; j < inner; ++j) y[j] = f(pa[oa + j * ia], pb[ob + j * ib]);
    for (int d = r - 2; d >= 0; --d) {
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out[d]) break;
      oa -= sa[d] * out[d];
      ob -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

template <class S, class F>
Expected<Tensor<S>> broadcast(const Tensor<S>& a, const Tensor<S>& b, std::string_view op, F f) {
  if (a.shape == b.shape) {  // the common case (residual adds): no strides at all
    Tensor<S> y(a.shape);
    for (int64_t i = 0; i < a.numel(); ++i) y.data[i] = f(a.data[i], b.data[i]);
    return y;
  }
  Expected<Shape> out = broadcast_shapes(a.shape, b.shape, op);
  if (!out) return out.error();
  Tensor<S> y(*out);
  broadcast_loop(*out, a, b, y.data.data(), f);
  return y;
}

template <class S, class F>
void map(std::span<S> xs, F f) {
  for (S& x : xs) x = f(x);
}

}  // namespace

template <class S>
void Elementwise<S>::apply(Fn f, std::span<S> xs) {
  switch (f) {
    case Fn::kIdentity: return;
    case Fn::kRelu: return map(xs, [](S x) { return fn::relu(x); });
    case Fn::kSigmoid: return map(xs, [](S x) { return fn::sigmoid(x); });
    case Fn::kTanh: return map(xs, [](S x) { return fn::tanh(x); });
    case Fn::kErf: return map(xs, [](S x) { return fn::erf(x); });
    case Fn::kGelu: return map(xs, [](S x) { return fn::gelu(x); });
    case Fn::kExp: return map(xs, [](S x) { return fn::exp(x); });
    case Fn::kSqrt: return map(xs, [](S x) { return fn::sqrt(x); });
    case Fn::kNeg: return map(xs, [](S x) { return fn::neg(x); });
  }
}

template <class S>
void Elementwise<S>::activate(const Attrs& a, std::span<S> xs) {
  switch (a.act(AttrKey::act)) {
    case Act::kNone: return;
    case Act::kRelu: return apply(Fn::kRelu, xs);
    case Act::kSigmoid: return apply(Fn::kSigmoid, xs);
    case Act::kTanh: return apply(Fn::kTanh, xs);
    case Act::kGelu: return apply(Fn::kGelu, xs);
    case Act::kClip: {
      const double lo = a.f(AttrKey::min), hi = a.f(AttrKey::max);
      return map(xs, [lo, hi](S v) { return fn::clip(v, lo, hi); });
    }
  }
  TSO_CHECK(false, "unknown activation");
}

template <class S>
Tensor<S> Elementwise<S>::unary(Fn f, Tensor<S> x) {
  apply(f, x.data);
  return x;
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::binary(Bin op, const Tensor<S>& a, const Tensor<S>& b) {
  switch (op) {
    case Bin::kAdd: return broadcast(a, b, "add", [](S x, S y) { return x + y; });
    case Bin::kSub: return broadcast(a, b, "sub", [](S x, S y) { return x - y; });
    case Bin::kMul: return broadcast(a, b, "mul", [](S x, S y) { return x * y; });
    case Bin::kDiv: return broadcast(a, b, "div", [](S x, S y) { return fn::div(x, y); });
    case Bin::kPow: return broadcast(a, b, "pow", [](S x, S y) { return fn::pow(x, y); });
  }
  TSO_CHECK(false, "unknown binary operator");
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::smul(const Tensor<S>& x, const Tensor<S>& s) {
  if (s.numel() != 1)
    return shape_error("smul", "the scalar operand has shape " + shape_text(s.shape) +
                                   ", expected a single element");
  Tensor<S> y = x;
  S k = s.data[0];
  map(std::span<S>(y.data), [k](S v) { return v * k; });
  return y;
}

template <class S>
Tensor<S> Elementwise<S>::clip(const Tensor<S>& x, const Attrs& a) {
  double lo = a.f(AttrKey::min), hi = a.f(AttrKey::max);
  Tensor<S> y = x;
  map(std::span<S>(y.data), [lo, hi](S v) { return fn::clip(v, lo, hi); });
  return y;
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::leaky_relu(const Tensor<S>& x, const Attrs& a) {
  if constexpr (fn::Real<S>) {
    const S alpha = static_cast<S>(a.f(AttrKey::alpha));
    Tensor<S> y = x;
    map(std::span<S>(y.data), [alpha](S v) { return v < S(0) ? alpha * v : v; });
    return y;
  } else {
    return shape_error("leaky_relu", "has no Mod image (the generator does not enumerate it)");
  }
}

// log(1 + exp(x)), written so that exp never overflows.
template <class S>
Expected<Tensor<S>> Elementwise<S>::softplus(const Tensor<S>& x) {
  if constexpr (fn::Real<S>) {
    Tensor<S> y = x;
    map(std::span<S>(y.data), [](S v) {
      return v > S(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
    });
    return y;
  } else {
    return shape_error("softplus", "has no Mod image (the generator does not enumerate it)");
  }
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::log(const Tensor<S>& x) {
  if constexpr (fn::Real<S>) {
    Tensor<S> y = x;
    map(std::span<S>(y.data), [](S v) { return std::log(v); });
    return y;
  } else {
    return shape_error("log", "has no Mod image (the generator does not enumerate it)");
  }
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::abs(const Tensor<S>& x) {
  if constexpr (fn::Real<S>) {
    Tensor<S> y = x;
    map(std::span<S>(y.data), [](S v) { return std::abs(v); });
    return y;
  } else {
    return shape_error("abs", "has no Mod image (Mod values have no sign)");
  }
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::sinusoid(Op op, const Tensor<S>& x) {
  if constexpr (fn::Real<S>) {
    Tensor<S> y = x;
    if (op == Op::Sin)
      map(std::span<S>(y.data), [](S v) { return std::sin(v); });
    else
      map(std::span<S>(y.data), [](S v) { return std::cos(v); });
    return y;
  } else {
    return shape_error(op_name(op), "has no Mod image (the generator does not enumerate it)");
  }
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::extremum(Op op, const Tensor<S>& a, const Tensor<S>& b) {
  if constexpr (fn::Real<S>) {
    // u where it wins or is NaN, else v (NaN when v is).
    if (op == Op::Max)
      return broadcast(a, b, "max", [](S u, S v) { return u > v || u != u ? u : v; });
    return broadcast(a, b, "min", [](S u, S v) { return u < v || u != u ? u : v; });
  } else {
    return shape_error(op_name(op), "has no Mod image (Mod values have no order)");
  }
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::isnan(const Tensor<S>& x) {
  if constexpr (fn::Real<S>) {
    Tensor<S> y(x.shape);
    for (int64_t i = 0; i < x.numel(); ++i) y.data[i] = std::isnan(x.data[i]) ? S(1) : S(0);
    return y;
  } else {
    return shape_error("isnan",
                       "has no Mod image (Mod values are never NaN; the generator "
                       "does not enumerate isnan)");
  }
}

// An odometer over the output with one offset per operand: where is a guard
// (BERT's attention), not a hot loop, so no fast paths.
template <class S>
Expected<Tensor<S>> Elementwise<S>::where(const Tensor<S>& c, const Tensor<S>& a,
                                          const Tensor<S>& b) {
  Expected<Shape> ca = broadcast_shapes(c.shape, a.shape, "where");
  if (!ca) return ca.error();
  Expected<Shape> out = broadcast_shapes(*ca, b.shape, "where");
  if (!out) return out.error();
  Tensor<S> y(*out);
  const int r = out->rank();
  const std::vector<int64_t> sc = broadcast_strides(c.shape, *out),
                             sa = broadcast_strides(a.shape, *out),
                             sb = broadcast_strides(b.shape, *out);
  std::vector<int64_t> idx(r, 0);
  int64_t oc = 0, oa = 0, ob = 0;
  const S zero = fn::zero<S>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    y.data[i] = c.data[oc] == zero ? b.data[ob] : a.data[oa];
    for (int d = r - 1; d >= 0; --d) {
      oc += sc[d], oa += sa[d], ob += sb[d];
      if (++idx[d] < (*out)[d]) break;
      oc -= sc[d] * (*out)[d], oa -= sa[d] * (*out)[d], ob -= sb[d] * (*out)[d];
      idx[d] = 0;
    }
  }
  return y;
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::compare(Cmp op, const Tensor<S>& a, const Tensor<S>& b) {
  if constexpr (fn::Real<S>) {
    auto truth = [](bool v) { return v ? S(1) : S(0); };
    switch (op) {
      case Cmp::kEqual: return broadcast(a, b, "equal", [&](S x, S y) { return truth(x == y); });
      case Cmp::kLess: return broadcast(a, b, "less", [&](S x, S y) { return truth(x < y); });
      case Cmp::kGreater:
        return broadcast(a, b, "greater", [&](S x, S y) { return truth(x > y); });
    }
    TSO_CHECK(false, "unknown comparison");
  } else {
    return shape_error("compare",
                       "has no Mod image (Mod values have no order; the generator does not "
                       "enumerate comparisons)");
  }
}

template <class S>
Tensor<S> Elementwise<S>::logical_not(Tensor<S> x) {
  map(std::span<S>(x.data), [](S v) { return fn::one<S>() - v; });
  return x;
}

template <class S>
Expected<Tensor<S>> Elementwise<S>::logical(Logic op, const Tensor<S>& a, const Tensor<S>& b) {
  if (op == Logic::kAnd) return broadcast(a, b, "and", [](S x, S y) { return x * y; });
  return broadcast(a, b, "or", [](S x, S y) { return x + y - x * y; });
}

template struct Elementwise<float>;
template struct Elementwise<double>;
template struct Elementwise<Mod>;

}  // namespace tso::ref
