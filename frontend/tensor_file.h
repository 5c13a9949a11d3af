// Tensors in the ONNX test-data convention: one serialized TensorProto per
// file (input_0.pb, ..., output_0.pb). Used by `tso run --inputs/--outputs`
// and the conformance tests.
#pragma once

#include <span>
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
// Writes the file whole or not at all (core/atomic_file.h).
Status write_tensor_file(const std::string& path, const NamedTensor& tensor);
// Writes tensors[k] to paths[k], each file whole: all are written to their
// temporaries before the first is renamed, so a failure changes none of them
// and an interruption can land only between two renames.
Status write_tensor_files(std::span<const std::string> paths, std::span<const NamedTensor> tensors);

}  // namespace tso
