// What the matcher and the search need to know about a graph beyond its
// nodes: the users of every node, which nodes are graph outputs, which are
// weight-only (computable before run time, so folded after the search and
// free in the cost), and the identity of every tensor used by the
// incremental hash.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/graph.h"

namespace tso::opt {

// Tensor identities for the incremental structural hash. In the input graph
// a tensor's id is its node's Merkle hash (core node_hashes) mixed with the
// output index. A rewrite gives each target output the id of the source
// output it replaces (the two compute the same function) and each internal
// target node a Merkle id over its arguments' ids; so two rewrites applied
// in either order give the same ids, and a rewrite changes the graph hash
// only through the nodes it removes and adds.
class TensorIds {
 public:
  TensorIds() = default;
  explicit TensorIds(const Graph& g);  // Merkle ids of a fresh graph

  uint64_t id(TensorRef r) const { return ids_[offset_[r.node] + r.output]; }
  std::span<const uint64_t> ids(int node) const {
    return {ids_.data() + offset_[node], static_cast<size_t>(offset_[node + 1] - offset_[node])};
  }
  void push(std::span<const uint64_t> node_ids);  // appends the next node's ids
  int size() const { return static_cast<int>(offset_.size()) - 1; }

 private:
  std::vector<uint64_t> ids_;
  std::vector<int> offset_{0};
};

// A node's contribution to the graph hash: operator, attributes, result
// types and argument ids (its own ids excluded).
uint64_t local_hash(const Node& n, const TensorIds& ids);
uint64_t local_hash(const Node& n, std::span<const uint64_t> arg_ids);
// The graph hash: a sum over nodes, so it updates by subtraction and
// addition; graph outputs enter by name and id.
uint64_t node_term(uint64_t local);
uint64_t outputs_term(const Graph& g, const TensorIds& ids);

struct GraphIndex {
  std::vector<std::vector<int>> users;  // per node, the nodes reading any of its results
  std::vector<char> is_output;          // per node, whether a graph output names one of its results
  std::vector<char> constant;           // per node, weight-only (a weight, a constant, or an operator on those)

  explicit GraphIndex(const Graph& g);
  // Whether tensor `t` has a user outside `inside` (a sorted list of nodes),
  // or is a graph output.
  bool used_outside(const Graph& g, TensorRef t, std::span<const int> inside) const;
};

// Whether a node of this operator on weight-only arguments is itself
// weight-only (every operator but graph inputs and opaque ones).
bool foldable(Op op);

}  // namespace tso::opt
