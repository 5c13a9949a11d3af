// Grouped 3x3 convolutions of 4, 8 or 16 channels a group in and out
// (ResNeXt's), NHWC, stride 1 or 2, on AVX-512 (grouped_conv_avx512.cc, run
// only where the CPU has it). oneDNN runs ResNeXt-50's groups of 4 channels
// at a fifth of the machine's peak; this kernel keeps 16 output channels (4,
// 2 or 1 groups) of 4 output pixels in registers, and broadcasts each input
// channel across its group's lanes with one permute that serves every
// output pixel of the block that reads it. Internal to runtime/cpu.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/cpu/epilogue.h"

namespace tso::cpu {

struct GroupedShape {
  int64_t n = 1, c = 0, h = 0, w = 0;  // input NHWC; c is the output's too
  int64_t group_channels = 0;          // 4, 8 or 16
  int64_t stride = 1;                  // 1 or 2, both axes
  int64_t pad_top = 1, pad_left = 1;   // 0 or 1
  int64_t oh = 0, ow = 0;              // output extents
};

// The weights, OIHW ([c, group_channels, 3, 3]), as the kernel reads them:
// [c / 16][tap][j][c % 16], the weight of output channel c for its group's
// input channel j, so that a vector of 16 output channels finds each at a
// constant offset.
void grouped_conv_weights(const GroupedShape& s, const float* oihw, float* out);
// dst (NHWC) = the convolution of src (NHWC) by `weights`
// (grouped_conv_weights), then `epilogue`.
void grouped_conv(const GroupedShape& s, const float* src, const float* weights, float* dst,
                  std::span<const EpilogueOp> epilogue);

}  // namespace tso::cpu
