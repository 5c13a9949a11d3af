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
  bool f64 = false;       // evaluate in f64 (the same inputs) rather than f32
};

// The bound of a check in f64: a rewrite exact in real arithmetic agrees to
// about 1e-16 times what cancellation amplifies; one that is not, to about
// how far it is from exact.
constexpr double kF64Tolerance = 1e-9;

struct CheckResult {
  int runs = 0;
  double max_relative_error = 0;
  std::string worst_output;  // the output where it was reached
  // Elements of comparison outputs that differ where their operands are
  // within the tolerance of each other (see compare_graphs), over all runs.
  int64_t near_ties = 0;
  // Where the f32 check exceeded its tolerance and the check ran again in
  // f64: its result there (see optimize.h); -1 when it did not.
  double f64_max_relative_error = -1;
  std::string f64_worst_output;
};

// Graphs with opaque nodes (which the executor cannot run) are compared cut
// at them: both must hold the same opaque nodes (by name, attributes and
// arity); each opaque output is fed the same random value in both, and each
// opaque node's arguments are compared like outputs. By induction over the
// opaque nodes in order, equal arguments give equal opaque outputs, so the
// graphs agree wherever the executor can tell.
// An output that compares floats (greater, less, equal) in both graphs jumps
// where its operands cross: operands that agree to the tolerance can still
// fall on either side of each other, as a detection model's scores near its
// threshold do. Its operands are compared like outputs, and an element of it
// that differs counts only where the original's operands are further apart
// than the tolerance (relative to their larger magnitude); the others are
// counted as near ties.
// Fails when either graph cannot be evaluated (naming the node) or the graphs
// disagree in their outputs' names or types; a result over the tolerance is
// returned, not an error, so the caller can report it.
Expected<CheckResult> compare_graphs(const Graph& original, const Graph& optimized,
                                     const CheckOptions& options = {});

// What the lines that report a check add to its f32 result: ", N comparison
// results at near ties of their operands" where there were, and "; over the
// tolerance in f32 on output 'X', in f64 max relative error E (bound B)"
// where it ran again in f64; else "".
std::string check_notes(const CheckResult& r);

}  // namespace tso::opt
