// Internal to verifier/: the layouts (box_layout.h) of a program's outputs,
// derived from each operator's index arithmetic, inputs first: graph inputs
// are cut only at their ends; a convolution cuts where a tap crosses a cut of
// its input (padding borders included), a concat at its seams, a pad at its
// borders, a reshape regroups sub-axes; a position-wise operator keeps its
// argument's layout. The operators of regions.h are supported; any other is
// an error naming the node.
#pragma once

#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "verifier/box_layout.h"

namespace tso::verifier {

// The layout of every output of `g`, in order.
Expected<std::vector<Layout>> output_layouts(const Graph& g);

// One spatial axis (d = 0 for H, 1 for W) of a conv2d or avgpool node whose
// input has shape `x`: output position o reads input o * stride + j * dil -
// pad_lo for taps j in [0, k); the input is padded by pad_lo before and
// pad_hi after.
struct Window {
  int64_t k = 1, stride = 1, dil = 1, pad_lo = 0, pad_hi = 0;
};
Window window(const Node& node, const Shape& x, const Shape& w, int d);

}  // namespace tso::verifier
