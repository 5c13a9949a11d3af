// What grid_sample reads for one output position (core/ops.h): the input
// elements and their weights, from the normalized grid coordinates, under
// the node's mode, padding mode and align_corners, as ONNX's GridSample and
// PyTorch's grid_sample define them. Shared by runtime/reference and
// runtime/cpu, so that both sample alike.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace tso::rt {

struct GridSampling {
  bool bilinear = true;  // else nearest (round half to even)
  enum Padding : uint8_t { kZeros, kBorder, kReflection } padding = kZeros;
  bool align_corners = false;
  int64_t height = 0, width = 0;  // of the sampled input
};

// From the node's attributes; false for a mode or padding mode it lacks.
bool parse_grid_sampling(std::string_view mode, std::string_view padding, int64_t align_corners,
                         int64_t height, int64_t width, GridSampling* out);

// Up to four taps: the flat index y * width + x of an input element and its
// weight; taps outside the input (zeros padding) or of weight 0 are left
// out, so a position wholly outside reads nothing (0). A NaN coordinate
// reads nothing.
struct GridTaps {
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
  int count = 0;
};
GridTaps grid_taps(const GridSampling& s, double gx, double gy);

}  // namespace tso::rt
