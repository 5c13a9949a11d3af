// Candidate pairs: output matching, common subgraphs, renaming classes,
// orientation, the float re-test and core graphs.
#include "generator/candidates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "runtime/reference/executor.h"

namespace tso::gen {

namespace {

// Structural hashes of the operators of `p` (tensor_hashes without the
// allocations: this runs once per candidate pair).
int op_hashes(const OpSet& set, const Program& p, std::array<uint64_t, kMaxOps>& out) {
  std::array<uint64_t, 256> h;
  const int nv = static_cast<int>(set.vars.size());
  int n = nv;
  for (const ProgOp& op : p.ops)
    for (int j = 0; j < set.ops[op.tmpl].arity; ++j)
      if (op.args[j] < nv) h[op.args[j]] = var_hash(op.args[j]);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgOp& op = p.ops[i];
    const OpTemplate& t = set.ops[op.tmpl];
    std::array<uint64_t, kMaxArgs> a{};
    for (int j = 0; j < t.arity; ++j) a[j] = h[op.args[j]];
    out[i] = op_hash(op.tmpl, commutative(t), std::span(a.data(), t.arity));
    for (int o = 0; o < outputs_of(t); ++o) h[n++] = output_hash(out[i], o);
  }
  return static_cast<int>(p.ops.size());
}

}  // namespace

bool share_operator(const OpSet& set, const Program& a, const Program& b) {
  std::array<uint64_t, kMaxOps> ha, hb;
  const int na = op_hashes(set, a, ha), nb = op_hashes(set, b, hb);
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (ha[i] == hb[j]) return true;
  return false;
}

std::optional<Candidate> match_outputs(KindTable& table, const std::vector<ValuePtr>& inputs,
                                       const Program& a, const Program& b) {
  Replayed ra = replay(table, a), rb = replay(table, b);
  std::vector<ValuePtr> va = eval_program(ra, inputs), vb = eval_program(rb, inputs);
  std::vector<int> la = live_tensors(ra), lb = live_tensors(rb);
  auto is_var_live_in = [](const std::vector<int>& live, int t, int num_vars) {
    return t < num_vars && std::binary_search(live.begin(), live.end(), t);
  };
  Candidate c{a, b, {}, {}};
  std::vector<int> rest_b;
  for (int t : lb)
    if (!is_var_live_in(la, t, ra.num_vars)) rest_b.push_back(t);
  for (int t : la) {
    if (is_var_live_in(lb, t, ra.num_vars)) continue;
    auto it = std::find_if(rest_b.begin(), rest_b.end(),
                           [&](int u) { return same_value(*va[t], *vb[u]); });
    if (it == rest_b.end()) return std::nullopt;
    c.a_out.push_back(t);
    c.b_out.push_back(*it);
    rest_b.erase(it);
  }
  if (!rest_b.empty() || c.a_out.empty()) return std::nullopt;
  return c;
}

namespace {

std::vector<uint64_t> default_var_hashes(const OpSet& set) {
  std::vector<uint64_t> h;
  for (size_t v = 0; v < set.vars.size(); ++v) h.push_back(var_hash(static_cast<int>(v)));
  return h;
}

std::vector<int> vars_read(const OpSet& set, const Program& p, const std::vector<int>& outs) {
  std::vector<bool> used(set.vars.size());
  for (const ProgOp& op : p.ops)
    for (int j = 0; j < set.ops[op.tmpl].arity; ++j)
      if (op.args[j] < used.size()) used[op.args[j]] = true;
  for (int t : outs)
    if (t < static_cast<int>(used.size())) used[t] = true;
  std::vector<int> out;
  for (size_t v = 0; v < used.size(); ++v)
    if (used[v]) out.push_back(static_cast<int>(v));
  return out;
}

uint64_t signature(const OpSet& set, const Candidate& c, const std::vector<uint64_t>& var_h) {
  std::vector<uint64_t> ha = tensor_hashes(set, c.a, var_h), hb = tensor_hashes(set, c.b, var_h);
  std::vector<std::pair<uint64_t, uint64_t>> ab, ba;
  for (size_t i = 0; i < c.a_out.size(); ++i) {
    ab.emplace_back(ha[c.a_out[i]], hb[c.b_out[i]]);
    ba.emplace_back(hb[c.b_out[i]], ha[c.a_out[i]]);
  }
  std::sort(ab.begin(), ab.end());
  std::sort(ba.begin(), ba.end());
  auto fold = [](const std::vector<std::pair<uint64_t, uint64_t>>& v) {
    uint64_t h = 0x2e9a;
    for (auto [x, y] : v) h = hash_mix(hash_mix(h, x), y);
    return h;
  };
  return std::min(fold(ab), fold(ba));
}

}  // namespace

uint64_t renaming_class(const OpSet& set, const Candidate& c) {
  std::vector<int> va = vars_read(set, c.a, c.a_out), vb = vars_read(set, c.b, c.b_out);
  std::vector<int> used;
  std::set_union(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(used));
  // Per class: the used variables and the first names of the class.
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> classes;
  for (int v : used) classes[set.vars[v].renaming_class].first.push_back(v);
  for (auto& [cls, uv] : classes)
    for (size_t v = 0; v < set.vars.size() && uv.second.size() < uv.first.size(); ++v)
      if (set.vars[v].renaming_class == cls) uv.second.push_back(static_cast<int>(v));
  std::vector<std::pair<std::vector<int>, std::vector<int>>> groups;
  for (auto& [cls, uv] : classes) groups.push_back(uv);
  std::vector<uint64_t> var_h = default_var_hashes(set);
  uint64_t best = ~uint64_t{0};
  // Every bijection from each class's used variables onto its first names.
  std::function<void(size_t)> each = [&](size_t g) {
    if (g == groups.size()) {
      best = std::min(best, signature(set, c, var_h));
      return;
    }
    std::vector<int> targets = groups[g].second;
    do {
      for (size_t i = 0; i < targets.size(); ++i) var_h[groups[g].first[i]] = var_hash(targets[i]);
      each(g + 1);
    } while (std::next_permutation(targets.begin(), targets.end()));
  };
  each(0);
  return best;
}

