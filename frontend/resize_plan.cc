#include "frontend/resize_plan.h"

#include <algorithm>
#include <cmath>

#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (s == o) return true;
  return false;
}

std::vector<double> cubic_weights(double r, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < t < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // t <= 1
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

}  // namespace

Expected<ResizePlan> plan_resize(const onnx::NodeProto& n, const Shape& x, const HostTensor* scales,
                                 const HostTensor* sizes, std::string* unsupported) {
  ResizePlan p;
  p.mode = attr_string(n, "mode", "nearest");
  p.transform = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  p.rounding = attr_string(n, "nearest_mode", "round_prefer_floor");
  // The name opset 11's first release gave tf_half_pixel_for_nearest, which
  // ONNX's own test data and ONNX Runtime still accept.
  if (p.transform == "tf_half_pixel_for_nn") p.transform = "tf_half_pixel_for_nearest";
  if (!one_of(p.mode, {"nearest", "linear", "cubic"}))
    return Error{"has an unknown mode '" + p.mode + "'"};
  if (!one_of(p.transform,
              {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
               "asymmetric", "tf_half_pixel_for_nearest", "tf_crop_and_resize"}))
    return Error{"has an unknown coordinate_transformation_mode '" + p.transform + "'"};
  if (!one_of(p.rounding, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return Error{"has an unknown nearest_mode '" + p.rounding + "'"};
  if (p.transform == "tf_crop_and_resize") *unsupported = "tf_crop_and_resize";
  if (p.mode != "nearest" && attr_int(n, "antialias", 0) != 0) *unsupported = "antialias";

  const int rank = x.rank();
  std::vector<int64_t> axes;
  for (int64_t a : attr_ints(n, "axes").value_or(std::vector<int64_t>{})) {
    if (a < -rank || a >= rank) return Error{"has an axis out of range for " + to_string(x)};
    axes.push_back(a < 0 ? a + rank : a);
  }
  if (axes.empty())
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  const bool by_sizes = sizes && sizes->numel() > 0;
  const HostTensor* given = by_sizes ? sizes : scales;
  if (!given) return Error{"has neither scales nor sizes"};
  if (given->numel() != static_cast<int64_t>(axes.size()))
    return Error{"has " + std::to_string(given->numel()) + (by_sizes ? " sizes" : " scales") +
                 " for " + std::to_string(axes.size()) + " axes"};
  if (by_sizes && attr_string(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    *unsupported = "sizes under a keep_aspect_ratio_policy";
  p.out.assign(x.begin(), x.end());
  p.scale.assign(rank, 1.0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int d = static_cast<int>(axes[k]);
    if (by_sizes) {
      p.out[d] = given->get_i(static_cast<int64_t>(k));
      if (p.out[d] < 1 || x[d] < 1) return Error{"resizes an axis to or from no elements"};
      p.scale[d] = double(p.out[d]) / double(x[d]);
    } else {
      p.scale[d] = given->get_f(static_cast<int64_t>(k));
      if (!(p.scale[d] > 0) || !std::isfinite(p.scale[d]))
        return Error{"has a scale that is not a positive number"};
      const double extent = std::floor(double(x[d]) * p.scale[d]);
      if (extent >= 0x1p62) return Error{"resizes an axis beyond 2^62 elements"};
      p.out[d] = static_cast<int64_t>(extent);
    }
  }
  return p;
}

double source_coordinate(const std::string& transform, int64_t o, int64_t in, int64_t out,
                         double scale) {
  const double width = scale * double(in);  // ONNX's output width, not rounded
  if (transform == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (transform == "half_pixel_symmetric") {
    const double offset = in / 2.0 * (1 - double(out) / width);
    return offset + (o + 0.5) / scale - 0.5;
  }
  if (transform == "pytorch_half_pixel") return out != 1 ? (o + 0.5) / scale - 0.5 : -0.5;
  if (transform == "align_corners") return width == 1 ? 0.0 : o * double(in - 1) / (width - 1);
  if (transform == "asymmetric") return o / scale;
  if (transform == "tf_half_pixel_for_nearest") return (o + 0.5) / scale;
  return NAN;
}

int64_t nearest_index(const std::string& rounding, double x, int64_t in) {
  const bool half = x - std::floor(x) == 0.5;
  double i;
  if (rounding == "floor")
    i = std::floor(x);
  else if (rounding == "ceil")
    i = std::ceil(x);
  else if (half)
    i = rounding == "round_prefer_ceil" ? std::ceil(x) : std::floor(x);
  else
    i = std::round(x);
  return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

ResizeTaps resize_taps(const ResizePlan& p, const onnx::NodeProto& n, int d, int64_t o,
                       int64_t in) {
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
  ResizeTaps taps;
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

}  // namespace tso::onnx_frontend
