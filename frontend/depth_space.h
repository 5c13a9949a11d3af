// DepthToSpace and SpaceToDepth (internal to frontend/): super-resolution
// networks upsample by a pixel shuffle (ESPCN, Real-ESRGAN, SwinIR: torch's
// pixel_shuffle exports as DepthToSpace in CRD mode), detectors downsample by
// its inverse. Each is a reshape that splits the blocks out, a transpose that
// interleaves them and a reshape that merges them.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_depth_space(NodeContext& ctx);

}  // namespace tso::onnx_frontend
