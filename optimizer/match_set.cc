#include "optimizer/match_set.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/post_ops.h"
#include "optimizer/rewriter.h"

namespace tso::opt {

namespace {

// The types of node `n`'s arguments, resolved by `type_of`.
template <typename TypeOf>
std::vector<TensorType> arg_types(const Node& n, TypeOf type_of) {
  std::vector<TensorType> in;
  in.reserve(n.args.size());
  for (const TensorRef& a : n.args) in.push_back(type_of(a));
  return in;
}

// The graph after a rewrite, as far as post-ops are concerned, before it is
// built: the target's nodes (TensorRefs with is_target_ref) beside the
// graph's, the replaced tensors read through the target's outputs.
class Spliced {
 public:
  Spliced(const MatchContext& g, const Replacement& rep) : g_(g), rep_(rep) {
    target_chain_.resize(rep.nodes.size());
    target_reads_.assign(rep.nodes.size(), 0);
    for (const Node& n : rep.nodes)
      for (const TensorRef& a : n.args)
        if (is_target_ref(a)) ++target_reads_[target_index(a)];
    for (size_t j = 0; j < rep.outputs.size(); ++j)
      if (is_target_ref(rep.outputs[j]) &&
          g.index.used_outside(g.graph, rep.replaced[j], rep.removed))
        outside_readers_.push_back({target_index(rep.outputs[j]), rep.replaced[j]});
  }

  // Target node k's status, the nodes before it known (call in order).
  std::optional<PostOp> target_post_op(int k, std::span<const TensorType> in,
                                       const std::vector<char>& constant) {
    const Node& n = rep_.nodes[k];
    std::optional<PostOp> p = as_post_op(
        n, in, [&](int a) { return chain_in_target(n.args[a], 1); },
        [&](int a) {
          const TensorRef r = n.args[a];
          return is_target_ref(r) ? constant[target_index(r)] != 0 : g_.index.constant[r.node] != 0;
        });
    target_chain_[k] = p                                         ? std::optional<Op>(p->anchor)
                       : is_post_op_anchor(n.op) && !constant[k] ? std::optional<Op>(n.op)
                                                                 : std::nullopt;
    return p;
  }

  // The status of graph node `u` (outside the match) reading a replaced
  // tensor, once it reads the target's output instead.
  std::optional<PostOp> reader_post_op(int u, std::span<const TensorType> in) const {
    const Node& n = g_.graph.node(u);
    return as_post_op(
        n, in,
        [&](int a) -> std::optional<Op> {
          for (size_t j = 0; j < rep_.replaced.size(); ++j) {
            if (!(rep_.replaced[j] == n.args[a])) continue;
            const TensorRef t = rep_.outputs[j];
            if (!is_target_ref(t)) return passed_chain(t, u);
            const int k = target_index(t);
            if (target_reads_[k] > 0 || !sole_reader(n.args[a], u)) return std::nullopt;
            return target_chain_[k];
          }
          return graph_chain(n.args[a], u);
        },
        [&](int a) { return g_.index.constant[n.args[a].node] != 0; });
  }

  // Records that graph node `u` ends the chain `anchor` (nullopt: none)
  // once rewritten, for the readers after it.
  void set_chain(int u, std::optional<Op> anchor) { changed_chain_[u] = anchor; }

 private:
  // The chain whose value `t` is, read `reads` times by target nodes and
  // nothing else.
  std::optional<Op> chain_in_target(TensorRef t, int reads) const {
    if (!is_target_ref(t)) {
      const int p = t.node;
      if (g_.index.is_output[p] || g_.graph.node(p).outs.size() != 1 || g_.index.constant[p])
        return std::nullopt;
      for (int u : g_.index.users[p])
        if (!std::binary_search(rep_.removed.begin(), rep_.removed.end(), u)) return std::nullopt;
      int target_reads = 0;
      for (const Node& n : rep_.nodes) target_reads += std::count(n.args.begin(), n.args.end(), t);
      if (target_reads != reads) return std::nullopt;
      if (is_post_op_anchor(g_.graph.node(p).op)) return g_.graph.node(p).op;
      std::optional<PostOp> up = post_op(g_.graph, g_.index, p);
      return up ? std::optional<Op>(up->anchor) : std::nullopt;
    }
    const int k = target_index(t);
    if (target_reads_[k] != reads) return std::nullopt;
    for (const auto& [node, replaced] : outside_readers_)
      if (node == k) return std::nullopt;
    return target_chain_[k];
  }

