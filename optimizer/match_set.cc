#include "optimizer/match_set.h"

#include <algorithm>
#include <tuple>

#include "optimizer/rewriter.h"

namespace tso::opt {

namespace {

// Predicted cost of the rewrite: target nodes (weight-only ones are free,
// as they fold away) minus the matched nodes.
double cost_delta(const MatchContext& g, const Replacement& rep) {
  double d = 0;
  for (int n : rep.removed) d -= node_cost(g.graph, g.index, g.model, n);
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
    if (!c && !is_source(n.op)) d += g.model.node_us(n, in);
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
  s.cost_delta = cost_delta(g, *rep);
  s.hash_delta = hash_delta(g.graph, g.index, g.ids, *rep);
  s.hash_local = hash_delta_is_local(*rep);
  return s;
}

bool canonical_less(const ScoredMatch& a, const ScoredMatch& b) {
  const Match& x = a.match;
  const Match& y = b.match;
  if (x.rule->id != y.rule->id) return x.rule->id < y.rule->id;
  if (x.nodes != y.nodes) return x.nodes < y.nodes;
  return std::lexicographical_compare(
      x.vars.begin(), x.vars.end(), y.vars.begin(), y.vars.end(),
      [](TensorRef p, TensorRef q) { return std::tie(p.node, p.output) < std::tie(q.node, q.output); });
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
    if (s.valid && !s.hash_local) out.back() = score(child, out.back().match);
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
