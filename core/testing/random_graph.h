// Seeded random graphs for property tests: random DAGs over every operator of
// core/ops.def with valid shapes. Candidate nodes get attributes and extra
// arguments chosen to fit their first argument, and only those GraphBuilder
// accepts are kept, so shape inference, not this file, decides validity.
// The same seed gives the same graph on every platform (no std:: distributions).
#pragma once

#include <cstdint>

#include "core/graph.h"

namespace tso::testing {

struct RandomGraphOptions {
  int max_inputs = 4;     // graph inputs and weights created up front (at least 1)
  int operators = 8;      // operators to add
  int max_attempts = 400; // candidate nodes tried before giving up on `operators`
  bool opaque = true;     // include opaque nodes
  bool odd_names = true;  // names that need quoting in the text format
};

// Every operator node reaches an output: unused results become graph outputs.
Graph random_graph(uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace tso::testing