  // The chain whose value graph tensor `t` is, where the target passes it
  // on for a replaced tensor that graph node `u` reads: once the matched
  // nodes are gone, `u` may be its only reader (a concat and split that
  // undo each other, removed, leave a matmul's result to the add after
  // them).
  std::optional<Op> passed_chain(TensorRef t, int u) const {
    const int p = t.node;
    if (g_.index.is_output[p] || g_.graph.node(p).outs.size() != 1 || g_.index.constant[p])
      return std::nullopt;
    for (const Node& n : rep_.nodes)
      if (std::find(n.args.begin(), n.args.end(), t) != n.args.end()) return std::nullopt;
    std::vector<int> readers = g_.index.users[p];
    for (size_t j = 0; j < rep_.replaced.size(); ++j) {
      if (!(rep_.outputs[j] == t)) continue;
      const TensorRef r = rep_.replaced[j];
      if (g_.index.is_output[r.node])
        for (const GraphOutput& o : g_.graph.outputs())
          if (o.ref == r) return std::nullopt;
      readers.insert(readers.end(), g_.index.users[r.node].begin(), g_.index.users[r.node].end());
    }
    for (int r : readers) {
      if (std::binary_search(rep_.removed.begin(), rep_.removed.end(), r)) continue;
      int reads = 0;
      for (const TensorRef& a : g_.graph.node(r).args) reads += a == t || passes(a, t);
      if (reads > 0 && (r != u || reads != 1)) return std::nullopt;
    }
    if (is_post_op_anchor(g_.graph.node(p).op)) return g_.graph.node(p).op;
    std::optional<PostOp> up = post_op(g_.graph, g_.index, p);
    return up ? std::optional<Op>(up->anchor) : std::nullopt;
  }

  // Whether `a` is a replaced tensor for which the target passes on `t`.
  bool passes(TensorRef a, TensorRef t) const {
    for (size_t j = 0; j < rep_.replaced.size(); ++j)
      if (rep_.replaced[j] == a && rep_.outputs[j] == t) return true;
    return false;
  }

  // The chain whose value graph tensor `t` is, read by graph node `reader`
  // only, after the rewrite.
  std::optional<Op> graph_chain(TensorRef t, int reader) const {
    auto it = changed_chain_.find(t.node);
    if (it == changed_chain_.end()) return chain_of(g_.graph, g_.index, t, reader);
    return only_reader(g_.graph, g_.index, t, reader) ? it->second : std::nullopt;
  }

  // Whether graph node `u`, outside the match, is the only reader of `t`
  // (reading it once) once the matched nodes are gone.
  bool sole_reader(TensorRef t, int u) const {
    if (g_.index.is_output[t.node])
      for (const GraphOutput& o : g_.graph.outputs())
        if (o.ref == t) return false;
    for (int r : g_.index.users[t.node]) {
      if (r == u || std::binary_search(rep_.removed.begin(), rep_.removed.end(), r)) continue;
      const std::vector<TensorRef>& args = g_.graph.node(r).args;
      if (std::find(args.begin(), args.end(), t) != args.end()) return false;
    }
    const std::vector<TensorRef>& args = g_.graph.node(u).args;
    return std::count(args.begin(), args.end(), t) == 1;
  }

