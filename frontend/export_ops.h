// The mapping of IR operators onto ONNX nodes (internal to frontend/): the
// exporter names every tensor, then asks `export_node` to write each
// operator as one or more NodeProtos.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "frontend/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

class ExportContext {
 public:
  ExportContext(const Graph& g, int64_t opset, onnx::GraphProto* out) : g_(g), opset_(opset), out_(out) {}

  const Graph& graph() const { return g_; }
  int64_t opset() const { return opset_; }
  // ONNX names of each node's outputs, filled by the exporter.
  std::vector<std::vector<std::string>>& names() { return names_; }
  const std::string& name_of(TensorRef r) const { return names_[r.node][r.output]; }
  // A name no other tensor has, derived from `base`.
  std::string fresh(const std::string& base);
  // Adds an initializer holding `value`; returns its name.
  std::string constant(const std::string& base, const HostTensor& value);
  // Adds a node named `name`, or `name_1`, `name_2`, ... when a node already
  // has that name: ONNX Runtime rejects models with duplicate node names
  // (an IR node imported from one ONNX node, e.g. a cropping Pad imported
  // as slice + pad, carries that node's name twice).
  onnx::NodeProto* add_node(const std::string& op_type, std::vector<std::string> inputs,
                            std::vector<std::string> outputs, const std::string& name);
  // Takes the names of nodes written as they are (a dynamic part's), so that
  // no other tensor or node gets them.
  void reserve(const onnx::NodeProto& node);
  void reserve(const std::string& tensor_name) { taken_.insert(tensor_name); }

 private:
  const Graph& g_;
  int64_t opset_;
  onnx::GraphProto* out_;
  std::vector<std::vector<std::string>> names_;
  std::unordered_set<std::string> taken_;       // tensor names
  std::unordered_set<std::string> node_names_;  // node names
};

// Writes node `index` of the graph (an operator, not an input or weight).
Status export_node(ExportContext& ctx, int index);

// The values of a constant operator (const_ones, const_eye, ...).
HostTensor constant_value(const Node& node);

}  // namespace tso::onnx_frontend
