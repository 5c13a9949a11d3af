// A small graph in the text format that the command-line tests optimize:
// a biased 3x3 convolution and a relu the optimizer fuses into it.
#pragma once

namespace tso::testing {

inline constexpr const char* kConvRelu = R"(graph conv_relu {
  input x: f32[1,3,8,8]
  weight w: f32[4,3,3,3]
  weight b: f32[4]
  %c = conv2d(x, w, b, pad=same)
  %r = relu(%c)
  output y = %r
}
)";

}  // namespace tso::testing
