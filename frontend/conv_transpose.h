// ConvTranspose (the decoders of U-Nets and GANs, the upsampling of vocoders)
// as the IR's data movement and conv2d (internal to frontend/).
//
// A transposed convolution of stride s is a plain convolution of stride 1
// over the input spread by the stride (s - 1 zeros between neighbours: a
// unit axis beside each spatial axis, padded with s - 1 zeros and merged
// back), padded by (kernel extent - 1 - pad) on each side, the end also by
// output_padding, with the kernel flipped along its spatial axes and its
// input and output channels exchanged within each group. A pad larger than
// the kernel's extent crops instead. Every step is exact: the zeros add
// nothing, so the result is ONNX's sum, term for term. Without groups or
// dilation the sub-pixel form, which multiplies no inserted zero, runs
// instead (conv_transpose.cc).
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// 1-D and 2-D ConvTranspose with constant weights, any auto_pad, pads or
// output_shape; computed weights and 3-D stay opaque, saying why. An error for attributes of the
// wrong length or weights whose shape does not match the input's channels.
Expected<Mapped> map_conv_transpose(NodeContext& ctx);

}  // namespace tso::onnx_frontend
