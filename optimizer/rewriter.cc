#include "optimizer/rewriter.h"

#include <algorithm>

#include "core/shape_inference.h"

namespace tso::opt {

const TensorType& replacement_type(const Graph& g, const Replacement& r, TensorRef t) {
  return is_target_ref(t) ? r.nodes[target_index(t)].outs[t.output] : g.type(t);
}

namespace {

// A region rule's replacement: the instance decided at the bound types, its
// input nodes read as the match's variables.
Expected<Replacement> build_region_replacement(const Graph& g, const Match& m, Replacement r) {
  const Rule& rule = *m.rule->rule;
  std::vector<TensorType> var_types;
  for (const TensorRef& v : m.vars) var_types.push_back(g.type(v));
  Expected<std::shared_ptr<const RegionInstance>> inst = m.rule->regions->at(var_types, m.params);
  if (!inst) return inst.error();
  const Graph& t = (*inst)->target;
  const std::string& root_name = g.node(m.nodes[m.rule->plan[0].node]).name;
  std::vector<TensorRef> var_of(t.nodes().size(), TensorRef{});
  std::vector<int> index(t.nodes().size(), -1);
  auto resolve = [&](TensorRef a) {
    return index[a.node] < 0 ? var_of[a.node] : TensorRef{-1 - index[a.node], a.output};
  };
  for (int i = 0; i < static_cast<int>(t.nodes().size()); ++i) {
    const Node& tn = t.node(i);
    if (tn.op == Op::Input) {
      for (size_t v = 0; v < rule.inputs.size(); ++v)
        if (rule.inputs[v].name == tn.name) var_of[i] = m.vars[v];
      continue;
    }
    Node n = tn;
    for (TensorRef& a : n.args) a = resolve(a);
    n.name = root_name + "/" + rule.name + "/" + tn.name;
    index[i] = static_cast<int>(r.nodes.size());
    r.nodes.push_back(std::move(n));
  }
  for (size_t j = 0; j < rule.source.outputs.size(); ++j) {
    const RuleRef& s = rule.source.outputs[j];
    TensorRef old{m.nodes[s.index], s.output};
    TensorRef now = resolve(t.outputs()[j].ref);
    if (!(replacement_type(g, r, now) == g.type(old)))
      return Error{"rule " + rule.name + ": target output " + std::to_string(j) + " has type " +
                   to_string(replacement_type(g, r, now)) + " but replaces " +
                   to_string(g.type(old))};
    if (is_target_ref(now)) r.nodes[target_index(now)].name = g.node(old.node).name;
    r.outputs.push_back(now);
    r.replaced.push_back(old);
  }
  r.correction_boxes = (*inst)->boxes;
  r.correction_elements = (*inst)->correction_elements;
  return r;
}

}  // namespace

Expected<Replacement> build_replacement(const Graph& g, const Match& m) {
  const Rule& rule = *m.rule->rule;
  Replacement r;
  r.rule = m.rule;
  r.removed = m.nodes;
  std::sort(r.removed.begin(), r.removed.end());
  if (m.rule->regions) return build_region_replacement(g, m, std::move(r));
  std::vector<TensorType> var_types;
  for (const TensorRef& v : m.vars) var_types.push_back(g.type(v));
  auto resolve = [&](const RuleRef& a) {
    return a.kind == RuleRef::Kind::kVar ? m.vars[a.index] : TensorRef{-1 - a.index, a.output};
  };
  // Which target node replaces which source output, for naming.
  std::vector<int> names(rule.target.nodes.size(), -1);
  for (size_t j = 0; j < rule.target.outputs.size(); ++j) {
    const RuleRef& o = rule.target.outputs[j];
    const RuleRef& s = rule.source.outputs[j];
    if (o.kind == RuleRef::Kind::kNode && names[o.index] < 0) names[o.index] = m.nodes[s.index];
  }
  const std::string& root_name = g.node(m.nodes[m.rule->plan[0].node]).name;
  for (size_t i = 0; i < rule.target.nodes.size(); ++i) {
    const RuleNode& tn = rule.target.nodes[i];
    Node n;
    n.op = tn.op;
    for (const PatternAttr& a : tn.attrs) {
      Expected<AttrValue> v = pattern_attr_value(a, rule, var_types, m.params);
      if (!v) return v.error();
      n.attrs.set(a.key, std::move(*v));
    }
    if (Status s = complete_attrs(n.op, &n.attrs); !s.ok()) return s.error();
    std::vector<TensorType> in;
    for (const RuleRef& a : tn.args) {
      n.args.push_back(resolve(a));
      in.push_back(replacement_type(g, r, n.args.back()));
    }
    Expected<std::vector<TensorType>> outs = infer_types(n.op, &n.attrs, in);
    if (!outs) return outs.error();
    if (static_cast<int>(outs->size()) != tn.outputs)
      return Error{"rule " + rule.name + ": target node " + std::to_string(i) + " gives " +
                   std::to_string(outs->size()) + " results"};
    // An enlarge to the kernel the weight has is an identity: it costs
    // nothing, changes the graph's hash and stacks without end (enlarge of
    // enlarge ...), filling the search's queue with graphs of equal cost.
    if (n.op == Op::Enlarge && (*outs)[0] == in[0])
      return Error{"rule " + rule.name + ": target node " + std::to_string(i) +
                   " enlarges a kernel to its own size"};
    n.outs = std::move(*outs);
    n.name = names[i] >= 0 ? g.node(names[i]).name : root_name + "/" + rule.name;
    r.nodes.push_back(std::move(n));
  }
  for (size_t j = 0; j < rule.target.outputs.size(); ++j) {
    const RuleRef& s = rule.source.outputs[j];
    TensorRef old{m.nodes[s.index], s.output};
    TensorRef now = resolve(rule.target.outputs[j]);
    if (!(replacement_type(g, r, now) == g.type(old)))
      return Error{"rule " + rule.name + ": target output " + std::to_string(j) + " has type " +
                   to_string(replacement_type(g, r, now)) + " but replaces " +
                   to_string(g.type(old))};
    r.outputs.push_back(now);
    r.replaced.push_back(old);
  }
  return r;
}

std::vector<std::vector<uint64_t>> target_ids(const Replacement& r, const TensorIds& ids) {
  std::vector<std::vector<uint64_t>> out(r.nodes.size());
  std::vector<uint64_t> args;
  for (size_t k = 0; k < r.nodes.size(); ++k) {
    const Node& n = r.nodes[k];
    args.clear();
    for (const TensorRef& a : n.args)
      args.push_back(is_target_ref(a) ? out[target_index(a)][a.output] : ids.id(a));
    uint64_t local = local_hash(n, args);
    for (size_t j = 0; j < n.outs.size(); ++j) out[k].push_back(hash_mix(local, j));
  }
  // Outputs take the id of the tensor they replace, in reverse so that the
  // first pattern output wins when one tensor replaces several.
  for (size_t j = r.outputs.size(); j-- > 0;) {
    const TensorRef& t = r.outputs[j];
    if (is_target_ref(t)) out[target_index(t)][t.output] = ids.id(r.replaced[j]);
  }
  return out;
}

namespace {

// The id a tensor has after the replacement, for a reader of `t`.
uint64_t id_after(TensorRef t, const Replacement& r, const TensorIds& ids,
                  const std::vector<std::vector<uint64_t>>& tids) {
  for (size_t j = 0; j < r.replaced.size(); ++j) {
    if (!(r.replaced[j] == t)) continue;
    const TensorRef& o = r.outputs[j];
    return is_target_ref(o) ? tids[target_index(o)][o.output] : ids.id(o);
  }
  return ids.id(t);
}

}  // namespace

uint64_t graph_hash(const Graph& g, const TensorIds& ids) {
  uint64_t h = 0;
  for (const Node& n : g.nodes()) h += node_term(local_hash(n, ids));
  return h + outputs_term(g, ids);
}

uint64_t hash_delta(const Graph& g, const GraphIndex& index, const TensorIds& ids,
                    const Replacement& r) {
  std::vector<std::vector<uint64_t>> tids = target_ids(r, ids);
  uint64_t d = 0;
  std::vector<uint64_t> args;
  for (size_t k = 0; k < r.nodes.size(); ++k) {
    args.clear();
    for (const TensorRef& a : r.nodes[k].args)
      args.push_back(is_target_ref(a) ? tids[target_index(a)][a.output] : ids.id(a));
    d += node_term(local_hash(r.nodes[k], args));
  }
  for (int i : r.removed) d -= node_term(local_hash(g.node(i), ids));
  // Readers of a replaced tensor change only where its id does (a target
  // output that is an existing tensor).
  bool ids_change = false;
  for (size_t j = 0; j < r.replaced.size(); ++j)
    ids_change = ids_change || id_after(r.replaced[j], r, ids, tids) != ids.id(r.replaced[j]);
  if (!ids_change) return d;
  std::vector<int> readers;
  for (const TensorRef& t : r.replaced)
    for (int u : index.users[t.node])
      if (!std::binary_search(r.removed.begin(), r.removed.end(), u)) readers.push_back(u);
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  for (int u : readers) {
    const Node& n = g.node(u);
    args.clear();
    for (const TensorRef& a : n.args) args.push_back(id_after(a, r, ids, tids));
    d += node_term(local_hash(n, args)) - node_term(local_hash(n, ids));
  }
  uint64_t before = 0x6a09, after = 0x6a09;
  for (const GraphOutput& o : g.outputs()) {
    for (unsigned char c : o.name) {
      before = hash_mix(before, c);
      after = hash_mix(after, c);
    }
    before = hash_mix(before, ids.id(o.ref));
    after = hash_mix(after, id_after(o.ref, r, ids, tids));
  }
  return d + after - before;
}

bool hash_delta_is_local(const Replacement& r) {
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    if (!is_target_ref(r.outputs[j])) return false;
    for (size_t k = 0; k < j; ++k)
      if (r.outputs[k] == r.outputs[j]) return false;
  }
  return true;
}

