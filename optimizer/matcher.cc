#include "optimizer/matcher.h"

#include <algorithm>
#include <array>
#include <optional>

namespace tso::opt {

Expected<int64_t> eval_shape_expr(const ShapeExpr& e, const Rule& rule,
                                  std::span<const TensorType> var_types,
                                  std::span<const AttrValue> params) {
  return eval_shape_expr(
      e,
      [&](const std::string& var) -> const TensorType* {
        for (size_t v = 0; v < rule.inputs.size(); ++v)
          if (rule.inputs[v].name == var) return &var_types[v];
        return nullptr;
      },
      [&](const std::string& name) -> const AttrValue* {
        for (size_t p = 0; p < rule.params.size() && p < params.size(); ++p)
          if (rule.params[p].name == name) return &params[p];
        return nullptr;
      });
}

Expected<AttrValue> pattern_attr_value(const PatternAttr& a, const Rule& rule,
                                       std::span<const TensorType> var_types,
                                       std::span<const AttrValue> params) {
  using F = PatternAttr::Form;
  switch (a.form) {
    case F::kValue:
      return a.value;
    case F::kParam:
    case F::kParamInverse:
      for (size_t p = 0; p < rule.params.size(); ++p) {
        if (rule.params[p].name != a.param) continue;
        if (a.form == F::kParam) return params[p];
        const auto* perm = std::get_if<std::vector<int64_t>>(&params[p]);
        std::optional<std::vector<int64_t>> inv;
        if (perm) inv = inverse_permutation(*perm);
        if (!inv) return Error{"inv(?" + a.param + "): not a permutation"};
        return AttrValue{std::move(*inv)};
      }
      return Error{"unknown parameter ?" + a.param};
    default:
      break;
  }
  std::vector<int64_t> xs;
  for (const ShapeExpr& e : a.exprs) {
    Expected<int64_t> x = eval_shape_expr(e, rule, var_types, params);
    if (!x) return x.error();
    xs.push_back(*x);
  }
  if (a.form == F::kExpr) return AttrValue{xs[0]};
  if (a.form == F::kExprList) return AttrValue{std::move(xs)};
  return AttrValue{Padding{Padding::kExplicit, {xs[0], xs[1], xs[2], xs[3]}}};
}

namespace {

bool condition_holds(const Condition& c, const Rule& rule, std::span<const TensorType> types,
                     std::span<const AttrValue> params) {
  Expected<int64_t> l = eval_shape_expr(c.lhs, rule, types, params);
  if (!l) return false;
  Expected<int64_t> r =
      c.kind == Condition::Kind::kOdd ? 0 : eval_shape_expr(c.rhs, rule, types, params);
  return r && satisfies(c.kind, *l, *r);
}

// The explicit [top, left, bottom, right] padding a node's `pad` stands for
// (core/attrs.h: same puts the odd element at the end).
std::array<int64_t, 4> resolved_pads(const Graph& g, const Node& n, const Padding& p) {
  if (p.mode == Padding::kExplicit) return p.pads;
  std::array<int64_t, 4> out{};
  if (p.mode == Padding::kValid) return out;
  const Shape& in = g.type(n.args[0]).shape;
  const std::vector<int64_t>& stride = n.attrs.ints(AttrKey::stride);
  for (int d = 0; d < 2; ++d) {
    int64_t k =
        n.op == Op::Conv2d ? g.type(n.args[1]).shape[2 + d] : n.attrs.ints(AttrKey::kernel)[d];
    int64_t dil = n.op == Op::Conv2d ? n.attrs.ints(AttrKey::dilation)[d] : 1;
    int64_t size = in[2 + d], s = stride[d];
    int64_t out_size = (size + s - 1) / s;
    int64_t total = std::max<int64_t>((out_size - 1) * s + (k - 1) * dil + 1 - size, 0);
    out[d] = total / 2;
    out[2 + d] = total - total / 2;
  }
  return out;
}

// Values that mean the same for this node match: a pattern's literal axis
// may count from the end (graphs store it normalized), and paddings compare
// by the explicit pads they stand for (an ONNX conv with pads [1,1,1,1]
// matches a rule written with pad=same).
bool value_matches(AttrKey key, const AttrValue& pattern, const AttrValue& actual, const Graph& g,
                   const Node& n) {
  if (pattern == actual) return true;
  if (key == AttrKey::pad) {
    const Padding* p = std::get_if<Padding>(&pattern);
    const Padding* v = std::get_if<Padding>(&actual);
    return p && v && n.args.size() >= 1 && g.type(n.args[0]).shape.rank() == 4 &&
           resolved_pads(g, n, *p) == resolved_pads(g, n, *v);
  }
  const int64_t* p = std::get_if<int64_t>(&pattern);
  const int64_t* v = std::get_if<int64_t>(&actual);
  if (key != AttrKey::axis || !p || !v || *p >= 0 || n.args.empty()) return false;
  return *p + g.type(n.args[0]).shape.rank() == *v;
}

// Backtracking over the plan of one rule from one root. Bindings are undone
// through a trail, so the search holds one Match and copies it only to report.
class RuleMatcher {
 public:
  RuleMatcher(const Graph& g, const GraphIndex& index, const MatchCallback& callback)
      : g_(g), index_(index), callback_(callback), seen_(g.size(), 0) {}

