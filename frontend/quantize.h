// QuantizeLinear and DequantizeLinear (internal to frontend/): the Q and DQ
// nodes of the int8 models ONNX Runtime's quantizer and PyTorch's export
// write in the QDQ format, a DQ on every quantized weight and a Q and a DQ
// around every quantized activation. They map to quantize_linear and
// dequantize_linear (core/ops.h) for u8 and i8 (and DQ of the i32 biases),
// per tensor or per axis, with a zero point of zeros where the node has
// none. Blocked quantization (opset 21's block_size), 16-bit, 4-bit and
// float8 types and f16 scales stay opaque.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_quantize(NodeContext& ctx);

}  // namespace tso::onnx_frontend
