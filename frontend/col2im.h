// Col2Im (opset 18, torch's F.fold under torch.export) as the IR's data
// movement and adds (internal to frontend/).
//
// Col2Im scatters the columns of an unfolded image back onto it: input
// [N, C * K, L] holds, for each of the L block positions and each of the K
// elements of a block, one value per channel, and the output [N, C, image...]
// is the sum, at every pixel, of the values the blocks covering it put there.
// The IR has no scatter, so each of the K block elements becomes one term:
// the slice of its L values per channel, reshaped to the grid of block
// positions, spread by the stride (a unit axis beside each grid axis, padded
// with stride - 1 zeros and merged back), and padded or cropped into place in
// the image at its offset (element index times dilation, less the image's
// begin padding). The output is the sum of the K terms; a term that lies
// wholly in the image padding is left out. VOLO's outlook attention folds
// 3x3 blocks at stride 2.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// Col2Im with constant image and block shapes; an Error when the input's
// shape does not match them (the channels not a multiple of the block's
// elements, or a number of blocks other than the padded image holds).
Expected<Mapped> map_col2im(NodeContext& ctx);

}  // namespace tso::onnx_frontend
