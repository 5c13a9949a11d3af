// TASO's NasRNN benchmark, which has no ONNX file: five recurrent steps of
// the cell found by neural architecture search (Zoph and Le), as TASO's
// examples/nasrnn.py builds it. Each step combines the input x_t and the
// state h with eight pairs of matrix products (fresh weights per step),
// mixes them with relu, sigmoid and tanh, adds and multiplies, and returns
// tanh of the result as the next state.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

struct NasRnnOptions {
  int steps = 5;
  int64_t hidden = 512;
  uint64_t seed = 0;  // weights: seeded He-style normal values
};

// Inputs x0..x{steps-1} of f32[1,hidden]; the initial state is a weight;
// the output `h` is the last state.
Expected<Graph> build_nasrnn(const NasRnnOptions& options = {});

}  // namespace tso
