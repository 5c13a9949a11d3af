// Normalizations and reductions: batchnorm, layernorm, softmax, reduce_mean,
// reduce_sum, reduce_max, reduce_l2, cumsum.
// On Mod they keep their exact structure (means use the modular inverse of
// the count) and use the sqrt and exp surrogates of scalar.h, so a graph that
// spells layernorm out with reduce_mean, sub, pow, sqrt and div fingerprints
// the same as the fused operator.
#include <algorithm>
#include <cmath>

#include "runtime/common/top_k.h"
#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

// y = (x - mean) * scale / sqrt(var + epsilon) + bias, per channel (axis 1).
template <class S>
Expected<Tensor<S>> Norm<S>::batchnorm(Args<S> in, const Attrs& attrs) {
  const Tensor<S>& x = *in[0];
  if (x.shape.rank() < 2)
    return shape_error("batchnorm", "input " + shape_text(x.shape) + " has no channel axis");
  const int64_t c = x.shape[1];
  for (int i = 1; i < 5; ++i)
    if (in[i]->numel() != c)
      return shape_error("batchnorm", "parameter " + std::to_string(i) + " has shape " +
                                          shape_text(in[i]->shape) + ", expected [" +
                                          std::to_string(c) + "]");
  const S eps = fn::constant<S>(attrs.f(AttrKey::epsilon));
  const std::vector<S>&scale = in[1]->data, &bias = in[2]->data, &mean = in[3]->data,
                 &var = in[4]->data;
  const int64_t inner = c == 0 ? 0 : x.numel() / x.shape[0] / c;
  Tensor<S> y(x.shape);
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const S k = scale[ch] * fn::reciprocal(fn::sqrt(var[ch] + eps));
      const S* px = x.data.data() + (b * c + ch) * inner;
      S* py = y.data.data() + (b * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) py[i] = (px[i] - mean[ch]) * k + bias[ch];
    }
  return y;
}

// Normalizes over dimensions [axis, rank), then scale and bias broadcast
// against the input (ONNX LayerNormalization).
template <class S>
Expected<Tensor<S>> Norm<S>::layernorm(Args<S> in, const Attrs& attrs) {
  const Tensor<S>& x = *in[0];
  int64_t axis = attrs.i(AttrKey::axis);
  if (!normalize_axis(&axis, x.shape.rank())) return shape_error("layernorm", "axis out of range");
  int64_t n = 1;
  for (int i = static_cast<int>(axis); i < x.shape.rank(); ++i) n *= x.shape[i];
  const S eps = fn::constant<S>(attrs.f(AttrKey::epsilon));
  const S count = fn::constant<S>(double(n));
  Tensor<S> norm(x.shape);
  for (int64_t row = 0; n > 0 && row < x.numel() / n; ++row) {
    const S* px = x.data.data() + row * n;
    S* py = norm.data.data() + row * n;
    S sum = fn::zero<S>();
    for (int64_t i = 0; i < n; ++i) sum += px[i];
    const S mean = fn::div(sum, count);
    S sq = fn::zero<S>();
    for (int64_t i = 0; i < n; ++i) sq += (px[i] - mean) * (px[i] - mean);
    const S r = fn::reciprocal(fn::sqrt(fn::div(sq, count) + eps));
    for (int64_t i = 0; i < n; ++i) py[i] = (px[i] - mean) * r;
  }
  Expected<Tensor<S>> scaled = Elementwise<S>::binary(Bin::kMul, norm, *in[1]);
  if (!scaled) return scaled.error();
  Expected<Tensor<S>> y = Elementwise<S>::binary(Bin::kAdd, *scaled, *in[2]);
  if (!y) return y.error();
  if (!(y->shape == x.shape))
    return shape_error("layernorm", "scale " + shape_text(in[1]->shape) + " or bias " +
                                        shape_text(in[2]->shape) + " widens the input " +
                                        shape_text(x.shape));
  return y;
}

namespace {

// A tensor of x's shape whose rows along `axis` (each n elements `inner`
// apart) `row(px, py, n, inner)` computes from x's.
template <class S, class Row>
Expected<Tensor<S>> map_rows(const char* op, const Tensor<S>& x, int64_t axis, Row row) {
  if (!normalize_axis(&axis, x.shape.rank())) return shape_error(op, "axis out of range");
  const int64_t n = x.shape[axis], inner = strides_of(x.shape)[axis];
  const int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  Tensor<S> y(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j)
      row(x.data.data() + o * n * inner + j, y.data.data() + o * n * inner + j, n, inner);
  return y;
}

}  // namespace

