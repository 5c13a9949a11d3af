// Resize of a constant in any mode (internal to frontend/): DINOv2 and ViTs
// run at another size than they were trained at resize their position
// embeddings, a weight, bicubically in forward. Separable: each resized axis
// in turn, every output element a weighted sum of input elements along it,
// as ONNX's reference defines the weights (nearest's rounding, linear's two
// and cubic's four neighbours, the axis's edge repeated past its ends, or
// those outside left out with exclude_outside).
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/fold_ops.h"
#include "frontend/host_tensor_util.h"
#include "frontend/onnx_util.h"
#include "frontend/resize_plan.h"

namespace tso::onnx_frontend {

namespace {

// (input element, weight) pairs of one output element along an axis.
using Taps = std::vector<std::pair<int64_t, double>>;

std::vector<double> cubic_weights(double r, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < t < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // t <= 1
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

// The taps of output element `o` of an axis of `in` elements.
Taps taps_of(const ResizePlan& p, const onnx::NodeProto& n, int d, int64_t o, int64_t in) {
  const double x = source_coordinate(p.transform, o, in, p.out[d], p.scale[d]);
  if (p.mode == "nearest") return {{nearest_index(p.rounding, x, in), 1.0}};
  const int64_t base = static_cast<int64_t>(std::floor(x));
  const double r = x - double(base);
  std::vector<double> w;
  int64_t first;
  if (p.mode == "linear") {
    w = {1 - r, r};
    first = base;
  } else {
    w = cubic_weights(r, attr_float(n, "cubic_coeff_a", -0.75f));
    first = base - 1;
  }
  const bool exclude = attr_int(n, "exclude_outside", 0) != 0;
  Taps taps;
  double kept = 0;
  for (size_t k = 0; k < w.size(); ++k) {
    const int64_t at = first + static_cast<int64_t>(k);
    if (exclude && (at < 0 || at >= in)) continue;
    taps.push_back({std::clamp<int64_t>(at, 0, in - 1), w[k]});
    kept += w[k];
  }
  if (exclude && kept != 0)
    for (auto& t : taps) t.second /= kept;
  return taps;
}

// `x` resized along axis d.
HostTensor resize_axis(const HostTensor& x, const ResizePlan& p, const onnx::NodeProto& n, int d) {
  Shape s = x.shape;
  const int64_t in = s[d];
  s[d] = p.out[d];
  HostTensor y = HostTensor::zeros(x.dtype, s);
  int64_t inner = 1;
  for (int k = d + 1; k < s.rank(); ++k) inner *= s[k];
  const int64_t outer = x.numel() / (in * inner);
  for (int64_t o = 0; o < p.out[d]; ++o) {
    const Taps taps = taps_of(p, n, d, o, in);
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        double v = 0;
        for (const auto& [at, w] : taps) v += w * x.f[(a * in + at) * inner + i];
        y.f[(a * p.out[d] + o) * inner + i] = v;
      }
  }
  return y;
}

}  // namespace

FoldResult fold_resize(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  if (!(*x)->is_float()) return Declined();
  const HostTensor* scales = in.size() > 2 ? in[2] : nullptr;
  const HostTensor* sizes = in.size() > 3 ? in[3] : nullptr;
  std::string unsupported;
  Expected<ResizePlan> p = plan_resize(n, (*x)->shape, scales, sizes, &unsupported);
  if (!p) return p.error();
  if (!unsupported.empty()) return Declined();
  HostTensor y = **x;
  for (int d = 0; d < y.shape.rank(); ++d) {
    if (p->out[d] == y.shape[d] && p->scale[d] == 1.0) continue;
    Shape next = y.shape;
    next[d] = p->out[d];
    const std::optional<int64_t> count = next.checked_numel();
    if (!count || *count > limit) return Declined();
    y = resize_axis(y, *p, n, d);
  }
  for (double& v : y.f) v = round_to(y.dtype, v);
  return std::vector<HostTensor>{std::move(y)};
}

}  // namespace tso::onnx_frontend
