// PET's CSRNet benchmark (Li, Zhang and Chen, CVPR 2018, configuration B),
// which has no ONNX file: a crowd-counting network that maps an image to a
// density map. The front end is VGG-16's first ten 3x3 convolutions (padding
// 1, ReLU) with a 2x2 max pool after the second, fourth and seventh; the back
// end is six 3x3 convolutions with dilation 2 (padding 2, ReLU) to 512, 512,
// 512, 256, 128 and 64 channels; a 1x1 convolution to one channel gives the
// density map. Every convolution has a bias. The dilated convolutions are what
// PET's partially equivalent transformations rewrite (issue 15).
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

struct CsrNetOptions {
  int64_t batch = 1;
  int64_t height = 224;
  int64_t width = 224;
  uint64_t seed = 0;  // weights: seeded He-style values, as `--random-weights` gives
};

// Input `image` of f32[batch,3,height,width]; output `density` of
// f32[batch,1,height/8,width/8] (rounded down, as the pools round). Height
// and width must be at least 8, and every tensor's element count must fit in
// int64; other sizes are an error naming them.
Expected<Graph> build_csrnet(const CsrNetOptions& options = {});

}  // namespace tso
