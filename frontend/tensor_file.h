// Tensors in the ONNX test-data convention: one serialized TensorProto per
// file (input_0.pb, ..., output_0.pb). Used by `tso run --inputs/--outputs`
// and the conformance tests.
#pragma once

#include <string>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

struct NamedTensor {
  std::string name;  // the TensorProto's name; may be empty
  WeightData value;
};

// Errors name the file.
Expected<NamedTensor> read_tensor_file(const std::string& path);
// Writes through a temporary file renamed into place.
Status write_tensor_file(const std::string& path, const NamedTensor& tensor);

}  // namespace tso