  // Every match of `c` rooted at graph node `root`. Buffers are reused
  // across rules and roots: a call allocates nothing once they are grown.
  void run(const CompiledRule& c, int root) {
    c_ = &c;
    rule_ = c.rule;
    m_.rule = &c;
    m_.nodes.assign(rule_->source.nodes.size(), -1);
    m_.vars.assign(rule_->inputs.size(), TensorRef{});
    m_.params.resize(rule_->params.size());
    var_set_.assign(rule_->inputs.size(), 0);
    param_set_.assign(rule_->params.size(), 0);
    swapped_.assign(rule_->source.nodes.size(), 0);
    try_bind(c.plan[0].node, root, 0);
  }

 private:
  enum class Undo : uint8_t { kVar, kParam };

  void step(size_t s) {
    if (s == c_->plan.size()) {
      finish();
      return;
    }
    const PlanStep& st = c_->plan[s];
    if (st.kind == PlanStep::Kind::kDown) {
      const RuleRef& a = rule_->source.nodes[st.from].args[st.arg];
      int k = st.arg;
      if (swapped_[st.from]) k = 1 - k;
      TensorRef t = g_.node(m_.nodes[st.from]).args[k];
      if (t.output != a.output) return;
      try_bind(st.node, t.node, s);
      return;
    }
    TensorRef t = st.via.kind == RuleRef::Kind::kVar
                      ? m_.vars[st.via.index]
                      : TensorRef{m_.nodes[st.via.index], st.via.output};
    for (int u : index_.users[t.node]) try_bind(st.node, u, s);
  }

  void try_bind(int p, int gi, size_t s) {
    const Node& n = g_.node(gi);
    const RuleNode& pn = rule_->source.nodes[p];
    if (n.op != pn.op || n.args.size() != pn.args.size()) return;
    if (static_cast<int>(n.outs.size()) != pn.outputs) return;
    if (std::find(m_.nodes.begin(), m_.nodes.end(), gi) != m_.nodes.end()) return;
    size_t mark = trail_.size();
    if (attrs_match(pn, n)) {
      const bool commute = is_commutative(n.op) && n.args.size() == 2;
      for (int swap = 0; swap <= (commute ? 1 : 0); ++swap) {
        size_t mark2 = trail_.size();
        if (args_match(pn, n, swap != 0)) {
          m_.nodes[p] = gi;
          swapped_[p] = static_cast<char>(swap);
          step(s + 1);
          m_.nodes[p] = -1;
        }
        undo(mark2);
      }
    }
    undo(mark);
  }

  bool attrs_match(const RuleNode& pn, const Node& n) {
    for (const PatternAttr& a : pn.attrs) {
      const AttrValue* v = n.attrs.find(a.key);
      if (!v) return false;
      if (a.form == PatternAttr::Form::kValue) {
        if (!value_matches(a.key, a.value, *v, g_, n)) return false;
      } else if (a.form == PatternAttr::Form::kParam ||
                 a.form == PatternAttr::Form::kParamInverse) {
        // inv(?p) binds ?p to the inverse of the node's permutation.
        AttrValue bound = *v;
        if (a.form == PatternAttr::Form::kParamInverse) {
          const auto* perm = std::get_if<std::vector<int64_t>>(v);
          std::optional<std::vector<int64_t>> inv;
          if (perm) inv = inverse_permutation(*perm);
          if (!inv) return false;
          bound = std::move(*inv);
        }
        int p = param_index(a.param);
        if (param_set_[p]) {
          if (!value_matches(a.key, m_.params[p], bound, g_, n)) return false;
        } else {
          m_.params[p] = std::move(bound);
          param_set_[p] = 1;
          trail_.push_back({Undo::kParam, p});
        }
      } else if (!bind_entries(a, n, *v)) {
        return false;
      }
      // Shape expressions wait until every variable is bound (finish).
    }
    return true;
  }