// exp(x) / sum(exp(x)) along one axis. Float and double subtract the maximum
// first (same function, no overflow); Mod must not, because the exp surrogate
// is not a homomorphism: exp_s(x - m) != exp_s(x) / exp_s(m).
template <class S>
Expected<Tensor<S>> Norm<S>::softmax(const Tensor<S>& x, const Attrs& attrs) {
  return map_rows("softmax", x, attrs.i(AttrKey::axis),
                  [](const S* px, S* py, int64_t n, int64_t inner) {
                    S shift = fn::zero<S>();
                    if constexpr (fn::Real<S>) {
                      shift = px[0];
                      for (int64_t i = 1; i < n; ++i) shift = std::max(shift, px[i * inner]);
                    }
                    S sum = fn::zero<S>();
                    for (int64_t i = 0; i < n; ++i)
                      sum += py[i * inner] = fn::exp(px[i * inner] - shift);
                    const S r = fn::reciprocal(sum);
                    for (int64_t i = 0; i < n; ++i) py[i * inner] *= r;
                  });
}

// (x - max) - log(sum(exp(x - max))) along one axis: (x - max) first, exact
// where x is near max, as ONNX's reference computes it (x + log-sum rounded
// at x's scale loses 1e-4 at 1e4).
template <class S>
Expected<Tensor<S>> Norm<S>::log_softmax(const Tensor<S>& x, const Attrs& attrs) {
  if constexpr (fn::Real<S>) {
    return map_rows("log_softmax", x, attrs.i(AttrKey::axis),
                    [](const S* px, S* py, int64_t n, int64_t inner) {
                      S top = px[0];
                      for (int64_t i = 1; i < n; ++i) top = std::max(top, px[i * inner]);
                      S sum = 0;
                      for (int64_t i = 0; i < n; ++i) sum += std::exp(px[i * inner] - top);
                      const S log_sum = std::log(sum);
                      for (int64_t i = 0; i < n; ++i)
                        py[i * inner] = (px[i * inner] - top) - log_sum;
                    });
  } else {
    return shape_error("log_softmax", "has no Mod image (the generator does not enumerate it)");
  }
}

template <class S>
Expected<Tensor<S>> Norm<S>::reduce(Op op, const Tensor<S>& x, const Attrs& attrs) {
  const std::string name(op_name(op));
  const int r = x.shape.rank();
  std::vector<bool> reduced(r, attrs.ints(AttrKey::axes).empty());
  for (int64_t ax : attrs.ints(AttrKey::axes)) {
    if (!normalize_axis(&ax, r)) return shape_error(name, "axis out of range");
    reduced[ax] = true;
  }
  Shape kept, out;
  for (int i = 0; i < r; ++i) {
    kept.push_back(reduced[i] ? 1 : x.shape[i]);
    if (!reduced[i] || attrs.i(AttrKey::keepdims)) out.push_back(kept[i]);
  }
  Tensor<S> y(out);
  if (op == Op::ReduceMax && y.numel() > 0 && x.numel() == 0)
    return shape_error(name, "the maximum of no elements");
  // Fold each input element into its output slot through strides that are 0
  // along the reduced dimensions.
  std::vector<int64_t> st = broadcast_strides(kept, x.shape), idx(r, 0);
  std::vector<bool> seen(op == Op::ReduceMax ? y.numel() : 0);
  for (int64_t e = 0, o = 0; e < x.numel(); ++e) {
    const S v = x.data[e];
    if (op == Op::ReduceL2) {
      y.data[o] += v * v;
    } else if (op != Op::ReduceMax) {
      y.data[o] += v;
    } else if (!seen[o] || fn::less(y.data[o], v)) {
      y.data[o] = v;
      seen[o] = true;
    }
    for (int d = r - 1; d >= 0; --d) {
      o += st[d];
      if (++idx[d] < x.shape[d]) break;
      o -= st[d] * x.shape[d];
      idx[d] = 0;
    }
  }
  if (op == Op::ReduceMean) {
    const S count = fn::constant<S>(double(y.numel() == 0 ? 0 : x.numel() / y.numel()));
    for (S& v : y.data) v = fn::div(v, count);
  } else if (op == Op::ReduceL2) {
    for (S& v : y.data) v = fn::sqrt(v);
  }
  return y;
}

