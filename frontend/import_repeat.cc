#include "frontend/import_repeat.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

Ints dims_of(const Shape& s) { return Ints(s.begin(), s.end()); }

// x of shape `s` with axis d repeated r[d] times, the copies outside the
// axis (x x x) or, with `inside`, each element r[d] times in a row.
Expected<Mapped> repeat(NodeContext& ctx, const Shape& s, const Ints& r, bool inside) {
  Ints split, expanded, out;
  for (int d = 0; d < s.rank(); ++d) {
    out.push_back(s[d] * r[d]);
    if (r[d] == 1 || s[d] == 1) {
      split.push_back(s[d]);
      expanded.push_back(s[d] * r[d]);
    } else if (inside) {
      split.insert(split.end(), {s[d], 1});
      expanded.insert(expanded.end(), {s[d], r[d]});
    } else {
      split.insert(split.end(), {1, s[d]});
      expanded.insert(expanded.end(), {r[d], s[d]});
    }
  }
  if (split.size() > static_cast<size_t>(Shape::kMaxRank))
    return opaque("more repeated axes than the IR's rank allows");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  GraphBuilder& b = ctx.builder();
  auto step = [&](Op op, Ints shape) -> Expected<TensorRef> {
    if (dims_of(b.type(*x).shape) == shape) return *x;
    Attrs a;
    a.set(AttrKey::shape, std::move(shape));
    return b.add1(op, {*x}, std::move(a), ctx.node().name());
  };
  for (auto [op, shape] : {std::pair{Op::Reshape, split}, std::pair{Op::Expand, expanded},
                           std::pair{Op::Reshape, out}}) {
    x = step(op, shape);
    if (!x) return x.error();
  }
  return Mapped{{*x}, {}};
}

// The input element ONNX's Resize reads for output element `o` of an axis
// resized from `in` to `out` by `scale`, in nearest mode; nullopt for a
// transformation or rounding this mapping does not know.
std::optional<int64_t> nearest_source(const std::string& transform, const std::string& rounding,
                                      int64_t o, int64_t in, int64_t out, double scale) {
  double x;
  if (transform == "half_pixel" || transform == "half_pixel_symmetric") {
    // half_pixel_symmetric shifts by in / 2 * (1 - out / (in * scale)): 0
    // for the whole-number scales this mapping takes.
    x = (o + 0.5) / scale - 0.5;
  } else if (transform == "pytorch_half_pixel") {
    x = out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  } else if (transform == "asymmetric") {
    x = o / scale;
  } else if (transform == "tf_half_pixel_for_nearest") {
    x = (o + 0.5) / scale;
  } else if (transform == "align_corners") {
    x = out > 1 ? o * double(in - 1) / double(out - 1) : 0.0;
  } else {
    return std::nullopt;
  }
  double i;
  const bool half = x - std::floor(x) == 0.5;
  if (rounding == "round_prefer_floor") {
    i = half ? std::floor(x) : std::round(x);
  } else if (rounding == "round_prefer_ceil") {
    i = half ? std::ceil(x) : std::round(x);
  } else if (rounding == "floor") {
    i = std::floor(x);
  } else if (rounding == "ceil") {
    i = std::ceil(x);
  } else {
    return std::nullopt;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

}  // namespace

Expected<Mapped> map_tile(NodeContext& ctx) {
  const HostTensor* c = ctx.constant(1);
  if (!c) return opaque("repeats that are not constant");
  const Ints r = host_to_ints(*c);
  const Shape s = ctx.type(0).shape;
  if (static_cast<int>(r.size()) != s.rank())
    return Error{"has " + std::to_string(r.size()) + " repeats for " + to_string(ctx.type(0))};
  for (int64_t v : r) {
    if (v < 0) return Error{"has a negative repeat " + std::to_string(v)};
    if (v == 0) return opaque("a repeat of 0 (an empty result)");
  }
  return repeat(ctx, s, r, false);
}

Expected<Mapped> map_resize(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const std::string mode = attr_string(n, "mode", "nearest");
  const Shape s = ctx.type(0).shape;
  const int rank = s.rank();
  Ints axes;
  for (int64_t a : attr_ints(n, "axes").value_or(Ints{})) axes.push_back(a < 0 ? a + rank : a);
  if (axes.empty())
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t a : axes)
    if (a < 0 || a >= rank) return Error{"has an axis out of range for " + to_string(ctx.type(0))};

  // The output extent and scale of each axis, from sizes or from scales.
  Ints out = dims_of(s);
  std::vector<double> scale(rank, 1.0);
  const bool by_sizes = ctx.has_input(3) && ctx.type(3).shape.numel() > 0;
  const HostTensor* c = ctx.constant(by_sizes ? 3 : 2);
  if (!c) return opaque(by_sizes ? "sizes that are not constant" : "scales that are not constant");
  if (c->numel() != static_cast<int64_t>(axes.size()))
    return Error{"has " + std::to_string(c->numel()) + (by_sizes ? " sizes" : " scales") + " for " +
                 std::to_string(axes.size()) + " axes"};
  if (by_sizes && attr_string(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return opaque("sizes under a keep_aspect_ratio_policy");
  for (size_t k = 0; k < axes.size(); ++k) {
    const int d = static_cast<int>(axes[k]);
    if (by_sizes) {
      out[d] = c->get_i(static_cast<int64_t>(k));
      scale[d] = double(out[d]) / double(s[d]);
    } else {
      scale[d] = c->get_f(static_cast<int64_t>(k));
      if (!(scale[d] > 0)) return Error{"has a scale that is not positive"};
      out[d] = static_cast<int64_t>(std::floor(s[d] * scale[d]));
    }
  }

  const std::string transform = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  // A resize to the same extents by a scale of 1 reads each element at its
  // own coordinate in every mode (DINOv2's position embeddings at the size
  // they were made for).
  bool same = transform != "tf_crop_and_resize";
  for (int d = 0; d < rank; ++d) same &= out[d] == s[d] && scale[d] == 1.0;
  if (same) {
    Expected<TensorRef> x = ctx.tensor(0);
    if (!x) return x.error();
    return Mapped{{*x}, {}};
  }
  if (mode != "nearest") return opaque("a resize in " + mode + " mode");
  const std::string rounding = attr_string(n, "nearest_mode", "round_prefer_floor");
  Ints r(rank, 1);
  for (int d = 0; d < rank; ++d) {
    if (out[d] == s[d] && scale[d] == 1.0) continue;
    if (s[d] == 0 || out[d] < s[d] || out[d] % s[d] != 0)
      return opaque("a resize by a factor that is not a whole number");
    r[d] = out[d] / s[d];
    for (int64_t o = 0; o < out[d]; ++o)
      if (nearest_source(transform, rounding, o, s[d], out[d], scale[d]) != o / r[d])
        return opaque("a nearest resize (" + transform + ", " + rounding +
                      ") that does not repeat each element");
  }
  return repeat(ctx, s, r, true);
}

}  // namespace tso::onnx_frontend
