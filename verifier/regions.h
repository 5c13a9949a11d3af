// Partial equivalence (PET), the region check: where a mutant computes the
// same values as its source program and where it does not.
//
// Both programs are built from multilinear operators (conv2d, matmul, gemm
// with integer alpha and beta, avgpool, add, sub, mul, smul), position-wise
// ones (neg, relu, sigmoid, tanh, erf, gelu, exp, sqrt, clip, and the fused
// activation of conv2d, matmul and gemm) and layout operators (pad, slice,
// concat, split, transpose, reshape and its kin, enlarge, update_slice). The
// output is split into boxes: along every output axis, breakpoints are
// derived from the operators' index arithmetic (padding borders, seams of
// concats, halos of slices, tile and interleave boundaries of reshapes;
// a position-wise operator adds none), so that inside one box each output
// position reads its inputs through the same summation intervals in both
// programs, shifted by a translation. A box is then decided from its corner
// and one step along each of its axes (rank + 1 positions, each evaluated
// alone, on demand), on `tests` independent random inputs in the prime field
// of ref::Mod, where a nonlinear function is a fixed polynomial surrogate
// (position_eval.h): a box that differs passes every test with probability
// at most (degree / p)^tests (`false_equal_bound`), the degree counting the
// surrogates'. An axis that a reshape split
// (H as (H/2, 2) for interleaved sub-images) has one sub-axis per factor,
// and a box takes a step along each. Every graph input and weight is a
// variable (stored weight values are not used).
//
// A wrong box is reported whole. When the programs' index maps differ only
// in slope (x[2h] for x[h]), a box's corner can agree while a step differs:
// the box is wrong, and its agreeing positions are reported with it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/graph.h"

namespace tso::verifier {

// A box of one output: positions starts[a] <= i_a < ends[a] on every axis.
struct Box {
  int output = 0;
  std::vector<int64_t> starts, ends;
  friend bool operator==(const Box&, const Box&) = default;
};

struct RegionOptions {
  int tests = 2;  // independent random input sets, >= 2
  uint64_t seed = 1;
  // Limits, 0 for none: the boxes, and the tensor elements read evaluating
  // positions (both programs, every test). Past one the pair is not decided
  // (an error saying so): a caller deciding at real model shapes, such as
  // the optimizer, bounds the time one decision takes.
  int64_t max_boxes = 0;
  int64_t max_reads = 0;
};

struct RegionResult {
  std::vector<Box> wrong;        // where the mutant differs, adjacent boxes merged; sorted
  int64_t boxes = 0;             // boxes decided
  int64_t positions = 0;         // positions evaluated (per program, per test)
  double false_equal_bound = 0;  // per box
};

// Decides every box of the outputs of `source` and `mutant`: two concrete
// graphs over the same inputs (by name and type) with outputs of equal types.
// Fails, naming the node, on an operator outside the set above.
Expected<RegionResult> decide_regions(const Graph& source, const Graph& mutant,
                                      const RegionOptions& options = {});

}  // namespace tso::verifier
