// Lifted copies of generated rules (generator/lift.h).
#include "generator/lift.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

namespace tso::gen {

namespace {

const char* param_name(AttrKey k) {
  switch (k) {
    case AttrKey::kernel:
      return "k";
    case AttrKey::stride:
      return "s";
    case AttrKey::pad:
      return "p";
    case AttrKey::dilation:
      return "d";
    case AttrKey::groups:
      return "g";
    default:
      TSO_CHECK(false, "lift: not a liftable conv2d or pool attribute");
      return "";
  }
}

// The node's attribute `k`; an attribute the node does not mention holds its
// default, which is a plain value.
PatternAttr attr_of(const RuleNode& n, AttrKey k) {
  for (const PatternAttr& a : n.attrs)
    if (a.key == k) return a;
  PatternAttr a;
  a.key = k;
  a.value = *attr_default(k);
  return a;
}

void set_attr(RuleNode* n, PatternAttr a) {
  auto it = std::find_if(n->attrs.begin(), n->attrs.end(),
                         [&](const PatternAttr& x) { return x.key >= a.key; });
  if (it != n->attrs.end() && it->key == a.key)
    *it = std::move(a);
  else
    n->attrs.insert(it, std::move(a));
}

// The nodes of `ops`, none when the source has none: a parameter must be
// bound by the source (a relu rewritten as a conv2d by an identity kernel
// states nothing for other conv attributes).
std::vector<RuleNode*> nodes_of(Rule* r, std::initializer_list<Op> ops) {
  std::vector<RuleNode*> out;
  for (RuleSide* side : {&r->source, &r->target}) {
    for (RuleNode& n : side->nodes)
      if (std::find(ops.begin(), ops.end(), n.op) != ops.end()) out.push_back(&n);
    if (out.empty()) break;
  }
  return out;
}

// Each attribute of `keys` that is a plain value equal on every node of
// `nodes` becomes the parameter `?<prefix><name>` (param_name) on all of
// them, with that value as its example.
void lift_attrs(Rule* r, const std::vector<RuleNode*>& nodes, const std::vector<AttrKey>& keys,
                const std::string& prefix) {
  if (nodes.empty()) return;
  for (AttrKey k : keys) {
    const PatternAttr first = attr_of(*nodes[0], k);
    if (first.form != PatternAttr::Form::kValue) continue;
    if (!std::all_of(nodes.begin(), nodes.end(),
                     [&](const RuleNode* n) { return attr_of(*n, k) == first; }))
      continue;
    PatternAttr p;
    p.key = k;
    p.form = PatternAttr::Form::kParam;
    p.param = prefix + param_name(k);
    for (RuleNode* n : nodes) set_attr(n, p);
    r->params.push_back({p.param, first.value});
  }
}

// Whether the operator's law holds at every rank (its axioms are stated
// rank-generically in specs/).
bool rank_generic(Op op) {
  return op_info(op).kind == OpKind::Elementwise || op == Op::Transpose || op == Op::Concat ||
         op == Op::Split || op == Op::Matmul;
}

PatternAttr* find_attr(RuleNode* n, AttrKey k) {
  for (PatternAttr& a : n->attrs)
    if (a.key == k) return &a;
  return nullptr;
}
const PatternAttr* find_attr(const RuleNode& n, AttrKey k) {
  for (const PatternAttr& a : n.attrs)
    if (a.key == k) return &a;
  return nullptr;
}

// dim(v, i) of a clause variable counts from the end: dim(v, i - n).
// `least_rank` becomes at least the rank every such dim() needs to exist.
void count_from_end(ShapeExpr* e, const std::set<std::string>& clause, int n, int* least_rank) {
  if (e->kind == ShapeExpr::Kind::kDim && clause.contains(e->var)) {
    if (e->value >= 0) e->value -= n;
    *least_rank = std::max(*least_rank, static_cast<int>(-e->value));
  }
  for (ShapeExpr& a : e->args) count_from_end(&a, clause, n, least_rank);
}

// Transposes by the involution `perm` become ?p where their argument is in
// the variables' layout and inv(?p) where it is permuted, tracked through
// elementwise operators (a variable of another rank than n fits either
// layout: a scalar). False where the layouts do not line up or another
// operator meets a transpose.
bool lift_perms(Rule* r, const std::vector<int64_t>& perm, int n) {
  std::optional<std::vector<int64_t>> inv = inverse_permutation(perm);
  if (static_cast<int>(perm.size()) != n || !inv || *inv != perm) return false;
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return false;
  std::vector<std::vector<int>> outs;
  for (RuleSide* s : {&r->source, &r->target}) {
    std::vector<int> layout(s->nodes.size(), -1);  // 0: the variables', 1: permuted, -1: either
    auto of = [&](const RuleRef& a) {
      if (a.kind == RuleRef::Kind::kNode) return layout[a.index];
      return r->inputs[a.index].type.shape.rank() == n ? 0 : -1;
    };
    for (size_t i = 0; i < s->nodes.size(); ++i) {
      RuleNode& node = s->nodes[i];
      if (node.op == Op::Transpose) {
        const int in = of(node.args[0]);
        if (in < 0) return false;
        PatternAttr* a = find_attr(&node, AttrKey::perm);
        a->form = in == 0 ? PatternAttr::Form::kParam : PatternAttr::Form::kParamInverse;
        a->param = "p";
        a->value = AttrValue{};
        layout[i] = 1 - in;
        continue;
      }
      if (op_info(node.op).kind != OpKind::Elementwise) return false;
      for (const RuleRef& a : node.args) {
        const int l = of(a);
        if (l >= 0 && layout[i] >= 0 && l != layout[i]) return false;
        if (l >= 0) layout[i] = l;
      }
    }
    outs.emplace_back();
    for (const RuleRef& o : s->outputs) outs.back().push_back(of(o));
  }
  if (outs[0] != outs[1]) return false;
  r->params.push_back({"p", AttrValue{perm}});
  return true;
}

// The layout-lifted copy (lift.h), not yet renamed; nullopt when it does not apply.
std::optional<Rule> lift_layout(const Rule& rule, const LayoutLift& o) {
  if (o.rank_lo == 0) return std::nullopt;
  int n = 0;
  for (const RuleSide* s : {&rule.source, &rule.target})
    for (const RuleNode& node : s->nodes)
      if (!rank_generic(node.op)) return std::nullopt;
  for (const RuleVar& v : rule.inputs) n = std::max(n, v.type.shape.rank());
  if (n < o.rank_lo || n > o.rank_hi) return std::nullopt;
  Expected<Graph> graphs[2] = {instantiate(rule, RuleSideKind::kSource),
                               instantiate(rule, RuleSideKind::kTarget)};
  if (!graphs[0] || !graphs[1]) return std::nullopt;
  Rule r = rule;
  std::set<std::string> clause;
  for (const RuleVar& v : rule.inputs)
    if (v.type.shape.rank() == n) {
      clause.insert(v.name);
      r.ranks.vars.push_back(v.name);
    }
  r.ranks.hi = o.rank_hi;
  std::optional<std::vector<int64_t>> perm;
  for (const RuleSide* s : {&rule.source, &rule.target})
    for (const RuleNode& node : s->nodes) {
      if (node.op != Op::Transpose) continue;
      const PatternAttr& a = *find_attr(node, AttrKey::perm);
      const auto* p = std::get_if<std::vector<int64_t>>(&a.value);
      if (a.form != PatternAttr::Form::kValue || !p || (perm && *perm != *p)) return std::nullopt;
      perm = *p;
    }
  if (perm && (!o.perm || !lift_perms(&r, *perm, n))) return std::nullopt;
  int64_t lifted_axis = -1;
  int splits = 0;
  RuleSide* sides[2] = {&r.source, &r.target};
  const int base = static_cast<int>(rule.inputs.size());
  for (int s = 0; s < 2; ++s)
    for (size_t i = 0; i < sides[s]->nodes.size(); ++i) {
      RuleNode& node = sides[s]->nodes[i];
      if (node.op != Op::Concat && node.op != Op::Split) continue;
      const Node& g = graphs[s]->node(base + static_cast<int>(i));
      if (graphs[s]->type(g.args[0]).shape.rank() != n) continue;  // a weight's, a bias's: fixed
      PatternAttr* a = find_attr(&node, AttrKey::axis);
      if (a->form != PatternAttr::Form::kValue) return std::nullopt;
      const int64_t axis = g.attrs.i(AttrKey::axis);  // normalized by inference
      if (!(node.op == Op::Concat ? o.concat_axis : o.split_axis)) {
        a->value = AttrValue{axis - n};
        continue;
      }
      if (lifted_axis >= 0 && lifted_axis != axis) return std::nullopt;
      lifted_axis = axis;
      a->form = PatternAttr::Form::kParam;
      a->param = "a";
      a->value = AttrValue{};
      if (node.op == Op::Split) {
        if (s == 1) return std::nullopt;  // the source would not bind its sizes
        PatternAttr* sizes = find_attr(&node, AttrKey::sizes);
        const std::string name = "z" + std::to_string(splits++);
        *sizes = PatternAttr{};
        sizes->key = AttrKey::sizes;
        sizes->form = PatternAttr::Form::kParam;
        sizes->param = name;
        r.params.push_back({name, AttrValue{g.attrs.ints(AttrKey::sizes)}});
      }
    }
  if (lifted_axis >= 0) r.params.insert(r.params.begin() + (perm ? 1 : 0), {"a", lifted_axis});
  // The clause starts at the least rank where every dim() it counts from the
  // end exists (an elementwise rule's shape conditions name every axis), and
  // where a split whose sizes are a parameter still splits the axis it was
  // found on, so that its sizes fit the verifier's instances (the last
  // extents of the example types, verifier/instances.h).
  int least = o.rank_lo;
  for (RuleSide* s : sides)
    for (RuleNode& node : s->nodes)
      for (PatternAttr& a : node.attrs)
        for (ShapeExpr& e : a.exprs) count_from_end(&e, clause, n, &least);
  for (Condition& c : r.where) {
    count_from_end(&c.lhs, clause, n, &least);
    count_from_end(&c.rhs, clause, n, &least);
  }
  if (splits > 0) least = std::max(least, n - static_cast<int>(lifted_axis));
  if (least > o.rank_hi) return std::nullopt;
  r.ranks.lo = least;
  // At the example rank only, the copy says no more than the rule unless an
  // axis or a permutation became a parameter.
  if (least == n && o.rank_hi == n && lifted_axis < 0 && !perm) return std::nullopt;
  return r;
}

// Whether every variable `side` reads reaches the weight argument of one of
// its conv2d nodes (and it has one).
bool reads_only_conv_weights(const RuleSide& side, size_t vars) {
  using Vars = std::vector<bool>;
  std::vector<Vars> reaches(side.nodes.size(), Vars(vars, false));
  Vars read(vars, false), weights(vars, false);
  auto merge = [](Vars* into, const Vars& from) {
    for (size_t k = 0; k < from.size(); ++k) (*into)[k] = (*into)[k] || from[k];
  };
  auto of = [&](const RuleRef& a) {
    if (a.kind == RuleRef::Kind::kNode) return reaches[a.index];
    Vars v(vars, false);
    v[a.index] = true;
    return v;
  };
  bool conv = false;
  for (size_t i = 0; i < side.nodes.size(); ++i) {
    const RuleNode& n = side.nodes[i];
    for (const RuleRef& a : n.args) merge(&reaches[i], of(a));
    merge(&read, reaches[i]);
    if (n.op == Op::Conv2d && n.args.size() > 1) {
      conv = true;
      merge(&weights, of(n.args[1]));
    }
  }
  for (const RuleRef& o : side.outputs) merge(&read, of(o));
  for (size_t k = 0; k < vars; ++k)
    if (read[k] && !weights[k]) return false;
  return conv;
}

// Whether both sides of `rule` read only variables that reach a conv2d's
// weight: in a model whose convolution weights are constants, such a side
// matches weight-only operators only, which the search leaves to the
// folding after it (optimizer/match_set.cc), whichever way the rule is
// applied; so no lifted copy is of use.
bool weights_only(const Rule& rule) {
  return reads_only_conv_weights(rule.source, rule.inputs.size()) &&
         reads_only_conv_weights(rule.target, rule.inputs.size());
}

}  // namespace

std::optional<Rule> lift_rule(const Rule& rule, const std::vector<AttrKey>& keys,
                              const LayoutLift& layout, const std::vector<AttrKey>& pool_keys) {
  if (weights_only(rule)) return std::nullopt;
  if (std::optional<Rule> l = lift_layout(rule, layout)) {
    l->name += kLiftedSuffix;
    return l;
  }
  Rule lifted = rule;
  lift_attrs(&lifted, nodes_of(&lifted, {Op::Conv2d}), keys, "");
  lift_attrs(&lifted, nodes_of(&lifted, {Op::AvgPool, Op::MaxPool}), pool_keys, "p");
  if (lifted.params.size() == rule.params.size()) return std::nullopt;
  lifted.name += kLiftedSuffix;
  return lifted;
}

}  // namespace tso::gen
