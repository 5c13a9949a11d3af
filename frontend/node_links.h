// How the nodes of an ONNX graph link, for the finders of multi-node
// patterns the importer reads as one IR operator (erf_gelu.h,
// decomposed_layernorm.h; internal to frontend/).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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

// The chains `at(i)` finds at each node i of `g`, in node order, less those
// that share a node (`last` or one of `inner`) with a chain taken before.
template <class Chain, class At>
std::vector<Chain> disjoint_chains(const onnx::GraphProto& g, At&& at) {
  std::vector<Chain> chains;
  std::unordered_set<int> claimed;
  for (int i = 0; i < g.node_size(); ++i) {
    std::optional<Chain> c = at(i);
    if (!c) continue;
    bool free = !claimed.count(c->last);
    for (int k : c->inner) free = free && !claimed.count(k);
    if (!free) continue;
    claimed.insert(c->last);
    claimed.insert(c->inner.begin(), c->inner.end());
    chains.push_back(std::move(*c));
  }
  return chains;
}

}  // namespace tso::onnx_frontend
