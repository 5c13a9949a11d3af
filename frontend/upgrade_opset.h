// Models of operator sets 1 to 10 (the ONNX model zoo's classic files, the
// PyTorch exports of 2018 and 2019): ONNX's version converter rewrites them
// at opset 11, the oldest the operator mappings read (onnx.h), before import.
// Each adapter it applies is the ONNX project's own statement of how an
// operator changed between versions (Upsample to Resize, Slice's attributes
// to inputs, Pad's and Clip's attributes to inputs, BatchNormalization's
// `spatial`, ...).
#pragma once

#include <cstdint>

#include "core/error.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// Rewrites `model`, whose default operator set is `opset`, at opset
// `target`. An error says what the converter could not convert (an operator
// it has no adapter for; a broadcast of opset 6 or older whose operands'
// shapes the file does not give, which the adapter to opset 7 needs) and
// leaves `model` as it was.
Status upgrade_opset(onnx::ModelProto& model, int64_t opset, int64_t target);

}  // namespace tso::onnx_frontend
