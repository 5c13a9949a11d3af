// Weight folding: after the search, every weight-only operator that a run-time
// operator (or a graph output) reads is evaluated with the reference executor
// into a new weight, e.g. the concatenated, enlarged or batchnorm-scaled
// kernels of merged convolutions. Weights nothing reads any more are dropped.
#pragma once

#include "core/error.h"
#include "core/graph.h"

namespace tso::opt {

struct FoldStats {
  int folded = 0;          // new weights
  int removed_nodes = 0;   // weight-only operators and unused weights dropped
};

// Fails, naming the node, when a weight it needs has no data or the reference
// executor cannot evaluate an operator. f32 values are folded, and f16 ones
// that data movement alone makes of f16 weights (exact); a dequantize_linear
// of weights is kept (their 8-bit storage), operators on it fold.
Expected<Graph> fold_weights(const Graph& g, FoldStats* stats = nullptr);

}  // namespace tso::opt
