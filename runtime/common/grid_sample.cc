#include "runtime/common/grid_sample.h"

#include <algorithm>
#include <cmath>

namespace tso::rt {

namespace {

// A normalized coordinate in [-1, 1] as a pixel coordinate of an axis of
// `n` elements: -1 and 1 are the centres of the end elements with
// align_corners, their outer edges without.
double unnormalize(double g, int64_t n, bool align_corners) {
  return align_corners ? (g + 1) / 2 * static_cast<double>(n - 1)
                       : ((g + 1) * static_cast<double>(n) - 1) / 2;
}

// x reflected into [low / 2, high / 2] (PyTorch's reflect_coordinates).
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  const double flips = std::floor(x / span);
  return std::fmod(flips, 2) == 0 ? extra + low : span - extra + low;
}

double padded(const GridSampling& s, double x, int64_t n) {
  if (s.padding == GridSampling::kReflection)
    x = s.align_corners ? reflect(x, 0, 2.0 * static_cast<double>(n - 1))
                        : reflect(x, -1, 2.0 * static_cast<double>(n) - 1);
  if (s.padding != GridSampling::kZeros) x = std::clamp(x, 0.0, static_cast<double>(n - 1));
  return x;
}

void add(const GridSampling& s, GridTaps* t, double y, double x, double w) {
  // Written to be false for NaN too (an infinite coordinate reflected).
  const bool inside = x >= 0 && y >= 0 && x <= static_cast<double>(s.width - 1) &&
                      y <= static_cast<double>(s.height - 1);
  if (w == 0 || !inside) return;
  t->index[t->count] = static_cast<int64_t>(y) * s.width + static_cast<int64_t>(x);
  t->weight[t->count] = w;
  ++t->count;
}

}  // namespace

bool parse_grid_sampling(std::string_view mode, std::string_view padding, int64_t align_corners,
                         int64_t height, int64_t width, GridSampling* out) {
  GridSampling s;
  if (mode == "bilinear") {
    s.bilinear = true;
  } else if (mode == "nearest") {
    s.bilinear = false;
  } else {
    return false;
  }
  if (padding == "zeros") {
    s.padding = GridSampling::kZeros;
  } else if (padding == "border") {
    s.padding = GridSampling::kBorder;
  } else if (padding == "reflection") {
    s.padding = GridSampling::kReflection;
  } else {
    return false;
  }
  s.align_corners = align_corners != 0;
  s.height = height, s.width = width;
  *out = s;
  return true;
}

GridTaps grid_taps(const GridSampling& s, double gx, double gy) {
  GridTaps t;
  if (std::isnan(gx) || std::isnan(gy) || s.height < 1 || s.width < 1) return t;
  const double x = padded(s, unnormalize(gx, s.width, s.align_corners), s.width);
  const double y = padded(s, unnormalize(gy, s.height, s.align_corners), s.height);
  if (!s.bilinear) {
    add(s, &t, std::nearbyint(y), std::nearbyint(x), 1);
    return t;
  }
  const double x0 = std::floor(x), y0 = std::floor(y), wx = x - x0, wy = y - y0;
  add(s, &t, y0, x0, (1 - wy) * (1 - wx));
  add(s, &t, y0, x0 + 1, (1 - wy) * wx);
  add(s, &t, y0 + 1, x0, wy * (1 - wx));
  add(s, &t, y0 + 1, x0 + 1, wy * wx);
  return t;
}

}  // namespace tso::rt
