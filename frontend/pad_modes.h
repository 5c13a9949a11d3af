// Pad in reflect, edge and wrap modes (internal to frontend/): each padded
// axis becomes one gather whose constant indices name, for every output
// element, the input element it copies. Style transfer networks, CycleGAN's
// generators and super-resolution models pad by reflection before their
// convolutions; the IR's pad writes a constant only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// The input element output element `o` of a padded axis copies, for an
// axis of `n` >= 1 elements padded by `begin` in front: numpy.pad's rule,
// which ONNX's reference implementation follows. reflect mirrors about the
// first and last elements without repeating them (periodic for pads longer
// than the axis), edge repeats them, wrap continues from the other end.
int64_t padded_source(std::string_view mode, int64_t o, int64_t begin, int64_t n);

// `x` padded by `pads` (ONNX's layout: the begins of every axis, then the
// ends; each >= 0) in `mode` (reflect, edge or wrap). An axis of 0
// elements with a nonzero pad has nothing to copy and is an error.
Expected<Mapped> pad_by_gathers(NodeContext& ctx, TensorRef x, std::string_view mode,
                                const std::vector<int64_t>& pads);

}  // namespace tso::onnx_frontend
