// 3-D convolution and pooling (internal to frontend/): torchvision's video
// classifiers (R3D, MC3, R(2+1)D, S3D) convolve and pool over [N, C, T, H, W].
// The IR's window operators are 2-D, so a 3-D one is written over frames:
//  - Conv pointwise in space (R(2+1)D's and S3D's temporal convolutions,
//    1x1x1 projections): one conv2d over [N, C, T, H W] with a (kt, 1) kernel.
//  - Other Convs: the frames move into the batch ([N, T, C, H, W], temporally
//    padded with zeros), and each temporal tap k of the kernel is a conv2d of
//    its 2-D kernel slice over the frames it reads (a slice along T, strided
//    by the temporal stride, reshaped to [N T', C, H, W]); the taps' results
//    are summed, the bias added once, and the frames moved back. Exact up to
//    the order of the sums.
//  - MaxPool and AveragePool: two 2-D poolings, every frame over (H, W) as
//    [N, C T, H, W], then every position over (T, 1) as [N, C, T, H' W']: a
//    box window's max is the max of its frames' maxima, and its count (with
//    or without the padding) the product of the two windows' counts, ceil
//    mode included.
// Weights computed in the graph and dilated pooling stay opaque.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_conv_3d(NodeContext& ctx);
Expected<Mapped> map_pool_3d(NodeContext& ctx);

}  // namespace tso::onnx_frontend
