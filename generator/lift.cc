// Lifted copies of generated rules (generator/lift.h).
#include "generator/lift.h"

#include <algorithm>

namespace tso::gen {

namespace {

const char* param_name(AttrKey k) {
  switch (k) {
    case AttrKey::stride: return "s";
    case AttrKey::pad: return "p";
    case AttrKey::dilation: return "d";
    case AttrKey::groups: return "g";
    default: TSO_CHECK(false, "lift: not a liftable conv2d attribute"); return "";
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

std::vector<RuleNode*> conv_nodes(Rule* r) {
  std::vector<RuleNode*> out;
  for (RuleSide* side : {&r->source, &r->target})
    for (RuleNode& n : side->nodes)
      if (n.op == Op::Conv2d) out.push_back(&n);
  return out;
}

}  // namespace

std::optional<Rule> lift_rule(const Rule& rule, const std::vector<AttrKey>& keys) {
  Rule lifted = rule;
  std::vector<RuleNode*> convs = conv_nodes(&lifted);
  if (convs.empty()) return std::nullopt;
  for (AttrKey k : keys) {
    const PatternAttr first = attr_of(*convs[0], k);
    if (first.form != PatternAttr::Form::kValue) continue;
    if (!std::all_of(convs.begin(), convs.end(),
                     [&](const RuleNode* n) { return attr_of(*n, k) == first; }))
      continue;
    PatternAttr p;
    p.key = k;
    p.form = PatternAttr::Form::kParam;
    p.param = param_name(k);
    for (RuleNode* n : convs) set_attr(n, p);
    lifted.params.push_back({p.param, first.value});
  }
  if (lifted.params.size() == rule.params.size()) return std::nullopt;
  lifted.name += "_lifted";
  return lifted;
}

}  // namespace tso::gen
