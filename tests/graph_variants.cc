#include "tests/graph_variants.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/rng.h"

namespace tso::testing {
namespace {

bool is_graph_input(const Node& n) { return n.op == Op::Input || n.op == Op::Weight; }

// A random topological order: Kahn's algorithm taking a random ready node.
std::vector<int> random_order(const Graph& g, Rng& rng) {
  std::vector<int> pending(g.size(), 0);
  std::vector<std::vector<int>> readers(g.size());
  for (int i = 0; i < g.size(); ++i)
    for (const TensorRef& a : g.node(i).args) {
      ++pending[i];
      readers[a.node].push_back(i);
    }
  std::vector<int> ready, order;
  for (int i = 0; i < g.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    std::swap(ready[rng.below(ready.size())], ready.back());
    int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int r : readers[i])
      if (--pending[r] == 0) ready.push_back(r);
  }
  return order;
}

// `g` rebuilt node by node through GraphBuilder::add, so that every
// operator's types are inferred again after `change` edited its node (given
// with its arguments still in `g`'s numbering). nullopt when inference or
// the checker rejects the result.
template <class Change>
std::optional<Graph> rebuild(const Graph& g, Change change) {
  GraphBuilder b(g.name());
  std::vector<int> at(g.size());
  for (int i = 0; i < g.size(); ++i) {
    Node n = g.node(i);
    change(i, &n);
    for (TensorRef& a : n.args) {
      a.node = at[a.node];
      if (a.output >= static_cast<int>(b.node(a.node).outs.size())) return std::nullopt;
    }
    Expected<std::vector<TensorRef>> refs =
        n.op == Op::Input    ? std::vector<TensorRef>{b.input(n.name, n.outs[0])}
        : n.op == Op::Weight ? std::vector<TensorRef>{b.weight(n.name, n.outs[0])}
        : n.op == Op::Opaque ? b.add_opaque(n.args, n.attrs, n.outs, n.name)
                             : b.add(n.op, n.args, n.attrs, n.name);
    if (!refs.ok()) return std::nullopt;
    at[i] = refs->front().node;
  }
  for (const GraphOutput& o : g.outputs()) {
    if (o.ref.output >= static_cast<int>(b.node(at[o.ref.node]).outs.size())) return std::nullopt;
    b.output(o.name, {at[o.ref.node], o.ref.output});
  }
  Expected<Graph> out = b.finish();
  if (!out.ok()) return std::nullopt;
  return std::move(out).value();
}

std::optional<Graph> try_near_miss(const Graph& g, NearMiss kind, Rng& rng) {
  std::vector<int> nodes;  // the nodes this kind can change
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    bool fits = kind == NearMiss::kAttribute  ? !n.attrs.empty()
                : kind == NearMiss::kSwapArgs ? n.args.size() >= 2
                : kind == NearMiss::kMoveEdge ? !n.args.empty()
                                              : is_graph_input(n);
    if (fits) nodes.push_back(i);
  }
  if (nodes.empty()) return std::nullopt;
  const int target = rng.pick(nodes);
  const Node& n = g.node(target);
  Node edited = n;
  switch (kind) {
    case NearMiss::kAttribute: {
      const auto& [key, value] = n.attrs.entries()[rng.below(n.attrs.entries().size())];
      edited.attrs.set(key, changed_value(value, rng));
      break;
    }
    case NearMiss::kSwapArgs: {
      int k = rng.below(n.args.size()), l = rng.below(n.args.size());
      if (n.args[k] == n.args[l]) return std::nullopt;
      std::swap(edited.args[k], edited.args[l]);
      break;
    }
    case NearMiss::kMoveEdge: {
      int k = rng.below(n.args.size());
      std::vector<TensorRef> same_type;
      for (int j = 0; j < target; ++j)
        for (int o = 0; o < static_cast<int>(g.node(j).outs.size()); ++o)
          if (TensorRef r{j, o}; r != n.args[k] && g.type(r) == g.type(n.args[k]))
            same_type.push_back(r);
      if (same_type.empty()) return std::nullopt;
      edited.args[k] = rng.pick(same_type);
      break;
    }
    case NearMiss::kRenameInput:
      edited.name += "'";
      break;
  }
  return rebuild(g, [&](int i, Node* node) {
    if (i == target) *node = edited;
  });
}

}  // namespace

AttrValue changed_value(const AttrValue& v, Rng& rng) {
  struct Change {
    Rng& rng;
    AttrValue operator()(int64_t i) const { return i == 0 || i == 1 ? 1 - i : i + 1; }
    AttrValue operator()(std::vector<int64_t> v) const {
      if (v.empty()) return std::vector<int64_t>{1};
      v[rng.below(v.size())] += 1;  // not -1: a negative axis could normalize back
      return v;
    }
    AttrValue operator()(double d) const { return std::isfinite(d) ? d + 0.25 : 0.5; }
    AttrValue operator()(Act a) const {
      return static_cast<Act>((static_cast<int>(a) + 1) % kNumActs);
    }
    AttrValue operator()(Padding p) const {
      if (p.mode == Padding::kExplicit && rng.chance(50)) {
        p.pads[rng.below(4)] ^= 1;
      } else {
        p.mode = static_cast<Padding::Mode>((p.mode + 1) % 3);
      }
      return p;
    }
    AttrValue operator()(const std::string& s) const { return s + "x"; }
  };
  return std::visit(Change{rng}, v);
}

Graph reordered(const Graph& g, uint64_t seed) {
  Rng rng(seed);
  GraphBuilder b("reordered" + std::to_string(rng.below(1000)));
  std::vector<int> at(g.size());
  for (int i : random_order(g, rng)) {
    Node n = g.node(i);
    for (TensorRef& a : n.args) a.node = at[a.node];
    if (!is_graph_input(n)) n.name = "v" + std::to_string(rng.below(1000));
    n.data = nullptr;
    at[i] = b.add_node(std::move(n)).node;
  }
  for (const GraphOutput& o : g.outputs()) b.output(o.name, {at[o.ref.node], o.ref.output});
  Expected<Graph> out = b.finish();
  TSO_CHECK(out.ok(), "a reordered graph was rejected: " + out.error().message);
  return std::move(out).value();
}

std::string_view near_miss_name(NearMiss kind) {
  switch (kind) {
    case NearMiss::kAttribute:
      return "attribute";
    case NearMiss::kSwapArgs:
      return "swap-args";
    case NearMiss::kMoveEdge:
      return "move-edge";
    case NearMiss::kRenameInput:
      return "rename-input";
  }
  return "?";
}

std::optional<Graph> near_miss(const Graph& g, NearMiss kind, uint64_t seed) {
  Rng rng(seed);
  for (int attempt = 0; attempt < 20; ++attempt)
    if (std::optional<Graph> m = try_near_miss(g, kind, rng)) return m;
  return std::nullopt;
}

}  // namespace tso::testing
