// Internal to verifier/: the index algebra under the region check
// (regions.h). A tensor's positions are described, axis by axis, as
// mixed-radix sub-axes (an axis H split by a reshape into (H/2, 2) has two),
// each cut into intervals. The invariant every layout carries: inside one
// box (one interval per sub-axis), every input position a tensor position
// reads is an affine function of the sub-axis coordinates, and the terms of
// its sum (which taps are valid, which side of a seam, which part of a
// concat) are the same for every position of the box. Cutting finer keeps
// the invariant; that is the fallback wherever an exact description is not
// possible.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/types.h"

namespace tso::verifier {

// Coordinates [0, extent) cut at `cuts`: sorted, unique, holding 0 and
// extent, all in between.
struct SubAxis {
  int64_t extent = 1;
  std::vector<int64_t> cuts;
  friend bool operator==(const SubAxis&, const SubAxis&) = default;
};

// One tensor axis: its sub-axes, outer first (index = sum of coordinate *
// stride, the innermost stride 1). Every sub-axis has extent > 1, except for
// an axis of extent 0 or 1, which is one sub-axis of that extent.
using AxisLayout = std::vector<SubAxis>;
using Layout = std::vector<AxisLayout>;  // one per tensor axis

// `cuts` sorted and clamped to [0, extent], with 0 and extent added.
SubAxis cut_at(int64_t extent, std::vector<int64_t> cuts);
// Cut only at the ends, or between every two positions.
SubAxis whole(int64_t extent);
SubAxis every_position(int64_t extent);
Layout plain(const Shape& shape);
Layout every_position(const Shape& shape);
int64_t extent_of(const AxisLayout& axis);

// Sub-axis (E, cuts) as (E / inner, inner), cut so that every box of the
// pair lies inside one interval of the original.
std::pair<SubAxis, SubAxis> split(const SubAxis& s, int64_t inner);
// The axis as one sub-axis: every row of the outer sub-axes apart (a box
// spanning two rows of an inner sub-axis is not affine in the flat index).
SubAxis flatten(const AxisLayout& axis);
// The coarsest common refinement of two layouts of one axis (or tensor): the
// union of both radices when one divides the other's strides, else both
// flattened.
AxisLayout refine(const AxisLayout& a, const AxisLayout& b);
Layout refine(const Layout& a, const Layout& b);
// The layout of a reshape of a tensor with layout `in` to `out`: the sub-axes
// regrouped, split where an output axis ends inside one; output axes that no
// split can align are cut at every position.
Layout reshape(const Layout& in, const Shape& out);

// A box of a layout: one interval [lo, hi) per sub-axis (same nesting as the
// layout).
struct Interval {
  int64_t lo = 0, hi = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};
using SubBox = std::vector<std::vector<Interval>>;

// Every box of the layout (none when a sub-axis is empty), in row-major
// order of the intervals.
std::vector<SubBox> boxes_of(const Layout& layout);
// The positions that decide a box: its corner, then the corner moved by one
// along each sub-axis on which the box has more than one position.
std::vector<std::vector<int64_t>> deciding_positions(const Layout& layout, const SubBox& box);
// The box's positions as boxes of contiguous ranges per axis:
// (starts, ends) pairs.
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> contiguous_pieces(
    const Layout& layout, const SubBox& box);

}  // namespace tso::verifier