  // A list whose entries are parameters (`pads=[0,0,?t,?l,0,0,?b,?r]`) binds
  // each to the node's entry; a padding is read as the explicit pads it
  // stands for. The other entries are compared in finish.
  bool bind_entries(const PatternAttr& a, const Node& n, const AttrValue& v) {
    if (std::none_of(a.exprs.begin(), a.exprs.end(),
                     [](const ShapeExpr& e) { return e.kind == ShapeExpr::Kind::kParam; }))
      return true;
    std::vector<int64_t> entries;
    if (const auto* xs = std::get_if<std::vector<int64_t>>(&v)) {
      entries = *xs;
    } else if (const auto* pad = std::get_if<Padding>(&v)) {
      if (n.args.empty() || g_.type(n.args[0]).shape.rank() != 4) return false;
      const std::array<int64_t, 4> r = resolved_pads(g_, n, *pad);
      entries.assign(r.begin(), r.end());
    } else {
      return true;
    }
    if (entries.size() != a.exprs.size()) return false;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (a.exprs[i].kind != ShapeExpr::Kind::kParam) continue;
      const int p = param_index(a.exprs[i].var);
      if (param_set_[p]) {
        const int64_t* bound = std::get_if<int64_t>(&m_.params[p]);
        if (!bound || *bound != entries[i]) return false;
      } else {
        m_.params[p] = entries[i];
        param_set_[p] = 1;
        trail_.push_back({Undo::kParam, p});
      }
    }
    return true;
  }

  bool args_match(const RuleNode& pn, const Node& n, bool swap) {
    for (size_t k = 0; k < pn.args.size(); ++k) {
      const RuleRef& a = pn.args[k];
      TensorRef t = n.args[swap ? 1 - k : k];
      if (a.kind == RuleRef::Kind::kVar) {
        if (var_set_[a.index]) {
          if (!(m_.vars[a.index] == t)) return false;
        } else {
          const int rank = c_->var_ranks[a.index];
          if (rank >= 0 && g_.type(t).shape.rank() != rank) return false;
          m_.vars[a.index] = t;
          var_set_[a.index] = 1;
          trail_.push_back({Undo::kVar, a.index});
        }
      } else if (m_.nodes[a.index] >= 0) {
        if (!(TensorRef{m_.nodes[a.index], a.output} == t)) return false;
      }
    }
    return true;
  }

  int param_index(const std::string& name) const {
    for (size_t p = 0; p < rule_->params.size(); ++p)
      if (rule_->params[p].name == name) return static_cast<int>(p);
    TSO_CHECK(false, "rule " + rule_->name + " uses undeclared parameter ?" + name);
    return -1;
  }

  void undo(size_t mark) {
    while (trail_.size() > mark) {
      auto [kind, i] = trail_.back();
      trail_.pop_back();
      (kind == Undo::kVar ? var_set_ : param_set_)[i] = 0;
    }
  }

