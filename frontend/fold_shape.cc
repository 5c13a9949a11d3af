// Folding of data-movement and shape-query ONNX operators: Shape, Size,
// Gather, GatherElements, ConstantOfShape, Unsqueeze, Squeeze, Concat,
// Expand, Tile, Slice, ScatterND, Range, Reshape, Flatten, Transpose.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>

#include "frontend/fold_ops.h"
#include "frontend/host_tensor_util.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

// A tensor of `shape` whose element j is x's element map[j].
HostTensor remap(const HostTensor& x, const Shape& shape, const std::vector<int64_t>& map) {
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  for (size_t j = 0; j < map.size(); ++j) {
    if (x.is_float()) out.f[j] = x.f[map[j]];
    else out.i[j] = x.i[map[j]];
  }
  return out;
}

std::vector<HostTensor> one(HostTensor t) { return {std::move(t)}; }

bool normalize(int64_t* axis, int64_t rank) {
  if (*axis < -rank || *axis >= rank) return false;
  if (*axis < 0) *axis += rank;
  return true;
}

Error bad_axis(int64_t axis, const Shape& s) {
  return Error{"axis " + std::to_string(axis) + " is out of range for shape " + to_string(s)};
}

// Axes from the attribute (older opsets) or from input 1.
Expected<std::vector<int64_t>> axes_of(const onnx::NodeProto& n, FoldInputs in) {
  if (in.size() > 1 && in[1]) return host_to_ints(*in[1]);
  if (auto a = attr_ints(n, "axes")) return *a;
  return std::vector<int64_t>{};
}

FoldResult fold_shape_of(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  const int64_t rank = (*x)->shape.rank();
  int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims((*x)->shape.begin() + start, (*x)->shape.begin() + end);
  return one(host_ints(dims));
}

FoldResult fold_size(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  HostTensor out = host_ints({(*x)->numel()});
  out.shape = Shape{};
  return one(std::move(out));
}

FoldResult fold_gather(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), idx = need_input(in, 1);
  if (!x) return x.error();
  if (!idx) return idx.error();
  const Shape& xs = (*x)->shape;
  int64_t axis = attr_int(n, "axis", 0);
  if (!normalize(&axis, xs.rank())) return bad_axis(axis, xs);
  std::vector<int64_t> out_dims(xs.begin(), xs.begin() + axis);
  for (int64_t d : (*idx)->shape) out_dims.push_back(d);
  out_dims.insert(out_dims.end(), xs.begin() + axis + 1, xs.end());
  Expected<Shape> out = shape_from_values(out_dims);
  if (!out) return out.error();
  if (too_large(*out, limit)) return Declined();
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= xs[k];
  for (int k = axis + 1; k < xs.rank(); ++k) inner *= xs[k];
  const int64_t extent = xs[axis], count = (*idx)->numel();
  std::vector<int64_t> map;
  map.reserve(out->numel());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < count; ++c) {
      int64_t i = (*idx)->get_i(c);
      if (i < -extent || i >= extent)
        return Error{"index " + std::to_string(i) + " is out of range for extent " +
                     std::to_string(extent)};
      if (i < 0) i += extent;
      for (int64_t r = 0; r < inner; ++r) map.push_back((o * extent + i) * inner + r);
    }
  return one(remap(**x, *out, map));
}

FoldResult fold_gather_elements(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), idx = need_input(in, 1);
  if (!x) return x.error();
  if (!idx) return idx.error();
  const Shape &xs = (*x)->shape, &is = (*idx)->shape;
  int64_t axis = attr_int(n, "axis", 0);
  if (!normalize(&axis, xs.rank())) return bad_axis(axis, xs);
  if (is.rank() != xs.rank()) return Error{"indices and data differ in rank"};
  std::vector<int64_t> xst = strides_of(xs), ist = strides_of(is);
  std::vector<int64_t> map(is.numel());
  for (int64_t j = 0; j < is.numel(); ++j) {
    int64_t pos = 0;
    for (int d = 0; d < is.rank(); ++d) {
      int64_t c = j / ist[d] % is[d];
      if (d == axis) {
        c = (*idx)->get_i(j);
        if (c < -xs[d] || c >= xs[d]) return Error{"index " + std::to_string(c) + " out of range"};
        if (c < 0) c += xs[d];
      } else if (c >= xs[d]) {
        return Error{"indices shape " + to_string(is) + " exceeds data " + to_string(xs)};
      }
      pos += c * xst[d];
    }
    map[j] = pos;
  }
  return one(remap(**x, is, map));
}

