// How the nodes of an ONNX graph link, for the finders of multi-node
// patterns the importer reads as one IR operator (erf_gelu.h,
// decomposed_layernorm.h; internal to frontend/).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// Whether `n` is the default-domain operator `type` with `inputs` inputs and
// one output.
bool is_node(const onnx::NodeProto& n, const char* type, int inputs);

// The other input of the binary node `n` when one of its inputs is `name`
// (input 0 only unless `commutative`); empty when neither is, or both are.
std::string other_input(const onnx::NodeProto& n, const std::string& name, bool commutative);

class NodeLinks {
 public:
  // `uses` counts the readers of each name, an input slot each, a graph
  // output counting as one.
  NodeLinks(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses);

  // The node computing `name`, or -1 (a graph input or initializer).
  int producer(const std::string& name) const;
  // The one node reading `name` in one input slot, or -1 (several readers,
  // or a graph output).
  int only_reader(const std::string& name) const;
  // The nodes reading `name`, once per input slot, when no graph output is
  // among its uses; else empty.
  std::vector<int> readers(const std::string& name) const;

 private:
  const std::unordered_map<std::string, int>& uses_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> readers_;
};

}  // namespace tso::onnx_frontend
