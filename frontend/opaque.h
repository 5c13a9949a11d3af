// Opaque nodes (internal to frontend/): an ONNX node the IR lacks is kept as
// an `opaque` IR node whose payload is a NodeProto holding the original
// attributes and the positions of its inputs and outputs, so that export
// writes the node back unchanged. Output types come from the ONNX library's
// shape inference on the node alone, with its inputs' static types and
// constant values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "frontend/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// Input i of the node: its static type, and its value when constant.
struct OpaqueInput {
  TensorType type;
  const HostTensor* value = nullptr;
};

struct OpaqueOutputs {
  std::vector<std::optional<TensorType>> types;  // null entries for absent outputs
  // Set when ONNX's shape inference ran and left this output's shape unknown
  // (its extents depend on the data: NonZero, a TopK of a computed k), and
  // `declared` gives no static type for it; `types` is then empty.
  std::string dynamic;
};

// The static types of the node's outputs, from ONNX's shape inference or else
// `declared` (the model's own value_info, by name); an Error when neither gives
// one and inference did not run (a node the checker refuses, an operator ONNX
// does not know) or left the element type unknown.
Expected<OpaqueOutputs> infer_opaque_outputs(
    const onnx::NodeProto& node, const std::vector<std::optional<OpaqueInput>>& inputs,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opsets,
    const std::map<std::string, TensorType>& declared);

// The payload: attributes, with "" for absent and "$" for present inputs and
// outputs (IR arguments fill the "$" positions in order on export).
std::string opaque_payload(const onnx::NodeProto& node);

// The NodeProto of an opaque IR node, with its input and output names.
Expected<onnx::NodeProto> opaque_node_proto(const Node& node, const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs);

}  // namespace tso::onnx_frontend