FoldResult fold_constant_of_shape(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> s = need_input(in, 0);
  if (!s) return s.error();
  Expected<Shape> shape = shape_from_values(host_to_ints(**s));
  if (!shape) return shape.error();
  if (too_large(*shape, limit)) return Declined();
  HostTensor value = HostTensor::zeros(DType::kF32, Shape{});
  if (const auto* a = find_attr(n, "value")) {
    Expected<LoadedTensor> t = load_tensor(a->t(), "");
    if (!t) return Error{"value " + t.error().message};
    if (!t->data || t->type.shape.numel() != 1) return Error{"value is not a single element"};
    value = host_from_weight(*t->data);
  }
  HostTensor out = HostTensor::zeros(value.dtype, *shape);
  for (int64_t k = 0; k < out.numel(); ++k) copy_element(value, 0, &out, k);
  return one(std::move(out));
}

FoldResult fold_unsqueeze(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  Expected<std::vector<int64_t>> axes = axes_of(n, in);
  if (!axes) return axes.error();
  const int64_t rank = (*x)->shape.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(std::max<int64_t>(rank, 0), false);
  for (int64_t a : *axes) {
    if (!normalize(&a, rank) || inserted[a]) return bad_axis(a, (*x)->shape);
    inserted[a] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t k = 0, next = 0; k < rank; ++k)
    dims.push_back(inserted[k] ? 1 : (*x)->shape[next++]);
  Expected<Shape> s = shape_from_values(dims);
  if (!s) return s.error();
  HostTensor out = **x;
  out.shape = *s;
  return one(std::move(out));
}

FoldResult fold_squeeze(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  Expected<std::vector<int64_t>> axes = axes_of(n, in);
  if (!axes) return axes.error();
  const Shape& xs = (*x)->shape;
  std::vector<bool> drop(xs.rank(), axes->empty());
  if (axes->empty())
    for (int k = 0; k < xs.rank(); ++k) drop[k] = xs[k] == 1;
  for (int64_t a : *axes) {
    if (!normalize(&a, xs.rank())) return bad_axis(a, xs);
    if (xs[a] != 1) return Error{"cannot squeeze axis " + std::to_string(a) + " of " + to_string(xs)};
    drop[a] = true;
  }
  Shape s;
  for (int k = 0; k < xs.rank(); ++k)
    if (!drop[k]) s.push_back(xs[k]);
  HostTensor out = **x;
  out.shape = s;
  return one(std::move(out));
}

FoldResult fold_concat(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  if (in.empty()) return Error{"has no inputs"};
  for (size_t k = 0; k < in.size(); ++k)
    if (!in[k]) return Error{"input " + std::to_string(k) + " is missing"};
  const Shape& first = in[0]->shape;
  int64_t axis = attr_int(n, "axis", 0);
  if (!normalize(&axis, first.rank())) return bad_axis(axis, first);
  Shape out_shape = first;
  out_shape[axis] = 0;
  for (const HostTensor* t : in) {
    bool ok = t->shape.rank() == first.rank() && t->dtype == in[0]->dtype;
    for (int d = 0; ok && d < first.rank(); ++d) ok = d == axis || t->shape[d] == first[d];
    if (!ok) return Error{"inputs " + to_string(first) + " and " + to_string(t->shape) +
                          " do not concatenate on axis " + std::to_string(axis)};
    out_shape[axis] += t->shape[axis];
  }
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= first[d];
  HostTensor out = HostTensor::zeros(in[0]->dtype, out_shape);
  int64_t j = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor* t : in) {
      const int64_t block = outer == 0 ? 0 : t->numel() / outer;
      for (int64_t r = 0; r < block; ++r, ++j) copy_element(*t, o * block + r, &out, j);
    }
  return one(std::move(out));
}

