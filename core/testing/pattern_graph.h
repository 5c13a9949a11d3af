// Seeded random graphs made of the patterns the optimizer's rules rewrite,
// for differential fuzzing of the optimizer (tests/optimizer_diff.h):
// parallel convolutions and projections reading one input, conv chains with
// biases, activations and batchnorms, concats of convolutions, transposes and
// their inverses, concats undone by splits and splits by concats,
// elementwise adds and muls, pooling. random_graph.h covers every operator
// with arbitrary attributes; these graphs are rarer in kind but dense in
// matches. Every weight carries seeded f32 data (batchnorm variances
// positive, kernels scaled by their fan-in), so the graphs fold and run as
// they are; inputs are the caller's. The same seed gives the same graph on
// every platform.
#pragma once

#include <cstdint>

#include "core/graph.h"

namespace tso::testing {

struct PatternGraphOptions {
  int max_operators = 30;  // at least 1; the graph has between 1 and this many
};

// Every operator reaches an output: unused results become graph outputs.
Graph pattern_graph(uint64_t seed, const PatternGraphOptions& options = {});

}  // namespace tso::testing
