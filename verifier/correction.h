// Correction kernels of partial transformations (PET): a mutant program that
// computes its source program's values except on a few boxes of its outputs
// (verifier/regions.h finds them) is made exact by recomputing just those
// boxes from the source program and writing them into the mutant's outputs.
//
// A box's recomputation is the source's operators on the slices of their
// inputs the box needs, derived backwards through each operator's index
// arithmetic (verifier/region_plan.h): a convolution's halo and the part of
// its padding the box's windows reach, the rows and columns of a product,
// the pieces of a concat; inputs and weights are sliced only where a box
// needs less than all of them. Each box is written with update_slice; the
// boxes of one output form a chain on the mutant's output.
#pragma once

#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "verifier/regions.h"

namespace tso::verifier {

// The mutant with every box of `wrong` recomputed from `source` and written
// into the mutant's output in place: a graph over the inputs of both
// programs (matched by name) with the mutant's outputs, which computes the
// source's values. Nodes of box k are named "correction/boxK/..." after the
// source node or the operator. An empty `wrong` returns the mutant itself.
// The programs must have outputs of equal types and agree on the types of
// inputs they share; each box must lie inside its output.
Expected<Graph> correct(const Graph& source, const Graph& mutant, const std::vector<Box>& wrong);

}  // namespace tso::verifier