FoldResult fold_expand(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), s = need_input(in, 1);
  if (!x) return x.error();
  if (!s) return s.error();
  Expected<Shape> target = shape_from_values(host_to_ints(**s));
  if (!target) return target.error();
  std::optional<Shape> out = broadcast_shapes((*x)->shape, *target);
  if (!out) return Error{"cannot expand " + to_string((*x)->shape) + " to " + to_string(*target)};
  if (too_large(*out, limit)) return Declined();
  return one(remap(**x, *out, broadcast_map(*out, (*x)->shape)));
}

FoldResult fold_tile(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), r = need_input(in, 1);
  if (!x) return x.error();
  if (!r) return r.error();
  const Shape& xs = (*x)->shape;
  const std::vector<int64_t> repeats = host_to_ints(**r);
  if (static_cast<int>(repeats.size()) != xs.rank())
    return Error{std::to_string(repeats.size()) + " repeats for " + to_string(xs)};
  std::vector<int64_t> dims;
  for (int d = 0; d < xs.rank(); ++d) {
    if (repeats[d] < 0) return Error{"repeat " + std::to_string(repeats[d]) + " is negative"};
    if (xs[d] != 0 && repeats[d] > std::numeric_limits<int64_t>::max() / xs[d])
      return Error{"repeats overflow " + to_string(xs)};
    dims.push_back(xs[d] * repeats[d]);
  }
  Expected<Shape> out = shape_from_values(dims);
  if (!out) return out.error();
  if (too_large(*out, limit)) return Declined();
  const std::vector<int64_t> xst = strides_of(xs), ost = strides_of(*out);
  std::vector<int64_t> map(out->numel());
  for (int64_t j = 0; j < out->numel(); ++j)
    for (int d = 0; d < xs.rank(); ++d) map[j] += (j / ost[d] % (*out)[d] % xs[d]) * xst[d];
  return one(remap(**x, *out, map));
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

template <typename T>
T combine(Reduction r, T a, T u) {
  switch (r) {
    case Reduction::kNone:
      return u;
    case Reduction::kAdd:  // integers wrap, as two's complement
      if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(u));
      return a + u;
    case Reduction::kMul:
      if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(u));
      return a * u;
    case Reduction::kMax:
      return std::max(a, u);
    case Reduction::kMin:
      return std::min(a, u);
  }
  return u;
}

// ScatterND: data with the slices that indices' last axis addresses replaced
// by (or, with `reduction`, combined with) updates, in index order (torch's
// slice assignments, e.g. the shifted-window mask of torchvision's Swin).
FoldResult fold_scatter_nd(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), idx = need_input(in, 1),
                              upd = need_input(in, 2);
  if (!x) return x.error();
  if (!idx) return idx.error();
  if (!upd) return upd.error();
  const Shape &xs = (*x)->shape, &is = (*idx)->shape, &us = (*upd)->shape;
  if ((*idx)->is_float()) return Error{"indices are not integers"};
  if ((*upd)->dtype != (*x)->dtype) return Error{"updates and data differ in element type"};
  if (is.rank() < 1 || is[is.rank() - 1] > xs.rank())
    return Error{"indices " + to_string(is) + " do not address " + to_string(xs)};
  const int k = static_cast<int>(is[is.rank() - 1]);
  std::vector<int64_t> want(is.begin(), is.end() - 1);
  want.insert(want.end(), xs.begin() + k, xs.end());
  if (std::vector<int64_t>(us.begin(), us.end()) != want)
    return Error{"updates " + to_string(us) + " do not match indices " + to_string(is) + " into " +
                 to_string(xs)};
  const std::string name = attr_string(n, "reduction", "none");
  static const std::pair<std::string_view, Reduction> kReductions[] = {{"none", Reduction::kNone},
                                                                       {"add", Reduction::kAdd},
                                                                       {"mul", Reduction::kMul},
                                                                       {"max", Reduction::kMax},
                                                                       {"min", Reduction::kMin}};
  std::optional<Reduction> reduction;
  for (const auto& [r_name, r] : kReductions)
    if (r_name == name) reduction = r;
  if (!reduction) return Error{"reduction '" + name + "' is not one of ONNX's"};
  const std::vector<int64_t> xst = strides_of(xs);
  const int64_t slice = k == 0 ? xs.numel() : xst[k - 1];
  int64_t tuples = 1;
  for (int d = 0; d + 1 < is.rank(); ++d) tuples *= is[d];
  HostTensor out = **x;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t pos = 0;
    for (int d = 0; d < k; ++d) {
      const int64_t c = (*idx)->get_i(t * k + d);
      if (c < -xs[d] || c >= xs[d])
        return Error{"index " + std::to_string(c) + " is out of range for axis " +
                     std::to_string(d) + " of " + to_string(xs)};
      pos += (c < 0 ? c + xs[d] : c) * xst[d];
    }
    for (int64_t e = 0; e < slice; ++e) {
      const int64_t at = pos + e, from = t * slice + e;
      if (out.is_float())
        out.f[at] = combine(*reduction, out.f[at], (*upd)->f[from]);
      else
        out.i[at] = combine(*reduction, out.i[at], (*upd)->i[from]);
    }
  }
  return one(std::move(out));
}

