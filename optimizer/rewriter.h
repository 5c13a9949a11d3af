// Applying a match: the rule's target side is built against the tensors the
// match bound (a Replacement, a few nodes), and then spliced into a new
// graph in place of the matched nodes. The input graph is never modified.
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "optimizer/graph_index.h"
#include "optimizer/matcher.h"

namespace tso::opt {

// A tensor of a Replacement: a graph tensor (node >= 0) or result `output`
// of target node k, encoded as node = -1 - k.
inline bool is_target_ref(TensorRef r) { return r.node < 0; }
inline int target_index(TensorRef r) { return -1 - r.node; }

struct Replacement {
  const CompiledRule* rule = nullptr;
  std::vector<int> removed;         // the matched graph nodes, ascending
  std::vector<Node> nodes;          // the target's operators, types inferred
  std::vector<TensorRef> outputs;   // per pattern output, the target tensor
  std::vector<TensorRef> replaced;  // per pattern output, the graph tensor it replaces
  int correction_boxes = 0;         // a region rule's corrected boxes here
  int64_t correction_elements = 0;  // and the output elements they recompute
};

// Builds the target side for `m`. Fails (the match is then skipped) when the
// target is not shape-valid at the bound types or its outputs' types differ
// from the tensors they replace. A region rule's target is its instance at
// the bound types, decided and corrected there (region_rule.h). Target nodes are named after the
// source node whose output they replace, or the root's name for internal ones.
Expected<Replacement> build_replacement(const Graph& g, const Match& m);

// The type of a Replacement tensor.
const TensorType& replacement_type(const Graph& g, const Replacement& r, TensorRef t);

// The graph with the replacement spliced in: matched nodes removed, users of
// replaced tensors reading the target's tensors, operators nothing uses any
// more dropped, node order topological (the target placed where the first
// matched node was, unless a variable it reads comes later). `ids` are the
// tensor ids of `g`; the result carries those of the new graph.
struct Rewritten {
  Graph graph;
  TensorIds ids;
  std::vector<int> new_index;  // per node of `g`, its index in `graph`; -1 when gone
};
Expected<Rewritten> apply_replacement(const Graph& g, const TensorIds& ids, const Replacement& r);

// The tensor ids of the replacement's target nodes (TensorIds semantics) and
// the change of the graph hash the replacement makes.
std::vector<std::vector<uint64_t>> target_ids(const Replacement& r, const TensorIds& ids);
uint64_t hash_delta(const Graph& g, const GraphIndex& index, const TensorIds& ids,
                    const Replacement& r);
// Whether hash_delta depends only on the matched nodes and their readers:
// every replacing tensor is a distinct target tensor, which keeps the id of
// the tensor it replaces. Otherwise readers and graph outputs see new ids.
bool hash_delta_is_local(const Replacement& r);

// The structural hash of a graph under these tensor ids.
uint64_t graph_hash(const Graph& g, const TensorIds& ids);

}  // namespace tso::opt
