// Resize of a computed tensor in any mode by constant scales or sizes
// (internal to frontend/): separable, so each resized axis in turn is a sum
// over tap k of gather(x, index_k, axis) * weight_k, where output element o
// reads input element index_k[o] with weight weight_k[o] (resize_taps).
// Segmentation heads (torchvision's DeepLabV3, FCN and LR-ASPP, SegFormer)
// upsample bilinearly to the input's size; feature pyramids by 2.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"
#include "frontend/resize_plan.h"

namespace tso::onnx_frontend {

// The node's input 0 resized as `p` plans: one gather per tap and axis, a
// mul by the tap's weights unless they are all 1, an add per further tap;
// taps whose weights are all 0 left out. Opaque for an integer input in
// linear or cubic mode.
Expected<Mapped> map_resize_by_gathers(NodeContext& ctx, const ResizePlan& p);

}  // namespace tso::onnx_frontend