  const MatchContext& g_;
  const Replacement& rep_;
  std::vector<std::optional<Op>> target_chain_;  // per target node: its chain, if it ends one
  std::vector<int> target_reads_;                // per target node: reads by target nodes
  std::vector<std::pair<int, TensorRef>> outside_readers_;
  std::map<int, std::optional<Op>> changed_chain_;  // graph nodes whose chain the rewrite changes
};

// Predicted cost of the rewrite: target nodes (weight-only ones are free,
// as they fold away) minus the matched nodes, and, where the model costs
// post-ops apart, the change of the graph readers of the replaced tensors,
// whose chain the rewrite may make or break. `context` is set when the
// result depends on post-ops, and so on nodes beyond the match.
double cost_delta(const MatchContext& g, const Replacement& rep, bool* context) {
  const bool fuses = g.model.fuses();
  double d = 0;
  for (int n : rep.removed) {
    d -= node_cost(g.graph, g.index, g.model, n);
    if (fuses && post_op(g.graph, g.index, n)) *context = true;
  }
  Spliced spliced(g, rep);
  std::vector<char> constant(rep.nodes.size(), 0);
  std::vector<TensorType> in;
  for (size_t k = 0; k < rep.nodes.size(); ++k) {
    const Node& n = rep.nodes[k];
    bool c = foldable(n.op);
    in.clear();
    for (const TensorRef& a : n.args) {
      c = c && (is_target_ref(a) ? constant[target_index(a)] != 0 : g.index.constant[a.node] != 0);
      in.push_back(replacement_type(g.graph, rep, a));
    }
    constant[k] = c;
    if (c || is_source(n.op)) continue;
    std::optional<PostOp> p;
    if (fuses) p = spliced.target_post_op(static_cast<int>(k), in, constant);
    if (p) *context = true;
    d += p ? g.model.post_op_us(*p, n, in) : g.model.node_us(n, in);
  }
  if (!fuses) return d;
  // The graph readers of the replaced tensors, and downstream of them the
  // readers of every node whose chain changes.
  std::set<int> readers;
  auto add_readers = [&](int node) {
    for (int u : g.index.users[node])
      if (!std::binary_search(rep.removed.begin(), rep.removed.end(), u)) readers.insert(u);
  };
  for (const TensorRef& t : rep.replaced) add_readers(t.node);
  while (!readers.empty()) {
    const int u = *readers.begin();
    readers.erase(readers.begin());
    if (g.index.constant[u]) continue;
    const Node& n = g.graph.node(u);
    std::vector<TensorType> types = arg_types(n, [&](TensorRef a) { return g.graph.type(a); });
    std::optional<PostOp> before = post_op(g.graph, g.index, u);
    std::optional<PostOp> after = spliced.reader_post_op(u, types);
    if (!before && !after) continue;
    *context = true;
    d -= node_cost(g.graph, g.index, g.model, u);
    d += after ? g.model.post_op_us(*after, n, types) : g.model.node_us(n, types);
    const bool same =
        before && after && before->anchor == after->anchor && before->chain == after->chain;
    if (same || is_post_op_anchor(n.op)) continue;
    spliced.set_chain(u, after ? std::optional<Op>(after->anchor) : std::nullopt);
    add_readers(u);
  }
  return d;
}

ScoredMatch score(const MatchContext& g, const Match& m) {
  ScoredMatch s;
  s.match = m;
  // A rewrite inside the weight-only part of the graph does nothing the
  // folding after the search does not: it only adds graphs of equal cost
  // (reassociated concats of weights, ...) that the queue expands before any
  // graph a little costlier, such as the enlarged kernel a merge needs.
  if (std::all_of(m.nodes.begin(), m.nodes.end(), [&](int n) { return g.index.constant[n] != 0; }))
    return s;
  Expected<Replacement> rep = build_replacement(g.graph, m);
  if (!rep) return s;
  s.valid = true;
  bool context = false;
  s.cost_delta = cost_delta(g, *rep, &context);
  s.hash_delta = hash_delta(g.graph, g.index, g.ids, *rep);
  s.local = hash_delta_is_local(*rep) && !context;
  return s;
}

bool canonical_less(const ScoredMatch& a, const ScoredMatch& b) {
  const Match& x = a.match;
  const Match& y = b.match;
  if (x.rule->id != y.rule->id) return x.rule->id < y.rule->id;
  if (x.nodes != y.nodes) return x.nodes < y.nodes;
  return std::lexicographical_compare(
      x.vars.begin(), x.vars.end(), y.vars.begin(), y.vars.end(), [](TensorRef p, TensorRef q) {
        return std::tie(p.node, p.output) < std::tie(q.node, q.output);
      });
}

// Whether a match reads or binds a changed node: its own nodes and the
// producers of the tensors its variables bind.
bool touches(const Match& m, const std::vector<char>& changed) {
  for (int n : m.nodes)
    if (changed[n]) return true;
  for (const TensorRef& v : m.vars)
    if (changed[v.node]) return true;
  return false;
}

// Whether a parent match carries to the child unchanged: every node it uses
// survives the renumbering and none of them is changed. Checked before the
// match is copied: most matches of a list carry, a few do not.
bool carries(const Match& m, std::span<const int> new_index, const std::vector<char>& changed) {
  auto kept = [&](int p) { return new_index[p] >= 0 && !changed[new_index[p]]; };
  for (int n : m.nodes)
    if (!kept(n)) return false;
  for (const TensorRef& v : m.vars)
    if (!kept(v.node)) return false;
  return true;
}

void renumber(std::span<const int> new_index, Match* m) {
  for (int& n : m->nodes) n = new_index[n];
  for (TensorRef& v : m->vars) v.node = new_index[v.node];
}

// Child nodes by undirected distance (arguments and users) from the changed
// ones, up to `radius`: layer d holds the nodes at distance d.
std::vector<std::vector<int>> layers_around(const MatchContext& g, const std::vector<char>& changed,
                                            int radius) {
  std::vector<std::vector<int>> layers(1);
  std::vector<char> seen(changed.begin(), changed.end());
  for (int i = 0; i < g.graph.size(); ++i)
    if (changed[i]) layers[0].push_back(i);
  for (int d = 1; d <= radius; ++d) {
    std::vector<int> next;
    auto visit = [&](int n) {
      if (!seen[n]) {
        seen[n] = 1;
        next.push_back(n);
      }
    };
    for (int n : layers[d - 1]) {
      for (const TensorRef& a : g.graph.node(n).args) visit(a.node);
      for (int u : g.index.users[n]) visit(u);
    }
    if (next.empty()) break;
    layers.push_back(std::move(next));
  }
  return layers;
}

}  // namespace

std::vector<ScoredMatch> all_matches(const MatchContext& g, const RuleIndex& rules) {
  std::vector<ScoredMatch> out;
  for_each_match(g.graph, g.index, rules, [&](const Match& m) { out.push_back(score(g, m)); });
  std::sort(out.begin(), out.end(), canonical_less);
  return out;
}

std::vector<char> changed_nodes(const MatchContext& parent, const MatchContext& child,
                                std::span<const int> new_index) {
  const Graph& pg = parent.graph;
  const Graph& cg = child.graph;
  std::vector<char> changed(cg.size(), 1);  // nodes nothing maps to are new
  std::vector<int> mapped;
  for (int p = 0; p < pg.size(); ++p) {
    const int c = new_index[p];
    if (c < 0) continue;
    bool same = parent.index.constant[p] == child.index.constant[c] &&
                parent.index.is_output[p] == child.index.is_output[c];
    const std::vector<TensorRef>& pa = pg.node(p).args;
    const std::vector<TensorRef>& ca = cg.node(c).args;
    for (size_t k = 0; same && k < pa.size(); ++k)
      same = new_index[pa[k].node] == ca[k].node && pa[k].output == ca[k].output;
    const std::vector<int>& pu = parent.index.users[p];
    const std::vector<int>& cu = child.index.users[c];
    if (same && pu.size() == cu.size()) {
      mapped.clear();
      for (int u : pu) mapped.push_back(new_index[u]);
      std::sort(mapped.begin(), mapped.end());
      same = mapped == cu;
    } else {
      same = false;
    }
    changed[c] = same ? 0 : 1;
  }
  // A graph output that now names another tensor changes both producers.
  for (size_t j = 0; j < pg.outputs().size(); ++j) {
    const TensorRef p = pg.outputs()[j].ref;
    const TensorRef c = cg.outputs()[j].ref;
    if (new_index[p.node] == c.node && p.output == c.output) continue;
    changed[c.node] = 1;
    if (new_index[p.node] >= 0) changed[new_index[p.node]] = 1;
  }
  return changed;
}

std::vector<ScoredMatch> carry_matches(const MatchContext& parent,
                                       std::span<const ScoredMatch> parent_matches,
                                       const MatchContext& child, std::span<const int> new_index,
                                       const RuleIndex& rules) {
  const std::vector<char> changed = changed_nodes(parent, child, new_index);
  std::vector<ScoredMatch> out;
  out.reserve(parent_matches.size() + 64);
  for (const ScoredMatch& s : parent_matches) {
    if (!carries(s.match, new_index, changed)) continue;
    out.push_back(s);
    renumber(new_index, &out.back().match);
    if (s.valid && !s.local) out.back() = score(child, out.back().match);
  }
  // Renumbering keeps the canonical order unless the rewrite moved a node
  // ahead of others (a target placed before a variable it reads).
  if (!std::is_sorted(out.begin(), out.end(), canonical_less))
    std::sort(out.begin(), out.end(), canonical_less);
  const auto carried = static_cast<std::ptrdiff_t>(out.size());
  // A match that touches a changed node has its root within the rule's
  // reach of it: roots at distance d are tried with the rules reaching d.
  std::vector<std::vector<int>> layers = layers_around(child, changed, rules.max_reach());
  for (size_t d = 0; d < layers.size(); ++d) {
    for_each_match(
        child.graph, child.index, rules, layers[d],
        [&](const Match& found) {
          if (touches(found, changed)) out.push_back(score(child, found));
        },
        static_cast<int>(d));
  }
  std::sort(out.begin() + carried, out.end(), canonical_less);
  std::inplace_merge(out.begin(), out.begin() + carried, out.end(), canonical_less);
  return out;
}

}  // namespace tso::opt
