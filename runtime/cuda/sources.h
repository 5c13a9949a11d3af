// The bytes of the static block: graph inputs, weights and constants, laid
// out as the plan says, built on the host and uploaded once. Plain C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cuda/plan.h"

namespace tso::cuda {

struct SourceOptions {
  // Weights without stored data get seeded random values when set (uniform
  // in +-1/sqrt(fan_in) for rank >= 2, in [0.5, 1.5] for vectors, so that
  // scales and variances are positive); without it such a weight is an error
  // naming it. Graph inputs are filled the same way (they are fed later).
  std::optional<uint64_t> random_seed;
};

// Host image of the plan's static block: weights' stored bytes, constants'
// values (const_ones, const_eye, const_eye_conv, const_pool), inputs zeroed
// or random.
Expected<std::vector<std::byte>> static_image(const Graph& g, const Plan& plan,
                                              const SourceOptions& options);

// Seeded random f32 values for a tensor of `type` named `name` (the same
// rule as weights without data); used for inputs in benchmarks and tests.
std::vector<float> random_values(const TensorType& type, const std::string& name, uint64_t seed);

}  // namespace tso::cuda
