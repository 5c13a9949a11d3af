// Tile and nearest-neighbour Resize of computed tensors (internal to
// frontend/): both repeat each element along some axes, which the IR writes as
// a reshape that gives each repeated axis a unit axis beside it, an expand of
// the unit axes to the repeat counts, and a reshape that merges each pair.
// Tile puts the repeats outside an axis (x x x), an upsampling inside
// (each element r times in a row). GC ViT's global queries and XCiT's
// position encoding tile; HRNet's fuse layers upsample by 2, 4 and 8.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// Tile with constant repeats.
Expected<Mapped> map_tile(NodeContext& ctx);

// Resize with constant scales or sizes: in nearest mode by factors that
// multiply each axis by an integer, when the node's coordinate
// transformation and rounding pick input element o / r for output element o
// on every axis (as nn.Upsample's and F.interpolate's nearest modes do), a
// repeat; any other as gathers of its taps (resize_gather.h). Antialias,
// tf_crop_and_resize and keep_aspect_ratio_policy stay opaque.
Expected<Mapped> map_resize(NodeContext& ctx);

}  // namespace tso::onnx_frontend
