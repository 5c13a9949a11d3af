// The dynamic part of an import (internal to frontend/; onnx.h's DynamicPart):
// the nodes kept as ONNX after the graph because their shapes are known only
// when the model runs. A node joins it when it holds a subgraph (If, Loop,
// Scan), when ONNX's shape inference leaves one of its output shapes unknown
// with its inputs' static types and constant values (NonZero, NonMaxSuppression,
// a TopK of a computed k), or when it reads a value the part computes. What
// the part reads of the graph is written with it: constants as its own
// initializers, computed tensors as graph outputs that export does not list.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "frontend/onnx.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

bool has_subgraph(const onnx::NodeProto& n);

// The names the node's subgraphs read from the graphs around the node, each
// once, in the order first read (a subgraph may read any value of an
// enclosing graph by name; names its own nodes, inputs or initializers
// define, or those of a subgraph around it, are not among them).
std::vector<std::string> outer_reads(const onnx::NodeProto& n);

class DynamicPartBuilder {
 public:
  // Whether `n` joins the part by itself: it holds a subgraph, or reads a
  // value the part computes.
  bool takes(const onnx::NodeProto& n) const;
  bool computes(const std::string& value) const { return computed_.count(value) > 0; }
  bool empty() const { return part_.node_size() == 0; }

  // Appends `n` (in a topological order: after the nodes of the part it reads).
  void add(const onnx::NodeProto& n);

  // The values of the graph the part reads, each once, in the order first read.
  const std::vector<std::string>& reads() const { return reads_; }
  // A read value that is a constant: it becomes an initializer of the part.
  void add_constant(const std::string& name, const WeightData& data);
  // A read value the graph computes: the graph outputs it.
  void add_computed(const std::string& name) { computed_reads_.push_back(name); }

  // The part, with the outputs of `g` (the model's graph) in their order.
  DynamicPart finish(const onnx::GraphProto& g);

 private:
  onnx::GraphProto part_;
  std::unordered_set<std::string> computed_;  // outputs of the part's nodes
  std::vector<std::string> reads_;
  std::unordered_set<std::string> read_set_;
  std::vector<std::string> computed_reads_;
};

}  // namespace tso::onnx_frontend
