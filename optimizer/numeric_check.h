// The numerical check after the search: the optimized graph and the original
// run on the same random inputs (and random values for weights without data,
// as the text format gives) with the reference executor (fp32), and the
// largest relative error over all outputs and runs is compared with a bound
// (core/ops.h: max|a-b| / max(max|b|, 1e-6), 1e-4 for fp32).
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/graph.h"

namespace tso::opt {

struct CheckOptions {
  int runs = 2;           // random input sets
  uint64_t seed = 1;      // inputs depend only on this and the run
  double tolerance = 1e-4;
};

struct CheckResult {
  int runs = 0;
  double max_relative_error = 0;
  std::string worst_output;  // the output where it was reached
};

// Graphs with opaque nodes (which the executor cannot run) are compared cut
// at them: both must hold the same opaque nodes (by name, attributes and
// arity); each opaque output is fed the same random value in both, and each
// opaque node's arguments are compared like outputs. By induction over the
// opaque nodes in order, equal arguments give equal opaque outputs, so the
// graphs agree wherever the executor can tell.
// Fails when either graph cannot be evaluated (naming the node) or the graphs
// disagree in their outputs' names or types; a result over the tolerance is
// returned, not an error, so the caller can report it.
Expected<CheckResult> compare_graphs(const Graph& original, const Graph& optimized,
                                     const CheckOptions& options = {});

}  // namespace tso::opt
