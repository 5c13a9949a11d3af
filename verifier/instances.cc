// Instances of lifted rules (verifier/instances.h).
#include "verifier/instances.h"

#include <algorithm>
#include <numeric>
#include <variant>

namespace tso::verifier {

namespace {

// Calls visit(node, attr) for every attribute of every node of both sides.
template <typename Visit>
void each_attr(const Rule& rule, const Visit& visit) {
  for (const RuleSide* s : {&rule.source, &rule.target})
    for (const RuleNode& n : s->nodes)
      for (const PatternAttr& a : n.attrs) visit(n, a);
}

// Parameters some transpose's perm takes, plainly or inverted.
std::vector<std::string> perm_params(const Rule& rule) {
  std::vector<std::string> out;
  each_attr(rule, [&](const RuleNode&, const PatternAttr& a) {
    if (a.key == AttrKey::perm &&
        (a.form == PatternAttr::Form::kParam || a.form == PatternAttr::Form::kParamInverse) &&
        std::find(out.begin(), out.end(), a.param) == out.end())
      out.push_back(a.param);
  });
  return out;
}

// Integer parameters that only ever give the axis of a concat or a split:
// the ones an instance pins.
std::vector<std::string> axis_params(const Rule& rule) {
  std::vector<std::string> out;
  for (const RuleParam& p : rule.params) {
    if (!std::holds_alternative<int64_t>(p.example)) continue;
    bool axis = false, other = false;
    each_attr(rule, [&](const RuleNode& n, const PatternAttr& a) {
      if (a.param != p.name) return;
      const bool concat_axis = a.key == AttrKey::axis && a.form == PatternAttr::Form::kParam &&
                               (n.op == Op::Concat || n.op == Op::Split);
      (concat_axis ? axis : other) = true;
    });
    if (axis && !other) out.push_back(p.name);
  }
  return out;
}

bool axis_param(const Rule& rule, const std::string& name) {
  bool found = false;
  each_attr(rule, [&](const RuleNode&, const PatternAttr& a) {
    found = found || (a.key == AttrKey::axis && a.form == PatternAttr::Form::kParam &&
                      a.param == name);
  });
  return found;
}

// The largest rank of any tensor of either side at the example types, 0
// when the rule does not instantiate there: an axis at or past it names no
// axis of the instance.
int max_rank(const Rule& rule) {
  int most = 0;
  for (RuleSideKind side : {RuleSideKind::kSource, RuleSideKind::kTarget}) {
    Expected<Graph> g = instantiate(rule, side);
    if (!g) return 0;
    for (const Node& n : g->nodes())
      for (const TensorType& t : n.outs) most = std::max(most, t.shape.rank());
  }
  return most;
}

std::vector<std::vector<int64_t>> permutations(int rank) {
  std::vector<int64_t> p(static_cast<size_t>(rank));
  std::iota(p.begin(), p.end(), 0);
  std::vector<std::vector<int64_t>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

Shape at_rank(const Shape& s, int rank) {
  Shape out;
  for (int i = s.rank(); i < rank; ++i) out.push_back(2);
  for (int i = std::max(0, s.rank() - rank); i < s.rank(); ++i) out.push_back(s[i]);
  return out;
}

// `rule` with its clause variables at `rank` and the permutation parameters
// replaced by `perms` (their values, in perm_params order).
Rule instance(const Rule& rule, int rank, const std::vector<std::string>& names,
              const std::vector<std::vector<int64_t>>& perms) {
  Rule r = rule;
  int example_rank = rank;
  for (RuleVar& v : r.inputs)
    if (std::find(rule.ranks.vars.begin(), rule.ranks.vars.end(), v.name) !=
        rule.ranks.vars.end()) {
      example_rank = v.type.shape.rank();
      v.type.shape = at_rank(v.type.shape, rank);
    }
  r.ranks = RankClause{};
  // An axis parameter's example names the same axis, counted from the end
  // (the translation infers the example types with it).
  for (RuleParam& p : r.params)
    if (int64_t* a = std::get_if<int64_t>(&p.example); a && *a >= 0 && axis_param(rule, p.name))
      *a = std::max<int64_t>(0, *a + rank - example_rank);
  for (size_t k = 0; k < names.size(); ++k) {
    for (RuleSide* s : {&r.source, &r.target})
      for (RuleNode& n : s->nodes)
        for (PatternAttr& a : n.attrs) {
          if (a.param != names[k] || a.key != AttrKey::perm) continue;
          if (a.form == PatternAttr::Form::kParam) a.value = perms[k];
          if (a.form == PatternAttr::Form::kParamInverse) a.value = *inverse_permutation(perms[k]);
          a.form = PatternAttr::Form::kValue;
          a.param.clear();
        }
    std::erase_if(r.params, [&](const RuleParam& p) { return p.name == names[k]; });
  }
  return r;
}

std::string perm_text(const std::vector<int64_t>& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
  return s + "]";
}

// `base` with its axis parameters `names` at `values`, the example types
// moved with them: each pinned axis swaps extents with the example's axis in
// every variable the rank clause binds (every variable without a clause),
// which keeps a concat's operands agreeing and a split's sizes summing. Where
// the moved examples do not instantiate, the examples stay as they were and
// only the proof pins the axes.
RuleInstance with_axes(const Rule& base, const std::string& label,
                       const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  RuleInstance out{label, base, {}};
  Rule moved = base;
  bool movable = true;
  for (size_t k = 0; k < names.size(); ++k) {
    out.label += (out.label.empty() ? "?" : ", ?") + names[k] + "=" + std::to_string(values[k]);
    out.pins[names[k]] = values[k];
    for (RuleParam& p : moved.params) {
      if (p.name != names[k]) continue;
      const int64_t from = std::get<int64_t>(p.example), to = values[k];
      movable = movable && from >= 0;
      for (RuleVar& v : moved.inputs) {
        const bool bound = base.ranks.vars.empty() ||
                           std::find(base.ranks.vars.begin(), base.ranks.vars.end(), v.name) !=
                               base.ranks.vars.end();
        if (!bound || std::max(from, to) >= v.type.shape.rank()) continue;
        std::swap(v.type.shape[static_cast<int>(from)], v.type.shape[static_cast<int>(to)]);
      }
      p.example = to;
    }
  }
  if (movable && max_rank(moved) > 0) out.rule = std::move(moved);
  return out;
}

}  // namespace

std::vector<RuleInstance> rule_instances(const Rule& rule) {
  const std::vector<std::string> names = perm_params(rule);
  const std::vector<std::string> axes = axis_params(rule);
  const bool clause = !rule.ranks.vars.empty();
  if (!clause && names.empty() && axes.empty()) return {{"", rule, {}}};
  std::vector<int> ranks;
  if (clause) {
    for (int r = rule.ranks.lo; r <= rule.ranks.hi; ++r) ranks.push_back(r);
  } else if (!names.empty()) {
    // No clause: every transpose keeps its example rank.
    for (const RuleParam& p : rule.params)
      if (p.name == names[0])
        ranks.push_back(static_cast<int>(std::get<std::vector<int64_t>>(p.example).size()));
  } else {
    ranks.push_back(0);  // the example ranks: instance() changes no type
  }
  // Every combination of one value per slot (each below its bound), as an
  // odometer.
  auto each = [](const std::vector<size_t>& bounds, const auto& visit) {
    std::vector<size_t> pick(bounds.size(), 0);
    while (true) {
      visit(pick);
      size_t k = 0;
      while (k < pick.size() && ++pick[k] == bounds[k]) pick[k++] = 0;
      if (k == pick.size()) return;
    }
  };
  std::vector<RuleInstance> out;
  for (int rank : ranks) {
    const std::vector<std::vector<int64_t>> all = permutations(rank);
    each(std::vector<size_t>(names.size(), all.size()), [&](const std::vector<size_t>& pick) {
      std::vector<std::vector<int64_t>> perms;
      std::string label = clause || !names.empty() ? "rank " + std::to_string(rank) : "";
      for (size_t k = 0; k < names.size(); ++k) {
        perms.push_back(all[pick[k]]);
        label += ", ?" + names[k] + "=" + perm_text(all[pick[k]]);
      }
      Rule base = instance(rule, rank, names, perms);
      const int bound = axes.empty() ? 0 : max_rank(base);
      if (bound == 0) {
        // No axis to pin, or the example does not instantiate: the axes stay
        // symbolic.
        out.push_back({label, std::move(base), {}});
        return;
      }
      each(std::vector<size_t>(axes.size(), static_cast<size_t>(bound)),
           [&](const std::vector<size_t>& at) {
             const std::vector<int64_t> values(at.begin(), at.end());
             out.push_back(with_axes(base, label, axes, values));
           });
    });
  }
  return out;
}

}  // namespace tso::verifier
