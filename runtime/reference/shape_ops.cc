// Data movement: constants, concat, split, transpose, reshape and its kin,
// slice, pad, enlarge and update_slice, whose copies all go through one
// strided-copy loop, so each operator only says which strides and offsets it
// reads and writes (expand too); gather, which copies whole rows picked by its
// indices; and cast, the conversion between element types.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

namespace {

// For every index i of `extent` (row-major order):
//   dst[dst_base + sum_d i_d * dst_st[d]] = src[src_base + sum_d i_d * src_st[d]].
template <class S>
void strided_copy(std::span<const int64_t> extent, const S* src, int64_t src_base,
                  std::span<const int64_t> src_st, S* dst, int64_t dst_base,
                  std::span<const int64_t> dst_st) {
  const int r = static_cast<int>(extent.size());
  int64_t total = 1;
  for (int64_t e : extent) total *= e;
  if (total == 0) return;
  if (r == 0) {
    dst[dst_base] = src[src_base];
    return;
  }
  const int64_t inner = extent[r - 1], si = src_st[r - 1], di = dst_st[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t s = src_base, d = dst_base;
  for (int64_t o = 0; o < total / inner; ++o) {
    for (int64_t j = 0; j < inner; ++j) dst[d + j * di] = src[s + j * si];
    for (int k = r - 2; k >= 0; --k) {
      s += src_st[k];
      d += dst_st[k];
      if (++idx[k] < extent[k]) break;
      s -= src_st[k] * extent[k];
      d -= dst_st[k] * extent[k];
      idx[k] = 0;
    }
  }
}

template <class S>
void copy_into(const Tensor<S>& x, Tensor<S>* y, int64_t dst_base) {
  std::vector<int64_t> xs = strides_of(x.shape), ys = strides_of(y->shape);
  strided_copy<S>(x.shape.dims(), x.data.data(), 0, xs, y->data.data(), dst_base, ys);
}

Expected<std::vector<int64_t>> axes_or_all(std::string_view op, const std::vector<int64_t>& axes,
                                           int rank) {
  std::vector<int64_t> out = axes;
  if (out.empty())
    for (int i = 0; i < rank; ++i) out.push_back(i);
  for (int64_t& a : out)
    if (!normalize_axis(&a, rank)) return shape_error(op, "axis out of range for rank " + std::to_string(rank));
  return out;
}

}  // namespace

template <class S>
Expected<Tensor<S>> ShapeOps<S>::constant(Op op, const Attrs& a) {
  Shape s(std::span<const int64_t>(a.ints(AttrKey::shape)));
  Tensor<S> y(s);
  const S one = fn::one<S>();
  if (op == Op::ConstOnes || op == Op::ConstPool) {
    std::fill(y.data.begin(), y.data.end(), one);
    if (op == Op::ConstPool && (s.rank() != 4 || s[1] != 1))
      return shape_error("const_pool", "shape " + shape_text(s) + " is not [c,1,kh,kw]");
  } else if (op == Op::ConstEye) {
    if (s.rank() != 2 || s[0] != s[1])
      return shape_error("const_eye", "shape " + shape_text(s) + " is not [n,n]");
    for (int64_t i = 0; i < s[0]; ++i) y.data[i * s[1] + i] = one;
  } else {
    if (s.rank() != 4 || s[0] != s[1] || s[2] % 2 == 0 || s[3] % 2 == 0)
      return shape_error("const_eye_conv", "shape " + shape_text(s) + " is not [c,c,kh,kw] with odd kh, kw");
    for (int64_t i = 0; i < s[0]; ++i)
      y.data[((i * s[1] + i) * s[2] + s[2] / 2) * s[3] + s[3] / 2] = one;
  }
  return y;
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::concat(Args<S> in, const Attrs& a) {
  const Shape& first = in[0]->shape;
  int64_t axis = a.i(AttrKey::axis);
  if (!normalize_axis(&axis, first.rank())) return shape_error("concat", "axis out of range");
  Shape out = first;
  out[axis] = 0;
  for (const Tensor<S>* t : in) {
    Shape probe = t->shape;
    if (probe.rank() == first.rank()) probe[axis] = first[axis];
    if (!(probe == first))
      return shape_error("concat", "shapes " + shape_text(first) + " and " + shape_text(t->shape) +
                                       " differ off axis " + std::to_string(axis));
    out[axis] += t->shape[axis];
  }
  Tensor<S> y(out);
  const int64_t step = strides_of(out)[axis];
  int64_t at = 0;
  for (const Tensor<S>* t : in) {
    copy_into(*t, &y, at * step);
    at += t->shape[axis];
  }
  return y;
}

template <class S>
Expected<std::vector<Tensor<S>>> ShapeOps<S>::split(const Tensor<S>& x, const Attrs& a) {
  int64_t axis = a.i(AttrKey::axis);
  if (!normalize_axis(&axis, x.shape.rank())) return shape_error("split", "axis out of range");
  const std::vector<int64_t>& sizes = a.ints(AttrKey::sizes);
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != x.shape[axis] ||
      std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; }))
    return shape_error("split", "sizes do not add up to " + std::to_string(x.shape[axis]) +
                                    " for input " + shape_text(x.shape));
  std::vector<int64_t> xs = strides_of(x.shape);
  std::vector<Tensor<S>> outs;
  int64_t at = 0;
  for (int64_t size : sizes) {
    Shape s = x.shape;
    s[axis] = size;
    Tensor<S> y(s);
    strided_copy<S>(s.dims(), x.data.data(), at * xs[axis], xs, y.data.data(), 0, strides_of(s));
    outs.push_back(std::move(y));
    at += size;
  }
  return outs;
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::transpose(const Tensor<S>& x, const Attrs& a) {
  const int r = x.shape.rank();
  std::vector<int64_t> perm = a.ints(AttrKey::perm);
  if (perm.empty())  // ONNX default: reverse the dimensions
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < static_cast<int>(sorted.size()); ++i)
    if (sorted[i] != i || static_cast<int>(sorted.size()) != r)
      return shape_error("transpose", "perm is not a permutation of the " + std::to_string(r) +
                                          " dimensions of " + shape_text(x.shape));
  std::vector<int64_t> xs = strides_of(x.shape), src(r);
  Shape out;
  for (int i = 0; i < r; ++i) {
    out.push_back(x.shape[perm[i]]);
    src[i] = xs[perm[i]];
  }
  Tensor<S> y(out);
  strided_copy<S>(out.dims(), x.data.data(), 0, src, y.data.data(), 0, strides_of(out));
  return y;
}

