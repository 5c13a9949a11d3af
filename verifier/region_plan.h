// Backward region propagation for corrections (internal to tso_regions): which
// part of each input an operator reads to compute a box of its output, and
// the operator that computes that box from just those parts.
//
// The plan of a box is exact where the operator's index arithmetic maps it
// to boxes of the inputs (windows of conv2d and pooling with the part of the
// padding the box's windows reach, rows and columns of products, broadcasting,
// pad, slice, concat, split, transpose, reshapes whose box stays a box). Where
// it does not, the box is widened (to whole groups of a grouped convolution,
// to the enclosing box of a reshape, to the full extent along an axis, or to
// the whole output of an operator without a rule), and the consumer slices
// what it asked for out of the wider result.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attrs.h"
#include "core/graph.h"

namespace tso::verifier {

// Half-open index range [lo, hi) along one axis.
struct Range {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi - lo; }
  friend bool operator==(const Range&, const Range&) = default;
};
// One range per axis of a tensor.
using Region = std::vector<Range>;

Region full_region(const Shape& s);
bool is_full(const Region& r, const Shape& s);
Shape region_shape(const Region& r);
// The smallest region containing both.
Region bounding(const Region& a, const Region& b);

// How one output of one node computes `out` (the region asked for, or a
// wider one) from regions of its arguments.
struct Plan {
  enum Kind {
    kOperator,  // `op` with `attrs` applied to the arguments' regions, in order
    kForward,   // the output region is the one argument's region itself
  };
  Kind kind = kOperator;
  Region out;
  struct Read {
    int arg;  // index into the node's arguments
    Region region;
  };
  std::vector<Read> reads;
  Op op = Op::Input;
  Attrs attrs;
};

// The plan of output `output` of operator node `node` of `g` (not a graph
// input or constant) for the region `want` of that output.
Plan plan_region(const Graph& g, int node, int output, const Region& want);

}  // namespace tso::verifier
