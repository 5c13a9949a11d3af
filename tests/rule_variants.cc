#include "tests/rule_variants.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/rng.h"
#include "tests/graph_variants.h"

namespace tso::testing {
namespace {

std::vector<RuleSide*> sides(Rule& r) { return {&r.source, &r.target, &r.correction.side}; }

void for_each_expr(ShapeExpr& e, const std::function<void(ShapeExpr&)>& f) {
  f(e);
  for (ShapeExpr& a : e.args) for_each_expr(a, f);
}

// Every variable named in a shape expression, by its name.
void rename_in_exprs(Rule& r, const std::map<std::string, std::string>& to) {
  auto rename = [&](ShapeExpr& root) {
    for_each_expr(root, [&](ShapeExpr& e) {
      if (auto it = to.find(e.var); e.kind == ShapeExpr::Kind::kDim && it != to.end())
        e.var = it->second;
    });
  };
  for (RuleSide* s : sides(r))
    for (RuleNode& n : s->nodes)
      for (PatternAttr& a : n.attrs)
        for (ShapeExpr& e : a.exprs) rename(e);
  for (Condition& c : r.where) {
    rename(c.lhs);
    rename(c.rhs);
  }
  for (CorrectionBox& b : r.correction.boxes)
    for (ShapeExpr& e : b.at) rename(e);
  // The rank clause names its variables too (once each, as the parser wants).
  std::vector<std::string> clause;
  for (const std::string& v : r.ranks.vars) {
    auto it = to.find(v);
    const std::string& name = it == to.end() ? v : it->second;
    if (std::find(clause.begin(), clause.end(), name) == clause.end()) clause.push_back(name);
  }
  r.ranks.vars = std::move(clause);
}

void for_each_ref(Rule& r, const std::function<void(RuleRef&)>& f) {
  for (RuleSide* s : sides(r)) {
    for (RuleNode& n : s->nodes)
      for (RuleRef& a : n.args) f(a);
    for (RuleRef& o : s->outputs) f(o);
  }
}

std::vector<int> permutation(int n, Rng& rng) {
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return p;
}

// The side's nodes in a random topological order.
void reorder_nodes(RuleSide& s, Rng& rng) {
  const int n = static_cast<int>(s.nodes.size());
  std::vector<int> at(n, -1), order;
  while (static_cast<int>(order.size()) < n) {
    std::vector<int> ready;
    for (int i = 0; i < n; ++i) {
      bool ok = at[i] < 0;
      for (const RuleRef& a : s.nodes[i].args)
        ok = ok && (a.kind == RuleRef::Kind::kVar || at[a.index] >= 0);
      if (ok) ready.push_back(i);
    }
    int i = rng.pick(ready);
    at[i] = static_cast<int>(order.size());
    order.push_back(i);
  }
  std::vector<RuleNode> nodes;
  for (int i : order) nodes.push_back(s.nodes[i]);
  s.nodes = std::move(nodes);
  auto remap = [&](RuleRef& a) {
    if (a.kind == RuleRef::Kind::kNode) a.index = at[a.index];
  };
  for (RuleNode& node : s.nodes)
    for (RuleRef& a : node.args) remap(a);
  for (RuleRef& o : s.outputs) remap(o);
}

// Every argument slot of both sides: (side, node, argument).
struct Slot {
  RuleSide* side;
  int node, arg;
};
std::vector<Slot> slots(Rule& r) {
  std::vector<Slot> out;
  for (RuleSide* s : {&r.source, &r.target})
    for (int i = 0; i < static_cast<int>(s->nodes.size()); ++i)
      for (int k = 0; k < static_cast<int>(s->nodes[i].args.size()); ++k) out.push_back({s, i, k});
  return out;
}

}  // namespace

Rule renamed(const Rule& r, uint64_t seed) {
  Rng rng(seed);
  Rule out = r;
  const int n = static_cast<int>(r.inputs.size());
  std::vector<int> to = permutation(n, rng);
  std::map<std::string, std::string> names;
  for (int i = 0; i < n; ++i) {
    std::string fresh = "n" + std::to_string(to[i]) + "_" + std::to_string(rng.below(100));
    names[r.inputs[i].name] = fresh;
    out.inputs[to[i]] = {fresh, r.inputs[i].type};
  }
  for_each_ref(out, [&](RuleRef& a) {
    if (a.kind == RuleRef::Kind::kVar) a.index = to[a.index];
  });
  rename_in_exprs(out, names);
  std::vector<int> pto = permutation(static_cast<int>(r.params.size()), rng);
  std::map<std::string, std::string> pnames;
  for (size_t i = 0; i < r.params.size(); ++i) {
    pnames[r.params[i].name] = "q" + std::to_string(pto[i]);
    out.params[pto[i]] = {pnames[r.params[i].name], r.params[i].example};
  }
  for (RuleSide* s : sides(out))
    for (RuleNode& node : s->nodes)
      for (PatternAttr& a : node.attrs)
        if (a.form == PatternAttr::Form::kParam || a.form == PatternAttr::Form::kParamInverse)
          a.param = pnames.at(a.param);
  return out;
}

Rule regrouped(const Rule& r, const RenamingClasses& classes, uint64_t seed) {
  Rng rng(seed);
  Rule out = r;
  std::map<int, std::vector<int>> by_class;
  for (size_t i = 0; i < r.inputs.size(); ++i)
    if (auto c = classes.of_var.find(r.inputs[i].name); c != classes.of_var.end())
      by_class[c->second].push_back(static_cast<int>(i));
  std::map<std::string, std::string> names;
  for (const auto& [cls, vars] : by_class) {
    std::vector<int> p = permutation(static_cast<int>(vars.size()), rng);
    for (size_t k = 0; k < vars.size(); ++k) {
      names[r.inputs[vars[k]].name] = r.inputs[vars[p[k]]].name;
      out.inputs[vars[k]].name = r.inputs[vars[p[k]]].name;
    }
  }
  rename_in_exprs(out, names);
  reorder_nodes(out.source, rng);
  reorder_nodes(out.target, rng);
  std::vector<int> p = permutation(static_cast<int>(r.source.outputs.size()), rng);
  std::vector<RuleRef> src = out.source.outputs, tgt = out.target.outputs;
  for (size_t k = 0; k < p.size(); ++k) {
    out.source.outputs[k] = src[p[k]];
    out.target.outputs[k] = tgt[p[k]];
  }
  if (seed % 2) std::swap(out.source, out.target);
  return out;
}

std::string_view near_miss_name(RuleNearMiss kind) {
  switch (kind) {
    case RuleNearMiss::kAttribute:
      return "attribute";
    case RuleNearMiss::kSwapArgs:
      return "swap-args";
    case RuleNearMiss::kMoveEdge:
      return "move-edge";
    case RuleNearMiss::kMergeVariables:
      return "merge-variables";
  }
  return "?";
}

std::optional<Rule> near_miss(const Rule& r, RuleNearMiss kind, uint64_t seed) {
  Rng rng(seed);
  Rule out = r;
  switch (kind) {
    case RuleNearMiss::kAttribute: {
      std::vector<PatternAttr*> values;
      for (RuleSide* s : {&out.source, &out.target})
        for (RuleNode& n : s->nodes)
          for (PatternAttr& a : n.attrs)
            if (a.form == PatternAttr::Form::kValue) values.push_back(&a);
      if (values.empty()) return std::nullopt;
      PatternAttr* a = rng.pick(values);
      a->value = changed_value(a->value, rng);
      return out;
    }
    case RuleNearMiss::kSwapArgs: {
      std::vector<Slot> pairs;  // a slot and the one after it, reading different tensors
      for (const Slot& s : slots(out)) {
        const std::vector<RuleRef>& args = s.side->nodes[s.node].args;
        if (s.arg + 1 < static_cast<int>(args.size()) && args[s.arg] != args[s.arg + 1])
          pairs.push_back(s);
      }
      if (pairs.empty()) return std::nullopt;
      const Slot& s = rng.pick(pairs);
      std::vector<RuleRef>& args = s.side->nodes[s.node].args;
      std::swap(args[s.arg], args[s.arg + 1]);
      return out;
    }
    case RuleNearMiss::kMoveEdge: {
      std::vector<Slot> all = slots(out);
      if (all.empty()) return std::nullopt;
      const Slot& s = rng.pick(all);
      std::vector<RuleRef> others;
      for (int v = 0; v < static_cast<int>(out.inputs.size()); ++v)
        others.push_back({RuleRef::Kind::kVar, v, 0});
      for (int j = 0; j < s.node; ++j)
        for (int o = 0; o < s.side->nodes[j].outputs; ++o)
          others.push_back({RuleRef::Kind::kNode, j, o});
      RuleRef& arg = s.side->nodes[s.node].args[s.arg];
      std::erase(others, arg);
      if (others.empty()) return std::nullopt;
      arg = rng.pick(others);
      return out;
    }
    case RuleNearMiss::kMergeVariables: {
      std::set<int> used;
      for_each_ref(out, [&](RuleRef& a) {
        if (a.kind == RuleRef::Kind::kVar) used.insert(a.index);
      });
      if (used.size() < 2) return std::nullopt;
      std::vector<int> u(used.begin(), used.end());
      int gone = rng.pick(u), kept = gone;
      while (kept == gone) kept = rng.pick(u);
      for_each_ref(out, [&](RuleRef& a) {
        if (a.kind == RuleRef::Kind::kVar && a.index == gone) a.index = kept;
      });
      rename_in_exprs(out, {{r.inputs[gone].name, r.inputs[kept].name}});
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace tso::testing