FoldResult fold_slice(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), st = need_input(in, 1),
                              en = need_input(in, 2);
  if (!x) return x.error();
  if (!st) return st.error();
  if (!en) return en.error();
  const Shape& xs = (*x)->shape;
  std::vector<int64_t> starts = host_to_ints(**st), ends = host_to_ints(**en), axes, steps;
  if (in.size() > 3 && in[3]) axes = host_to_ints(*in[3]);
  else for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (in.size() > 4 && in[4]) steps = host_to_ints(*in[4]);
  else steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return Error{"starts, ends, axes and steps differ in length"};
  std::vector<int64_t> begin(xs.rank(), 0), step(xs.rank(), 1), len(xs.begin(), xs.end());
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = axes[k];
    if (!normalize(&a, xs.rank())) return bad_axis(a, xs);
    const int64_t d = xs[a], sp = steps[k];
    if (sp == 0 || sp == INT64_MIN) return Error{"step " + std::to_string(sp) + " is invalid"};
    int64_t b = starts[k] < 0 ? starts[k] + d : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + d : ends[k];
    if (sp > 0) {
      b = std::clamp<int64_t>(b, 0, d), e = std::clamp<int64_t>(e, 0, d);
      len[a] = e > b ? (e - b - 1) / sp + 1 : 0;
    } else if (d > 0) {
      b = std::clamp<int64_t>(b, 0, d - 1), e = std::clamp<int64_t>(e, -1, d - 1);
      len[a] = b > e ? (b - e - 1) / -sp + 1 : 0;
    } else {
      len[a] = 0;
    }
    begin[a] = b, step[a] = sp;
  }
  Expected<Shape> out = shape_from_values(len);
  if (!out) return out.error();
  std::vector<int64_t> xst = strides_of(xs), ost = strides_of(*out), map(out->numel());
  for (int64_t j = 0; j < out->numel(); ++j) {
    int64_t pos = 0;
    for (int d = 0; d < xs.rank(); ++d) pos += (begin[d] + (j / ost[d] % len[d]) * step[d]) * xst[d];
    map[j] = pos;
  }
  return one(remap(**x, *out, map));
}

FoldResult fold_range(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> s = need_input(in, 0), l = need_input(in, 1),
                              d = need_input(in, 2);
  if (!s) return s.error();
  if (!l) return l.error();
  if (!d) return d.error();
  if ((*s)->numel() != 1 || (*l)->numel() != 1 || (*d)->numel() != 1)
    return Error{"start, limit and delta must be scalars"};
  const double start = (*s)->get_f(0), stop = (*l)->get_f(0), delta = (*d)->get_f(0);
  if (delta == 0) return Error{"delta is 0"};
  const double count = std::max(std::ceil((stop - start) / delta), 0.0);
  if (!(count <= static_cast<double>(limit))) return Declined();
  HostTensor out = HostTensor::zeros((*s)->dtype, Shape{static_cast<int64_t>(count)});
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (out.is_float()) out.f[k] = round_to(out.dtype, start + k * delta);
    else out.i[k] = wrap_int(out.dtype, (*s)->i[0] + k * (*d)->i[0]);
  }
  return one(std::move(out));
}

