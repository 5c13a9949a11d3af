// Instances of lifted rules (verifier/instances.h).
#include "verifier/instances.h"

#include <algorithm>
#include <numeric>

namespace tso::verifier {

namespace {

// Parameters some transpose's perm takes, plainly or inverted.
std::vector<std::string> perm_params(const Rule& rule) {
  std::vector<std::string> out;
  for (const RuleSide* s : {&rule.source, &rule.target})
    for (const RuleNode& n : s->nodes)
      for (const PatternAttr& a : n.attrs)
        if (a.key == AttrKey::perm &&
            (a.form == PatternAttr::Form::kParam || a.form == PatternAttr::Form::kParamInverse) &&
            std::find(out.begin(), out.end(), a.param) == out.end())
          out.push_back(a.param);
  return out;
}

bool axis_param(const Rule& rule, const std::string& name) {
  for (const RuleSide* s : {&rule.source, &rule.target})
    for (const RuleNode& n : s->nodes)
      for (const PatternAttr& a : n.attrs)
        if (a.key == AttrKey::axis && a.form == PatternAttr::Form::kParam && a.param == name)
          return true;
  return false;
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

}  // namespace

std::vector<RuleInstance> rule_instances(const Rule& rule) {
  const std::vector<std::string> names = perm_params(rule);
  if (rule.ranks.vars.empty() && names.empty()) return {{"", rule}};
  std::vector<int> ranks;
  if (!rule.ranks.vars.empty()) {
    for (int r = rule.ranks.lo; r <= rule.ranks.hi; ++r) ranks.push_back(r);
  } else {
    // No clause: every transpose keeps its example rank.
    for (const RuleParam& p : rule.params)
      if (p.name == names[0])
        ranks.push_back(static_cast<int>(std::get<std::vector<int64_t>>(p.example).size()));
  }
  std::vector<RuleInstance> out;
  for (int rank : ranks) {
    const std::vector<std::vector<int64_t>> all = permutations(rank);
    // Every combination of one permutation per parameter, as an odometer.
    std::vector<size_t> pick(names.size(), 0);
    while (true) {
      std::vector<std::vector<int64_t>> perms;
      std::string label = "rank " + std::to_string(rank);
      for (size_t k = 0; k < names.size(); ++k) {
        perms.push_back(all[pick[k]]);
        label += ", ?" + names[k] + "=" + perm_text(all[pick[k]]);
      }
      out.push_back({label, instance(rule, rank, names, perms)});
      size_t k = 0;
      while (k < pick.size() && ++pick[k] == all.size()) pick[k++] = 0;
      if (k == pick.size()) break;
    }
  }
  return out;
}

}  // namespace tso::verifier
