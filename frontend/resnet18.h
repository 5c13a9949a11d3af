// torchvision's ResNet-18 (He, Zhang, Ren and Sun, CVPR 2016), one of the
// models PET measures (issue 15), built here because ../shared/models has no
// ResNet-18. A 7x7 convolution with stride 2, batchnorm and ReLU, a 3x3 max
// pool with stride 2, then four stages of two BasicBlocks (two 3x3
// convolutions, each with batchnorm, a residual add and ReLU) with 64, 128,
// 256 and 512 channels; the first block of stages 2 to 4 has stride 2 and a
// 1x1 convolution with batchnorm on its shortcut. Global average pool,
// flatten and a 1000-way fully connected layer end it. Convolutions have no
// bias, as in torchvision; weights carry torchvision's parameter names.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

struct ResNet18Options {
  int64_t batch = 1;
  int64_t height = 224;
  int64_t width = 224;
  uint64_t seed = 0;  // weights: seeded values, as `--random-weights` gives
};

// Input `input` of f32[batch,3,height,width]; output `output` of
// f32[batch,1000] (logits). The batch, height and width must be positive and
// every tensor's element count must fit in int64; other sizes are an error
// naming them.
Expected<Graph> build_resnet18(const ResNet18Options& options = {});

}  // namespace tso
