#include "optimizer/graph_index.h"

#include <algorithm>

namespace tso::opt {

TensorIds::TensorIds(const Graph& g) {
  std::vector<uint64_t> h = node_hashes(g);
  for (int i = 0; i < g.size(); ++i) {
    uint64_t buf[16];
    std::vector<uint64_t> big;
    size_t k = g.node(i).outs.size();
    uint64_t* out = buf;
    if (k > 16) {
      big.resize(k);
      out = big.data();
    }
    for (size_t j = 0; j < k; ++j) out[j] = hash_mix(h[i], j);
    push({out, k});
  }
}

void TensorIds::push(std::span<const uint64_t> node_ids) {
  ids_.insert(ids_.end(), node_ids.begin(), node_ids.end());
  offset_.push_back(static_cast<int>(ids_.size()));
}

uint64_t local_hash(const Node& n, std::span<const uint64_t> arg_ids) {
  uint64_t x = hash_mix(0x10ca1, static_cast<uint64_t>(n.op));
  if (n.op == Op::Input || n.op == Op::Weight)
    for (unsigned char c : n.name) x = hash_mix(x, c);
  x = hash_mix(x, hash_of(n.attrs));
  for (const TensorType& t : n.outs) x = hash_mix(x, hash_of(t));
  for (uint64_t a : arg_ids) x = hash_mix(x, a);
  return x;
}

uint64_t local_hash(const Node& n, const TensorIds& ids) {
  uint64_t buf[8];
  std::vector<uint64_t> big;
  uint64_t* a = buf;
  if (n.args.size() > 8) {
    big.resize(n.args.size());
    a = big.data();
  }
  for (size_t k = 0; k < n.args.size(); ++k) a[k] = ids.id(n.args[k]);
  return local_hash(n, {a, n.args.size()});
}

uint64_t node_term(uint64_t local) { return local * 0xff51afd7ed558ccdull + 1; }

uint64_t outputs_term(const Graph& g, const TensorIds& ids) {
  uint64_t out = 0x6a09;
  for (const GraphOutput& o : g.outputs()) {
    for (unsigned char c : o.name) out = hash_mix(out, c);
    out = hash_mix(out, ids.id(o.ref));
  }
  return out;
}

bool foldable(Op op) { return op != Op::Input && op != Op::Opaque; }

GraphIndex::GraphIndex(const Graph& g)
    : users(g.size()), is_output(g.size(), 0), constant(weight_only_nodes(g)) {
  for (int i = 0; i < g.size(); ++i)
    for (const TensorRef& a : g.node(i).args) {
      std::vector<int>& u = users[a.node];
      if (u.empty() || u.back() != i) u.push_back(i);
    }
  for (const GraphOutput& o : g.outputs()) is_output[o.ref.node] = 1;
}

bool GraphIndex::used_outside(const Graph& g, TensorRef t, std::span<const int> inside) const {
  if (is_output[t.node])
    for (const GraphOutput& o : g.outputs())
      if (o.ref == t) return true;
  for (int u : users[t.node]) {
    if (std::binary_search(inside.begin(), inside.end(), u)) continue;
    for (const TensorRef& a : g.node(u).args)
      if (a == t) return true;
  }
  return false;
}

}  // namespace tso::opt