FoldResult fold_reshape(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0), s = need_input(in, 1);
  if (!x) return x.error();
  if (!s) return s.error();
  std::vector<int64_t> dims = host_to_ints(**s);
  const bool allow_zero = attr_int(n, "allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0 && !allow_zero) {
      if (static_cast<int>(k) >= (*x)->shape.rank()) return Error{"copies a missing dimension"};
      dims[k] = (*x)->shape[static_cast<int>(k)];
    }
    if (dims[k] == -1 && infer < 0) infer = static_cast<int>(k);
    else if (dims[k] < 0 || __builtin_mul_overflow(known, dims[k], &known))
      return Error{"has an invalid shape"};
  }
  const int64_t numel = (*x)->numel();
  if (infer >= 0) {
    if (known == 0 || numel % known) return Error{"cannot infer the -1 of its shape"};
    dims[infer] = numel / known;
  } else if (known != numel) {
    return Error{"shape does not hold the " + std::to_string(numel) + " elements of its input"};
  }
  Expected<Shape> out = shape_from_values(dims);
  if (!out) return out.error();
  HostTensor r = **x;
  r.shape = *out;
  return one(std::move(r));
}

FoldResult fold_flatten(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  const Shape& xs = (*x)->shape;
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += xs.rank();
  if (axis < 0 || axis > xs.rank()) return bad_axis(axis, xs);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= xs[d];
  HostTensor r = **x;
  r.shape = Shape{outer, outer == 0 ? 0 : xs.numel() / outer};
  return one(std::move(r));
}

FoldResult fold_transpose(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  const Shape& xs = (*x)->shape;
  std::vector<int64_t> perm(xs.rank());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (auto p = attr_ints(n, "perm")) perm = *p;
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != static_cast<int64_t>(k) || sorted.size() != size_t(xs.rank()))
      return Error{"perm is not a permutation of the axes of " + to_string(xs)};
  Shape out;
  for (int64_t p : perm) out.push_back(xs[p]);
  std::vector<int64_t> xst = strides_of(xs), ost = strides_of(out), map(out.numel());
  for (int64_t j = 0; j < out.numel(); ++j) {
    int64_t pos = 0;
    for (int d = 0; d < out.rank(); ++d) pos += (j / ost[d] % out[d]) * xst[perm[d]];
    map[j] = pos;
  }
  return one(remap(**x, out, map));
}

FoldResult fold_identity(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  return one(**x);
}

}  // namespace

FoldFn find_shape_fold(std::string_view t) {
  static const std::pair<std::string_view, FoldFn> kOps[] = {
      {"Shape", fold_shape_of},       {"Size", fold_size},
      {"Gather", fold_gather},        {"GatherElements", fold_gather_elements},
      {"ConstantOfShape", fold_constant_of_shape},
      {"Unsqueeze", fold_unsqueeze},  {"Squeeze", fold_squeeze},
      {"Concat", fold_concat},        {"Expand", fold_expand},
      {"Tile", fold_tile},            {"ScatterND", fold_scatter_nd},
      {"Slice", fold_slice},          {"Range", fold_range},
      {"Reshape", fold_reshape},      {"Flatten", fold_flatten},
      {"Transpose", fold_transpose},  {"Identity", fold_identity},
      {"Resize", fold_resize},
  };
  for (const auto& [name, fn] : kOps)
    if (name == t) return fn;
  return nullptr;
}

Expected<const HostTensor*> need_input(FoldInputs in, size_t k) {
  if (k >= in.size() || !in[k]) return Error{"input " + std::to_string(k) + " is missing"};
  return in[k];
}

}  // namespace tso::onnx_frontend