// reshape's target may hold 0 (copy the input's dimension) and one -1 (the
// dimension that makes the element counts agree), as in ONNX.
template <class S>
Expected<Tensor<S>> ShapeOps<S>::reshape(const Tensor<S>& x, const Attrs& a) {
  const std::vector<int64_t>& target = a.ints(AttrKey::shape);
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < static_cast<int>(target.size()); ++i) {
    int64_t d = target[i];
    if (d == 0 && i < x.shape.rank()) d = x.shape[i];
    if (d == -1) {
      if (infer >= 0) return shape_error("reshape", "more than one -1 in the target shape");
      infer = i;
      d = 1;
    } else if (d < 0) {
      return shape_error("reshape", "negative dimension in the target shape");
    }
    known *= d;
    out.push_back(d);
  }
  if (infer >= 0 && known != 0 && x.numel() % known == 0) out[infer] = x.numel() / known;
  if (out.numel() != x.numel())
    return shape_error("reshape", "cannot reshape " + shape_text(x.shape) + " to " +
                                      shape_text(out));
  return Tensor<S>(out, x.data);
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::flatten(const Tensor<S>& x, const Attrs& a) {
  int64_t axis = a.i(AttrKey::axis);
  if (axis < 0) axis += x.shape.rank();
  if (axis < 0 || axis > x.shape.rank()) return shape_error("flatten", "axis out of range");
  int64_t lead = 1;
  for (int i = 0; i < axis; ++i) lead *= x.shape[i];
  return Tensor<S>(Shape{lead, lead == 0 ? 0 : x.numel() / lead}, x.data);
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::squeeze(const Tensor<S>& x, const Attrs& a) {
  std::vector<int64_t> axes = a.ints(AttrKey::axes);
  for (int64_t& ax : axes)
    if (!normalize_axis(&ax, x.shape.rank())) return shape_error("squeeze", "axis out of range");
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    bool listed = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (listed && x.shape[i] != 1)
      return shape_error("squeeze", "dimension " + std::to_string(i) + " of " +
                                        shape_text(x.shape) + " is not 1");
    if (axes.empty() ? x.shape[i] != 1 : !listed) out.push_back(x.shape[i]);
  }
  return Tensor<S>(out, x.data);
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::unsqueeze(const Tensor<S>& x, const Attrs& a) {
  const int rank = x.shape.rank() + static_cast<int>(a.ints(AttrKey::axes).size());
  if (rank > Shape::kMaxRank) return shape_error("unsqueeze", "result rank exceeds the maximum");
  std::vector<int64_t> axes = a.ints(AttrKey::axes);
  for (int64_t& ax : axes)
    if (!normalize_axis(&ax, rank)) return shape_error("unsqueeze", "axis out of range");
  Shape out;
  for (int i = 0, next = 0; i < rank; ++i)
    out.push_back(std::find(axes.begin(), axes.end(), i) != axes.end() ? 1 : x.shape[next++]);
  if (out.numel() != x.numel()) return shape_error("unsqueeze", "repeated axis");
  return Tensor<S>(out, x.data);
}

// ONNX Slice: negative starts and ends count from the end, bounds clamp, and
// a negative step walks backwards.
template <class S>
Expected<Tensor<S>> ShapeOps<S>::slice(const Tensor<S>& x, const Attrs& a) {
  const std::vector<int64_t>& starts = a.ints(AttrKey::starts);
  const std::vector<int64_t>& ends = a.ints(AttrKey::ends);
  const std::vector<int64_t>& steps = a.ints(AttrKey::steps);
  Expected<std::vector<int64_t>> axes =
      axes_or_all("slice", a.ints(AttrKey::axes), x.shape.rank());
  if (!axes) return axes.error();
  if (a.ints(AttrKey::axes).empty()) axes->resize(std::min(axes->size(), starts.size()));
  if (starts.size() != axes->size() || ends.size() != axes->size() ||
      (!steps.empty() && steps.size() != axes->size()))
    return shape_error("slice", "starts, ends, axes and steps differ in length");
  std::vector<int64_t> xs = strides_of(x.shape), src = xs;
  Shape out = x.shape;
  int64_t base = 0;
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t ax = (*axes)[i], dim = x.shape[ax], step = steps.empty() ? 1 : steps[i];
    if (step == 0) return shape_error("slice", "step 0");
    if (dim == 0) {
      out[ax] = 0;
      continue;
    }
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    e = step > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    int64_t n = step > 0 ? (e - s + step - 1) / step : (s - e - step - 1) / -step;
    out[ax] = std::max<int64_t>(n, 0);
    base += s * xs[ax];
    src[ax] = step * xs[ax];
  }
  Tensor<S> y(out);
  strided_copy<S>(out.dims(), x.data.data(), base, src, y.data.data(), 0, strides_of(out));
  return y;
}