Expected<Rewritten> apply_replacement(const Graph& g, const TensorIds& ids, const Replacement& r) {
  const int n = g.size();
  const int t = static_cast<int>(r.nodes.size());
  // Items: graph nodes 0..n-1, then target nodes n..n+t-1. Arguments are
  // read in place (redirected where they name a replaced tensor): building
  // a state is on the search's hot path, so nothing here allocates per node.
  std::vector<char> replaces(n, 0);  // per graph node, whether a result of it is replaced
  for (const TensorRef& x : r.replaced) replaces[x.node] = 1;
  auto item_of = [&](TensorRef a) { return is_target_ref(a) ? n + target_index(a) : a.node; };
  auto redirect = [&](TensorRef a) {
    if (!replaces[a.node]) return a;
    for (size_t j = 0; j < r.replaced.size(); ++j)
      if (r.replaced[j] == a) return r.outputs[j];
    return a;
  };
  auto args_of = [&](int item) -> const std::vector<TensorRef>& {
    return item >= n ? r.nodes[item - n].args : g.node(item).args;
  };
  // The k-th argument of an item as the new graph sees it.
  auto arg = [&](int item, size_t k) {
    return item >= n ? r.nodes[item - n].args[k] : redirect(g.node(item).args[k]);
  };
  std::vector<char> removed(n, 0);
  for (int i : r.removed) removed[i] = 1;
  std::vector<GraphOutput> outputs = g.outputs();
  for (GraphOutput& o : outputs) o.ref = redirect(o.ref);

  // Liveness from the outputs; graph inputs and weights always stay.
  std::vector<char> live(n + t, 0);
  std::vector<int> stack;
  for (const GraphOutput& o : outputs) stack.push_back(item_of(o.ref));
  for (int i = 0; i < n; ++i)
    if (g.node(i).op == Op::Input || g.node(i).op == Op::Weight) stack.push_back(i);
  while (!stack.empty()) {
    int it = stack.back();
    stack.pop_back();
    if (live[it]) continue;
    TSO_CHECK(it >= n || !removed[it], "a removed node is still used");
    live[it] = 1;
    for (size_t k = 0; k < args_of(it).size(); ++k) stack.push_back(item_of(arg(it, k)));
  }

  // Emission order: graph order with the target where the first removed node
  // was; each item after its arguments (depth-first, explicit stack).
  const int place = r.removed.empty() ? n : r.removed.front();
  std::vector<int> new_index(n + t, -1);
  std::vector<std::vector<uint64_t>> tids = target_ids(r, ids);
  GraphBuilder b(g.name());
  TensorIds out_ids;
  auto emit = [&](int it) {
    Node node = it >= n ? r.nodes[it - n] : g.node(it);
    for (size_t k = 0; k < node.args.size(); ++k) {
      const TensorRef a = arg(it, k);
      node.args[k] = TensorRef{new_index[item_of(a)], a.output};
    }
    new_index[it] = b.add_node(std::move(node)).node;
    if (it >= n) {
      out_ids.push(tids[it - n]);
    } else {
      out_ids.push(ids.ids(it));
    }
  };
  auto ready = [&](int it) {
    for (size_t k = 0; k < args_of(it).size(); ++k)
      if (new_index[item_of(arg(it, k))] < 0) return false;
    return true;
  };
  std::vector<std::pair<int, bool>> dfs;
  auto place_item = [&](int root) {
    if (!live[root] || new_index[root] >= 0) return;
    if (ready(root)) {
      emit(root);
      return;
    }
    dfs.push_back({root, false});
    while (!dfs.empty()) {
      auto [it, expanded] = dfs.back();
      dfs.pop_back();
      if (new_index[it] >= 0) continue;
      if (!expanded) {
        dfs.push_back({it, true});
        for (size_t k = args_of(it).size(); k-- > 0;) {
          const int a = item_of(arg(it, k));
          if (new_index[a] < 0) dfs.push_back({a, false});
        }
        continue;
      }
      emit(it);
    }
  };
  for (int i = 0; i < n; ++i) {
    if (i == place)
      for (int k = 0; k < t; ++k) place_item(n + k);
    place_item(i);
  }
  if (place >= n)
    for (int k = 0; k < t; ++k) place_item(n + k);
  for (GraphOutput& o : outputs) b.output(o.name, {new_index[item_of(o.ref)], o.ref.output});
  Expected<Graph> graph = b.finish();
  if (!graph) return graph.error();
  TSO_CHECK(graph->size() == out_ids.size(), "finish dropped nodes the rewrite kept");
  new_index.resize(n);
  return Rewritten{std::move(*graph), std::move(out_ids), std::move(new_index)};
}

}  // namespace tso::opt
