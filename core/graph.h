// The tso graph: a value. A flat vector of nodes in topological order, each
// referencing its arguments by (node index, output index); graph inputs
// (data and weights) and constants are source nodes; named outputs point at
// node outputs. Every tensor's type is inferred when its node is added.
//
// Graphs are built with GraphBuilder and never change afterwards: a rewrite
// builds a new graph. Equality and hashing are structural: they ignore the
// order of independent nodes and the names of intermediate nodes, and they
// see graph inputs by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/types.h"

namespace tso {

struct TensorRef {
  int32_t node = -1;
  int32_t output = 0;
  friend bool operator==(const TensorRef&, const TensorRef&) = default;
};

// The stored values of a weight: row-major, little-endian elements of `type`.
struct WeightData {
  TensorType type;
  std::vector<std::byte> bytes;
};

struct Node {
  Op op = Op::Input;
  std::vector<TensorRef> args;
  Attrs attrs;                    // complete: every attribute of `op`, defaults filled in
  std::vector<TensorType> outs;   // inferred; recorded at import for opaque nodes
  // Input and weight nodes: the tensor's name, part of the graph's identity.
  // Other nodes: where the node came from (e.g. the ONNX node name), used in
  // messages only.
  std::string name;
  std::shared_ptr<const WeightData> data;  // weights only; null when not loaded
};

struct GraphOutput {
  std::string name;
  TensorRef ref;
  friend bool operator==(const GraphOutput&, const GraphOutput&) = default;
};

class Graph {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  const TensorType& type(TensorRef r) const { return nodes_[r.node].outs[r.output]; }

  // Indices of input and weight nodes, in node order (the order of the
  // model's inputs on export).
  std::vector<int> input_nodes() const;
  // Number of nodes that are not graph inputs or constants.
  int num_operators() const;

  const std::string& name() const { return name_; }

  // Gives up the graph's references to its weights' stored values: every
  // weight node's `data` becomes null. For a caller done with them, such as
  // an executor that has its own copies
  // (cpu::Executor::create_releasing_weights).
  void release_weight_data();

  friend bool operator==(const Graph& a, const Graph& b);

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<Node> nodes_;
  std::vector<GraphOutput> outputs_;
};

// Structural hash: equal graphs hash equal, whatever the order of their
// independent nodes.
uint64_t structural_hash(const Graph& g);
// Per-node structural hashes (Merkle: operator, attributes and the hashes of
// the arguments); the building block for incremental hashing.
std::vector<uint64_t> node_hashes(const Graph& g);

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name = "main") { g_.name_ = std::move(graph_name); }

  // Graph inputs. Names must be unique among inputs; `finish` reports clashes.
  TensorRef input(std::string name, TensorType type);
  TensorRef weight(std::string name, TensorType type,
                   std::shared_ptr<const WeightData> data = nullptr);

  // Adds an operator: completes its attributes with defaults, checks arity
  // and attributes, and infers its output types. The error names the node
  // (by `name` when given) and shows the offending shapes.
  Expected<std::vector<TensorRef>> add(Op op, std::vector<TensorRef> args, Attrs attrs = {},
                                       std::string name = {});
  // `add` for single-output operators.
  Expected<TensorRef> add1(Op op, std::vector<TensorRef> args, Attrs attrs = {},
                           std::string name = {});
  // An opaque node with output types given by the caller.
  Expected<std::vector<TensorRef>> add_opaque(std::vector<TensorRef> args, Attrs attrs,
                                              std::vector<TensorType> outs,
                                              std::string name = {});
  // Appends a node whose attributes and types are already complete (copying
  // a node from another graph); its args must refer to this builder's nodes.
  TensorRef add_node(Node node);

  void output(std::string name, TensorRef ref);

  const TensorType& type(TensorRef r) const { return g_.type(r); }
  const Node& node(int i) const { return g_.nodes_[i]; }
  int size() const { return g_.size(); }

  // Drops operators no output depends on (inputs and weights stay), then
  // checks the graph. The builder is left empty.
  Expected<Graph> finish();

 private:
  Graph g_;
};

// A short description of a node for error messages: its name or index, and
// its operator, e.g. "node 'conv1' (conv2d)" or "node %12 (add)".
std::string describe_node(const Graph& g, int index);

// The FLOPs node `index` computes (core/shape_inference.h's count: a
// multiply-accumulate is 2, an elementwise operator 1 per output element,
// data movement and opaque nodes 0).
int64_t node_flops(const Graph& g, int index);

// Per node, whether it is weight-only: a weight or a constant, or an
// operator other than an input or an opaque one on weight-only arguments
// alone (its value is the same on every run).
std::vector<char> weight_only_nodes(const Graph& g);

}  // namespace tso