  void finish() {
    const RuleSide& src = rule_->source;
    // args_match checks an argument that names a pattern node only when that
    // node is already bound. A node read by two pattern nodes may be bound
    // after one of them (reached down from the other), so every such
    // argument is checked here, once all are bound.
    for (size_t p = 0; p < src.nodes.size(); ++p) {
      const Node& n = g_.node(m_.nodes[p]);
      for (size_t k = 0; k < src.nodes[p].args.size(); ++k) {
        const RuleRef& a = src.nodes[p].args[k];
        if (a.kind == RuleRef::Kind::kNode &&
            !(n.args[swapped_[p] ? 1 - k : k] == TensorRef{m_.nodes[a.index], a.output}))
          return;
      }
    }
    types_.clear();
    for (const TensorRef& v : m_.vars) types_.push_back(g_.type(v));
    for (size_t p = 0; p < src.nodes.size(); ++p) {
      const Node& n = g_.node(m_.nodes[p]);
      for (const PatternAttr& a : src.nodes[p].attrs) {
        if (a.form == PatternAttr::Form::kValue || a.form == PatternAttr::Form::kParam ||
            a.form == PatternAttr::Form::kParamInverse)
          continue;
        Expected<AttrValue> v = pattern_attr_value(a, *rule_, types_, m_.params);
        if (!v || !value_matches(a.key, *v, *n.attrs.find(a.key), g_, n)) return;
      }
    }
    if (!ranks_fit(*rule_, types_)) return;
    for (const Condition& c : rule_->where)
      if (!condition_holds(c, *rule_, types_, m_.params)) return;
    sorted_ = m_.nodes;
    std::sort(sorted_.begin(), sorted_.end());
    for (const TensorRef& v : m_.vars)
      if (std::binary_search(sorted_.begin(), sorted_.end(), v.node)) return;
    // A variable computed from the match would make the target read its own
    // result. Only a pattern with two or more outputs can bind one: a single
    // output is computed from every variable.
    if (src.outputs.size() > 1 && variable_reads_match()) return;
    for (size_t p = 0; p < src.nodes.size(); ++p)
      for (int j = 0; j < src.nodes[p].outputs; ++j)
        if (!c_->result_is_output[p][j] &&
            index_.used_outside(g_, TensorRef{m_.nodes[p], j}, sorted_))
          return;
    callback_(m_);
  }

  // Whether a variable's producer has a matched node among its ancestors.
  // Nodes are in topological order, so the walk stops below the first
  // matched node.
  bool variable_reads_match() {
    const int first = sorted_.front();
    stack_.clear();
    for (const TensorRef& v : m_.vars)
      if (v.node > first) stack_.push_back(v.node);
    bool found = false;
    while (!stack_.empty() && !found) {
      int i = stack_.back();
      stack_.pop_back();
      if (seen_[i]) continue;
      seen_[i] = 1;
      touched_.push_back(i);
      found = std::binary_search(sorted_.begin(), sorted_.end(), i);
      for (const TensorRef& a : g_.node(i).args)
        if (a.node >= first) stack_.push_back(a.node);
    }
    for (int i : touched_) seen_[i] = 0;
    touched_.clear();
    return found;
  }

  const Graph& g_;
  const GraphIndex& index_;
  const MatchCallback& callback_;
  const CompiledRule* c_ = nullptr;
  const Rule* rule_ = nullptr;
  Match m_;
  std::vector<char> var_set_, param_set_, swapped_;
  std::vector<std::pair<Undo, int>> trail_;
  std::vector<TensorType> types_;
  std::vector<int> sorted_;
  std::vector<char> seen_;  // per graph node; all 0 between calls
  std::vector<int> stack_, touched_;
};

// Whether the root's arguments come from the operators the pattern needs
// (either order for a commutative root): most rules of a busy root operator
// fail here, before any matching state is set up.
bool args_may_match(const CompiledRule& c, const Graph& g, const Node& n) {
  const std::vector<int>& want = c.root_arg_ops;
  if (want.size() != n.args.size()) return false;
  auto fits = [&](size_t k, size_t arg) {
    return want[k] < 0 || static_cast<int>(g.node(n.args[arg].node).op) == want[k];
  };
  bool direct = true;
  for (size_t k = 0; k < want.size() && direct; ++k) direct = fits(k, k);
  if (direct) return true;
  return want.size() == 2 && is_commutative(n.op) && fits(0, 1) && fits(1, 0);
}

}  // namespace

void for_each_match(const Graph& g, const GraphIndex& index, const RuleIndex& rules,
                    std::span<const int> roots, const MatchCallback& callback, int min_reach) {
  RuleMatcher matcher(g, index, callback);
  std::vector<int> ids;
  for (int root : roots) {
    rules.candidates(g, g.node(root), &ids);
    for (int id : ids) {
      const CompiledRule& c = rules.rules()[id];
      if (c.reach >= min_reach && args_may_match(c, g, g.node(root))) matcher.run(c, root);
    }
  }
}

void for_each_match(const Graph& g, const GraphIndex& index, const RuleIndex& rules,
                    const MatchCallback& callback) {
  std::vector<int> all(g.size());
  for (int i = 0; i < g.size(); ++i) all[i] = i;
  for_each_match(g, index, rules, all, callback);
}

}  // namespace tso::opt