// pads = [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}] (ONNX order);
// negative amounts crop.
template <class S>
Expected<Tensor<S>> ShapeOps<S>::pad(const Tensor<S>& x, const Attrs& a) {
  const std::vector<int64_t>& pads = a.ints(AttrKey::pads);
  const int r = x.shape.rank();
  if (static_cast<int>(pads.size()) != 2 * r)
    return shape_error("pad", "pads needs " + std::to_string(2 * r) + " values");
  Shape out;
  for (int i = 0; i < r; ++i) {
    int64_t d = x.shape[i] + pads[i] + pads[i + r];
    if (d < 0) return shape_error("pad", "cropping more than " + shape_text(x.shape) + " holds");
    out.push_back(d);
  }
  Tensor<S> y(out);
  std::fill(y.data.begin(), y.data.end(), fn::constant<S>(a.f(AttrKey::value)));
  std::vector<int64_t> xs = strides_of(x.shape), ys = strides_of(out), extent(r);
  int64_t src = 0, dst = 0;
  for (int i = 0; i < r; ++i) {
    int64_t lo = std::max<int64_t>(0, -pads[i]);  // first input index kept
    extent[i] = std::max<int64_t>(0, std::min(x.shape[i], out[i] - pads[i]) - lo);
    src += lo * xs[i];
    dst += (lo + pads[i]) * ys[i];
  }
  strided_copy<S>(extent, x.data.data(), src, xs, y.data.data(), dst, ys);
  return y;
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::enlarge(const Tensor<S>& w, const Attrs& a) {
  const std::vector<int64_t>& k = a.ints(AttrKey::kernel);
  if (w.shape.rank() != 4 || k.size() != 2 || k[0] < w.shape[2] || k[1] < w.shape[3] ||
      (k[0] - w.shape[2]) % 2 != 0 || (k[1] - w.shape[3]) % 2 != 0)
    return shape_error("enlarge", "cannot enlarge kernel " + shape_text(w.shape) +
                                      " symmetrically to " + std::to_string(k.size() == 2 ? k[0] : 0) +
                                      "x" + std::to_string(k.size() == 2 ? k[1] : 0));
  Tensor<S> y(Shape{w.shape[0], w.shape[1], k[0], k[1]});
  std::vector<int64_t> ys = strides_of(y.shape);
  copy_into(w, &y, (k[0] - w.shape[2]) / 2 * ys[2] + (k[1] - w.shape[3]) / 2 * ys[3]);
  return y;
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::update_slice(const Tensor<S>& base, const Tensor<S>& patch,
                                              const Attrs& a) {
  const std::vector<int64_t>& starts = a.ints(AttrKey::starts);
  const int r = base.shape.rank();
  bool fits = patch.shape.rank() == r && static_cast<int>(starts.size()) == r;
  for (int i = 0; fits && i < r; ++i)
    fits = starts[i] >= 0 && patch.shape[i] <= base.shape[i] - starts[i];
  if (!fits)
    return shape_error("update_slice", "patch " + shape_text(patch.shape) +
                                           " does not fit in base " + shape_text(base.shape) +
                                           " at the given starts");
  Tensor<S> y = base;
  std::vector<int64_t> ys = strides_of(y.shape);
  int64_t at = 0;
  for (int i = 0; i < r; ++i) at += starts[i] * ys[i];
  copy_into(patch, &y, at);
  return y;
}

namespace {

// The integer an index element stands for: float and double hold it by value
// (an integral value in int64's range, else nullopt), Mod as its signed
// representative.
template <class S>
std::optional<int64_t> index_value(S v) {
  if constexpr (fn::Real<S>) {
    if (!(v == std::trunc(v)) || !(std::fabs(v) < 0x1p63)) return std::nullopt;
    return static_cast<int64_t>(v);
  } else {
    return v.to_signed();
  }
}

template <class S>
std::string index_text(S v) {
  if constexpr (fn::Real<S>) {
    std::optional<int64_t> k = index_value(v);
    return k ? std::to_string(*k) : std::to_string(v);
  } else {
    return std::to_string(v.to_signed());
  }
}

}  // namespace

// data viewed as [outer, extent, inner] and the result as [outer, n, inner]:
// row j of each outer block is data's row indices[j].
template <class S>
Expected<Tensor<S>> ShapeOps<S>::gather(const Tensor<S>& x, const Tensor<S>& indices,
                                        const Attrs& a) {
  int64_t axis = a.i(AttrKey::axis);
  const int r = x.shape.rank();
  if (r == 0 || !normalize_axis(&axis, r))
    return shape_error("gather", "axis " + std::to_string(a.i(AttrKey::axis)) +
                                     " is out of range for " + shape_text(x.shape));
  const int64_t extent = x.shape[static_cast<int>(axis)], n = indices.numel();
  std::vector<int64_t> rows(n);
  for (int64_t j = 0; j < n; ++j) {
    std::optional<int64_t> k = index_value(indices.data[j]);
    if (k && *k < 0) *k += extent;
    if (!k || *k < 0 || *k >= extent)
      return shape_error("gather", "index " + index_text(indices.data[j]) + " at position " +
                                       std::to_string(j) + " is out of range for axis " +
                                       std::to_string(axis) + " of " + shape_text(x.shape));
    rows[j] = *k;
  }
  Shape out;
  for (int i = 0; i < axis; ++i) out.push_back(x.shape[i]);
  for (int64_t d : indices.shape) out.push_back(d);
  for (int i = static_cast<int>(axis) + 1; i < r; ++i) out.push_back(x.shape[i]);
  Tensor<S> y(out);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape[i];
  for (int i = static_cast<int>(axis) + 1; i < r; ++i) inner *= x.shape[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::copy_n(x.data.begin() + (o * extent + rows[j]) * inner, inner,
                  y.data.begin() + (o * n + j) * inner);
  return y;
}

// An odometer over the indices: the element at the same coordinates of x,
// but for `axis`, where the index says.
template <class S>
Expected<Tensor<S>> ShapeOps<S>::gather_elements(const Tensor<S>& x, const Tensor<S>& indices,
                                                 const Attrs& a) {
  int64_t axis = a.i(AttrKey::axis);
  const int r = x.shape.rank();
  if (r == 0 || indices.shape.rank() != r || !normalize_axis(&axis, r))
    return shape_error("gather_elements", "indices " + shape_text(indices.shape) +
                                              " do not index " + shape_text(x.shape) +
                                              " along axis " + std::to_string(a.i(AttrKey::axis)));
  const int64_t extent = x.shape[static_cast<int>(axis)];
  const std::vector<int64_t> xs = strides_of(x.shape);
  std::vector<int64_t> idx(r, 0);
  Tensor<S> y(indices.shape);
  for (int64_t j = 0; j < indices.numel(); ++j) {
    std::optional<int64_t> k = index_value(indices.data[j]);
    if (k && *k < 0) *k += extent;
    if (!k || *k < 0 || *k >= extent)
      return shape_error("gather_elements", "index " + index_text(indices.data[j]) +
                                                " at position " + std::to_string(j) +
                                                " is out of range for axis " +
                                                std::to_string(axis) + " of " +
                                                shape_text(x.shape));
    int64_t at = 0;
    for (int d = 0; d < r; ++d) at += (d == axis ? *k : idx[d]) * xs[d];
    y.data[j] = x.data[at];
    for (int d = r - 1; d >= 0 && ++idx[d] == indices.shape[d]; --d) idx[d] = 0;
  }
  return y;
}

template <class S>
Expected<Tensor<S>> ShapeOps<S>::expand(const Tensor<S>& x, const Attrs& a) {
  const Shape target(std::span<const int64_t>(a.ints(AttrKey::shape)));
  Expected<Shape> out = broadcast_shapes(x.shape, target, "expand");
  if (!out) return out.error();
  Tensor<S> y(*out);
  const std::vector<int64_t> src = broadcast_strides(x.shape, *out), dst = strides_of(*out);
  strided_copy<S>(out->dims(), x.data.data(), 0, src, y.data.data(), 0, dst);
  return y;
}

// Values are held by value in every scalar type, so only integer and bool
// targets change them (floats to f16 keep full precision, as every f16
// tensor does here). Eight-bit targets wrap modulo 256 after truncation, as
// the CPU runtime's conversion does.
template <class S>
Tensor<S> ShapeOps<S>::cast(Tensor<S> x, DType to) {
  const bool integer = to == DType::kI64 || to == DType::kI32;
  const bool byte = to == DType::kU8 || to == DType::kI8;
  const S zero = fn::zero<S>(), one = fn::one<S>();
  for (S& v : x.data) {
    if (to == DType::kBool) v = v == zero ? zero : one;
    if constexpr (fn::Real<S>) {
      if (integer) v = std::trunc(v);
      if (byte) {
        const auto w = static_cast<uint8_t>(static_cast<int64_t>(v));
        v = static_cast<S>(to == DType::kU8 ? int{w} : int{static_cast<int8_t>(w)});
      }
    }
  }
  return x;
}

template struct ShapeOps<float>;
template struct ShapeOps<double>;
template struct ShapeOps<Mod>;

}  // namespace tso::ref