bool orient(KindTable& table, Candidate* c) {
  const OpSet& set = table.set();
  auto binds = [&](const Program& src, const std::vector<int>& so, const Program& tgt,
                   const std::vector<int>& to) {
    std::vector<int> s = vars_read(set, src, so), t = vars_read(set, tgt, to);
    return !src.ops.empty() && std::includes(s.begin(), s.end(), t.begin(), t.end());
  };
  bool keep = c->a.ops.size() >= c->b.ops.size();
  if (keep && binds(c->a, c->a_out, c->b, c->b_out)) return true;
  if (binds(c->b, c->b_out, c->a, c->a_out)) {
    std::swap(c->a, c->b);
    std::swap(c->a_out, c->b_out);
    return true;
  }
  return false;
}

Expected<Graph> build_graph(const OpSet& set, KindTable& table, const Program& p,
                            const std::vector<int>& outputs) {
  Replayed r = replay(table, p);
  GraphBuilder gb("side");
  std::vector<TensorRef> refs(r.kind.size());
  std::vector<bool> needed(set.vars.size());
  for (const auto& args : r.op_args)
    for (int a : args)
      if (a < r.num_vars) needed[a] = true;
  for (int t : outputs)
    if (t < r.num_vars) needed[t] = true;
  for (int v = 0; v < r.num_vars; ++v) {
    if (!needed[v]) continue;
    const GenVar& gv = set.vars[v];
    refs[v] = gv.weight ? gb.weight(gv.name, gv.type) : gb.input(gv.name, gv.type);
  }
  for (size_t i = 0; i < r.applied.size(); ++i) {
    std::vector<TensorRef> args;
    for (int a : r.op_args[i]) args.push_back(refs[a]);
    Expected<std::vector<TensorRef>> outs =
        gb.add(r.applied[i]->node.op, std::move(args), r.applied[i]->node.attrs);
    if (!outs) return outs.error();
    for (size_t o = 0; o < outs->size(); ++o) refs[r.op_outputs[i][o]] = (*outs)[o];
  }
  for (size_t i = 0; i < outputs.size(); ++i) gb.output("out" + std::to_string(i), refs[outputs[i]]);
  return gb.finish();
}

bool independent_parts(const OpSet& set, const Candidate& c) {
  // Union-find over tensors: variables (shared by both sides), then the
  // operator outputs of a, then those of b.
  const int nv = static_cast<int>(set.vars.size());
  auto outputs = [&](const Program& p) {
    int n = 0;
    for (const ProgOp& op : p.ops) n += outputs_of(set.ops[op.tmpl]);
    return n;
  };
  const int off_b = nv + outputs(c.a);
  std::vector<int> parent(off_b + outputs(c.b));
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](int x, int y) { parent[find(x)] = find(y); };
  // Tensor t of a side (variables first) as a union-find node.
  auto node = [&](int t, int off) { return t < nv ? t : off + t - nv; };
  std::vector<int> op_node;
  for (auto [p, off] : {std::pair{&c.a, nv}, std::pair{&c.b, off_b}}) {
    int next = nv;
    for (const ProgOp& op : p->ops) {
      const OpTemplate& t = set.ops[op.tmpl];
      const int first = node(next, off);
      op_node.push_back(first);
      for (int j = 0; j < t.arity; ++j) unite(first, node(op.args[j], off));
      for (int o = 1; o < outputs_of(t); ++o) unite(first, node(next + o, off));
      next += outputs_of(t);
    }
  }
  for (size_t i = 0; i < c.a_out.size(); ++i) unite(node(c.a_out[i], nv), node(c.b_out[i], off_b));
  for (int n : op_node)
    if (find(n) != find(op_node.front())) return true;
  return false;
}

bool float_equal(KindTable& table, const Candidate& c, uint64_t seed) {
  const OpSet& set = table.set();
  Expected<Graph> ga = build_graph(set, table, c.a, c.a_out);
  Expected<Graph> gb = build_graph(set, table, c.b, c.b_out);
  TSO_CHECK(ga.ok() && gb.ok(), "candidate sides do not build");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::map<std::string, ref::Tensor<double>> feeds;
  for (const GenVar& v : set.vars) {
    ref::Tensor<double> t(v.type.shape);
    for (double& x : t.data) x = u(rng);
    feeds.emplace(v.name, std::move(t));
  }
  auto pick = [&](const Graph& g) {
    std::map<std::string, ref::Tensor<double>> f;
    for (int i : g.input_nodes()) f.emplace(g.node(i).name, feeds.at(g.node(i).name));
    return f;
  };
  auto ra = ref::evaluate<double>(*ga, pick(*ga));
  auto rb = ref::evaluate<double>(*gb, pick(*gb));
  TSO_CHECK(ra.ok() && rb.ok(), "candidate sides do not evaluate");
  for (size_t i = 0; i < ra->size(); ++i) {
    const auto& x = (*ra)[i].data;
    const auto& y = (*rb)[i].data;
    if (x.size() != y.size()) return false;
    double err = 0, scale = 1e-6;
    for (size_t k = 0; k < x.size(); ++k) {
      err = std::max(err, std::abs(x[k] - y[k]));
      scale = std::max(scale, std::abs(y[k]));
    }
    if (!(err / scale <= 1e-9)) return false;
  }
  return true;
}

}  // namespace tso::gen