// Walks each line along the axis: outer lines of `extent` elements `inner`
// apart, summing in the direction `reverse` asks, storing before adding when
// exclusive.
template <class S>
Expected<Tensor<S>> Norm<S>::cumsum(const Tensor<S>& x, const Attrs& attrs) {
  int64_t axis = attrs.i(AttrKey::axis);
  if (!normalize_axis(&axis, x.shape.rank())) return shape_error("cumsum", "axis out of range");
  const bool exclusive = attrs.i(AttrKey::exclusive) != 0, reverse = attrs.i(AttrKey::reverse) != 0;
  const int64_t extent = x.shape[axis];
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < x.shape.rank(); ++d) inner *= x.shape[d];
  const int64_t outer = extent * inner == 0 ? 0 : x.numel() / (extent * inner);
  Tensor<S> y(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      S sum = fn::zero<S>();
      for (int64_t k = 0; k < extent; ++k) {
        const int64_t at = o * extent * inner + (reverse ? extent - 1 - k : k) * inner + i;
        if (exclusive) y.data[at] = sum;
        sum = sum + x.data[at];
        if (!exclusive) y.data[at] = sum;
      }
    }
  return y;
}

template <class S>
Expected<Tensor<S>> Norm<S>::arg_max(const Tensor<S>& x, const Attrs& attrs) {
  if constexpr (!fn::Real<S>) {
    return shape_error("arg_max", "has no Mod image (Mod values have no order; the generator "
                                  "does not enumerate arg_max)");
  } else {
    int64_t axis = attrs.i(AttrKey::axis);
    if (!normalize_axis(&axis, x.shape.rank())) return shape_error("arg_max", "axis out of range");
    const int64_t extent = x.shape[axis];
    if (extent == 0) return shape_error("arg_max", "no element to pick along the axis");
    const bool last = attrs.i(AttrKey::select_last_index) != 0;
    Shape out;
    int64_t inner = 1;
    for (int d = 0; d < x.shape.rank(); ++d) {
      if (d != axis || attrs.i(AttrKey::keepdims)) out.push_back(d == axis ? 1 : x.shape[d]);
      if (d > axis) inner *= x.shape[d];
    }
    Tensor<S> y(out);
    const int64_t outer = x.numel() / (extent * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const S* line = x.data.data() + o * extent * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < extent; ++k) {
          const S v = line[k * inner], b = line[best * inner];
          const bool ahead = std::isnan(b) ? last && std::isnan(v)
                                           : std::isnan(v) || v > b || (last && v == b);
          if (ahead) best = k;
        }
        y.data[o * inner + i] = static_cast<S>(best);
      }
    return y;
  }
}

template <class S>
Expected<std::vector<Tensor<S>>> Norm<S>::top_k(const Tensor<S>& x, const Attrs& attrs) {
  if constexpr (!fn::Real<S>) {
    return shape_error("top_k", "has no Mod image (Mod values have no order; the generator "
                                "does not enumerate top_k)");
  } else {
    int64_t axis = attrs.i(AttrKey::axis);
    if (!normalize_axis(&axis, x.shape.rank())) return shape_error("top_k", "axis out of range");
    const int64_t n = x.shape[axis], k = attrs.i(AttrKey::k);
    if (k < 1 || k > n) return shape_error("top_k", "k out of range");
    const int64_t inner = strides_of(x.shape)[axis], outer = x.numel() / (n * inner);
    Shape out = x.shape;
    out[static_cast<int>(axis)] = k;
    Tensor<S> values(out), indices(out);
    std::vector<int64_t> order;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const S* line = x.data.data() + o * n * inner + j;
        rt::top_k_order(line, n, inner, k, attrs.i(AttrKey::largest) != 0, &order);
        for (int64_t r = 0; r < k; ++r) {
          const int64_t at = (o * k + r) * inner + j;
          values.data[at] = line[order[r] * inner];
          indices.data[at] = static_cast<S>(order[r]);
        }
      }
    return std::vector<Tensor<S>>{std::move(values), std::move(indices)};
  }
}

template struct Norm<float>;
template struct Norm<double>;
template struct Norm<Mod>;

}  // namespace tso::ref
