#include "optimizer/reverse_rule.h"

#include <set>
#include <string>

namespace tso::opt {
namespace {

void expr_vars(const ShapeExpr& e, std::set<std::string>* out) {
  if (e.kind == ShapeExpr::Kind::kDim) out->insert(e.var);
  for (const ShapeExpr& a : e.args) expr_vars(a, out);
}

// Parameters a shape expression names: a whole entry binds one (matcher.h).
void expr_params(const ShapeExpr& e, std::set<std::string>* out) {
  if (e.kind == ShapeExpr::Kind::kParam) out->insert(e.var);
  for (const ShapeExpr& a : e.args) expr_params(a, out);
}

// Variables a side's shape expressions mention, and parameters it uses.
void side_uses(const RuleSide& s, std::set<std::string>* vars, std::set<std::string>* params) {
  for (const RuleNode& n : s.nodes)
    for (const PatternAttr& a : n.attrs) {
      if (a.form == PatternAttr::Form::kParam || a.form == PatternAttr::Form::kParamInverse)
        params->insert(a.param);
      for (const ShapeExpr& e : a.exprs) {
        expr_vars(e, vars);
        expr_params(e, params);
      }
    }
}

}  // namespace

Expected<Rule> reverse_rule(const Rule& rule) {
  if (rule.one_way) return Error{"rule " + rule.name + ": not reversed: declared oneway"};
  const RuleSide& t = rule.target;
  for (const RuleRef& o : t.outputs)
    if (o.kind == RuleRef::Kind::kVar)
      return Error{"rule " + rule.name + ": not reversible: target output " +
                   rule.inputs[o.index].name + " is a bare variable"};
  std::set<std::string> bound;
  for (const RuleNode& n : t.nodes)
    for (const RuleRef& a : n.args)
      if (a.kind == RuleRef::Kind::kVar) bound.insert(rule.inputs[a.index].name);
  std::set<std::string> vars, source_params, target_params;
  for (const RuleNode& n : rule.source.nodes)
    for (const RuleRef& a : n.args)
      if (a.kind == RuleRef::Kind::kVar) vars.insert(rule.inputs[a.index].name);
  side_uses(rule.source, &vars, &source_params);
  side_uses(t, &vars, &target_params);
  for (const Condition& c : rule.where) {
    expr_vars(c.lhs, &vars);
    expr_vars(c.rhs, &vars);
  }
  for (const std::string& v : vars)
    if (!bound.contains(v))
      return Error{"rule " + rule.name + ": not reversible: the target does not bind variable " +
                   v};
  for (const std::string& p : source_params)
    if (!target_params.contains(p))
      return Error{"rule " + rule.name + ": not reversible: the target does not bind parameter ?" +
                   p};
  Rule r = rule;
  r.name = rule.name + " (reverse)";
  std::swap(r.source, r.target);
  return r;
}

}  // namespace tso::opt
