// Operators of opsets 20 to 24 that the IR writes as several of its own
// (internal to frontend/): the exporters that target those opsets write one
// node where older ones wrote the chain.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// Gelu (opset 20): the IR's gelu, or with approximate = "tanh" (GPT-2's
// gelu_new) 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Expected<Mapped> map_gelu(NodeContext& ctx);

// Swish (opset 24): x sigmoid(alpha x).
Expected<Mapped> map_swish(NodeContext& ctx);

// RMSNormalization (opset 23, LLaMA's RMSNorm): x / sqrt(mean(x^2) + epsilon)
// times scale, the mean over the axes from `axis` on.
Expected<Mapped> map_rms_norm(NodeContext& ctx);

}  // namespace tso::onnx_frontend
