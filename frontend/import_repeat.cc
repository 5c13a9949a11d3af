#include "frontend/import_repeat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx_util.h"
#include "frontend/resize_gather.h"
#include "frontend/resize_plan.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

constexpr int64_t kMaxResizedExtent = int64_t{1} << 24;

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

}  // namespace

Expected<Mapped> map_tile(NodeContext& ctx) {
  const HostTensor* c = ctx.constant(1);
  if (!c) return opaque("repeats that are not constant");
  const Ints r = host_to_ints(*c);
  const Shape s = ctx.type(0).shape;
  if (static_cast<int>(r.size()) != s.rank())
    return Error{"has " + std::to_string(r.size()) + " repeats for " + to_string(ctx.type(0))};
  for (int d = 0; d < s.rank(); ++d) {
    if (r[d] < 0) return Error{"has a negative repeat " + std::to_string(r[d])};
    if (r[d] == 0) return opaque("a repeat of 0 (an empty result)");
    if (r[d] > std::numeric_limits<int64_t>::max() / std::max<int64_t>(s[d], 1))
      return Error{"has repeats that overflow " + to_string(ctx.type(0))};
  }
  return repeat(ctx, s, r, false);
}

Expected<Mapped> map_resize(NodeContext& ctx) {
  const Shape s = ctx.type(0).shape;
  const bool by_sizes = ctx.has_input(3) && ctx.type(3).shape.numel() > 0;
  const HostTensor* given = ctx.constant(by_sizes ? 3 : 2);
  if (!given)
    return opaque(by_sizes ? "sizes that are not constant" : "scales that are not constant");
  std::string unsupported;
  Expected<ResizePlan> p = plan_resize(ctx.node(), s, by_sizes ? nullptr : given,
                                       by_sizes ? given : nullptr, &unsupported);
  if (!p) return p.error();
  if (!unsupported.empty()) return opaque(unsupported);

  // A resize to the same extents by a scale of 1 reads each element at its
  // own coordinate in every mode (DINOv2's position embeddings at the size
  // they were made for).
  bool same = true;
  for (int d = 0; d < s.rank(); ++d) same &= p->out[d] == s[d] && p->scale[d] == 1.0;
  if (same) {
    Expected<TensorRef> x = ctx.tensor(0);
    if (!x) return x.error();
    return Mapped{{*x}, {}};
  }
  // Each resized axis is walked element by element and, for gathers, needs
  // index and weight constants of its output extent: an extent past 2^24 (no
  // image axis is so long; a hostile node's sizes can ask for 2^50) leaves
  // the node opaque rather than allocate them.
  for (int d = 0; d < s.rank(); ++d)
    if (p->out[d] > kMaxResizedExtent && !(p->out[d] == s[d] && p->scale[d] == 1.0))
      return opaque("an axis resized to more than 2^24 elements");
  // Nearest by whole factors that repeats each element: a reshape, an expand
  // and a reshape; any other resize: gathers of its taps.
  if (p->mode != "nearest") return map_resize_by_gathers(ctx, *p);
  Ints r(s.rank(), 1);
  for (int d = 0; d < s.rank(); ++d) {
    if (p->out[d] == s[d] && p->scale[d] == 1.0) continue;
    if (p->out[d] < s[d] || p->out[d] % s[d] != 0) return map_resize_by_gathers(ctx, *p);
    r[d] = p->out[d] / s[d];
    for (int64_t o = 0; o < p->out[d]; ++o) {
      const double x = source_coordinate(p->transform, o, s[d], p->out[d], p->scale[d]);
      if (nearest_index(p->rounding, x, s[d]) != o / r[d]) return map_resize_by_gathers(ctx, *p);
    }
  }
  return repeat(ctx, s, r, true);
}

}  // namespace tso::onnx_frontend
