// LRN, local response normalization across channels (internal to frontend/):
// AlexNet, CaffeNet, ZFNet and GoogLeNet (the ONNX model zoo's classic
// files) normalize by it. ONNX defines
//   y = x / (bias + alpha / size * square_sum)^beta
// with square_sum at channel c the sum of x^2 over channels c - floor((size
// - 1) / 2) to c + ceil((size - 1) / 2), clipped to the tensor. The IR writes
// the window sum as an average pooling of x^2 over the channel axis with the
// padded positions counted (sum / size), on x^2 reshaped so that channels
// are the pooled height: mul, reshape, avgpool, reshape, mul, add, pow, div.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_lrn(NodeContext& ctx);

}  // namespace tso::onnx_frontend
