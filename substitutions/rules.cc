// The canonical printer of rule files and the instantiation of rule sides
// into concrete graphs.
#include "substitutions/rules.h"

#include <algorithm>
#include <array>
#include <optional>

#include "substitutions/rule_internal.h"

namespace tso {

ShapeExpr ShapeExpr::lit(int64_t v) {
  ShapeExpr e;
  e.value = v;
  return e;
}

ShapeExpr ShapeExpr::dim(std::string var, int64_t axis) {
  ShapeExpr e;
  e.kind = Kind::kDim;
  e.var = std::move(var);
  e.value = axis;
  return e;
}

ShapeExpr ShapeExpr::param(std::string name) {
  ShapeExpr e;
  e.kind = Kind::kParam;
  e.var = std::move(name);
  return e;
}

ShapeExpr ShapeExpr::binary(Kind kind, ShapeExpr a, ShapeExpr b) {
  ShapeExpr e;
  e.kind = kind;
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return e;
}

namespace {

using Kind = ShapeExpr::Kind;

int precedence(const ShapeExpr& e) {
  switch (e.kind) {
    case Kind::kAdd:
    case Kind::kSub:
      return 1;
    case Kind::kMul:
    case Kind::kDiv:
      return 2;
    default:
      return 3;
  }
}

// Left-associative operators: the right operand needs parentheses at equal
// precedence, so that printing then parsing rebuilds the same tree.
std::string expr_text(const ShapeExpr& e, int min_prec) {
  std::string s;
  switch (e.kind) {
    case Kind::kLit:
      s = std::to_string(e.value);
      break;
    case Kind::kDim:
      s = "dim(" + e.var + "," + std::to_string(e.value) + ")";
      break;
    case Kind::kParam:
      s = "?" + e.var;
      break;
    case Kind::kAdd:
    case Kind::kSub:
    case Kind::kMul:
    case Kind::kDiv: {
      int p = precedence(e);
      const char* op = e.kind == Kind::kAdd   ? " + "
                       : e.kind == Kind::kSub ? " - "
                       : e.kind == Kind::kMul ? " * "
                                              : " / ";
      s = expr_text(e.args[0], p) + op + expr_text(e.args[1], p + 1);
      break;
    }
  }
  return precedence(e) < min_prec ? "(" + s + ")" : s;
}

}  // namespace

std::string to_string(const ShapeExpr& e) { return expr_text(e, 0); }

Expected<int64_t> apply_binary(const ShapeExpr& e, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (e.kind) {
    case Kind::kAdd:
      if (__builtin_add_overflow(a, b, &r)) break;
      return r;
    case Kind::kSub:
      if (__builtin_sub_overflow(a, b, &r)) break;
      return r;
    case Kind::kMul:
      if (__builtin_mul_overflow(a, b, &r)) break;
      return r;
    case Kind::kDiv:
      if (b == 0) return Error{to_string(e) + " divides by zero"};
      if (a % b != 0)
        return Error{to_string(e) + ": " + std::to_string(a) + " is not a multiple of " +
                     std::to_string(b)};
      return a / b;
    default:
      return Error{to_string(e) + " is not a binary expression"};
  }
  return Error{to_string(e) + " overflows"};
}

const char* status_name(RuleStatus::Kind kind) {
  switch (kind) {
    case RuleStatus::Kind::kUnverified:
      return "unverified";
    case RuleStatus::Kind::kVerified:
      return "verified";
    case RuleStatus::Kind::kRefuted:
      return "refuted";
    case RuleStatus::Kind::kUnknown:
      return "unknown";
    case RuleStatus::Kind::kPartial:
      return "partial";
    case RuleStatus::Kind::kExact:
      return "exact";
  }
  return "?";
}

namespace rules_internal {

bool default_value(AttrKey key, AttrValue* out) {
  const std::optional<AttrValue>& d = attr_default(key);
  if (d) *out = *d;
  return d.has_value();
}

bool is_default_value(AttrKey key, const AttrValue& v) {
  AttrValue d;
  return default_value(key, &d) && d == v;
}

std::vector<std::vector<std::string>> local_names(const RuleSide& side) {
  std::vector<std::vector<std::string>> names(side.nodes.size());
  int next = 0;
  for (size_t i = 0; i < side.nodes.size(); ++i)
    for (int k = 0; k < side.nodes[i].outputs; ++k)
      names[i].push_back("%" + std::to_string(next++));
  return names;
}

std::string ref_text(const Rule& rule, const std::vector<std::vector<std::string>>& locals,
                     const RuleRef& r) {
  if (r.kind == RuleRef::Kind::kVar) return rule.inputs[r.index].name;
  return locals[r.index][r.output];
}

namespace {

std::string attr_text(const PatternAttr& a) {
  std::string s = std::string(attr_info(a.key).name) + "=";
  switch (a.form) {
    case PatternAttr::Form::kValue:
      return s + print_attr_value(a.value);
    case PatternAttr::Form::kParam:
      return s + "?" + a.param;
    case PatternAttr::Form::kParamInverse:
      return s + "inv(?" + a.param + ")";
    case PatternAttr::Form::kExpr:
      return s + to_string(a.exprs[0]);
    case PatternAttr::Form::kExprList:
    case PatternAttr::Form::kExprPads: {
      s += "[";
      for (size_t i = 0; i < a.exprs.size(); ++i) s += (i ? ", " : "") + to_string(a.exprs[i]);
      return s + "]";
    }
  }
  return s;
}

std::string statement_text(const Rule& rule, const RuleSide& side,
                           const std::vector<std::vector<std::string>>& locals, int index) {
  const RuleNode& n = side.nodes[index];
  std::string s;
  for (size_t k = 0; k < locals[index].size(); ++k) s += (k ? ", " : "") + locals[index][k];
  s += " = " + std::string(op_name(n.op)) + "(";
  const char* sep = "";
  for (const RuleRef& a : n.args) {
    s += sep + ref_text(rule, locals, a);
    sep = ", ";
  }
  for (const PatternAttr& a : n.attrs) {
    if (a.form == PatternAttr::Form::kValue && is_default_value(a.key, a.value)) continue;
    s += sep + attr_text(a);
    sep = ", ";
  }
  return s + ")";
}

}  // namespace

std::string node_text(const Rule& rule, const RuleSide& side, int index) {
  return statement_text(rule, side, local_names(side), index);
}

}  // namespace rules_internal

namespace {

using namespace rules_internal;

std::string condition_text(const Condition& c) {
  if (c.kind == Condition::Kind::kOdd) return "odd(" + to_string(c.lhs) + ")";
  static const char* kOps[] = {" == ", " != ", " < ", " <= "};
  return to_string(c.lhs) + kOps[static_cast<int>(c.kind)] + to_string(c.rhs);
}

// A bare word when the lexer reads it back as one, a quoted string otherwise.
std::string word_text(const std::string& w) {
  bool bare = !w.empty();
  for (char c : w)
    bare = bare && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '+');
  return bare ? w : print_attr_value(AttrValue{w});
}

void print_side(std::string* out, const char* title, const Rule& rule, const RuleSide& side) {
  auto locals = local_names(side);
  *out += std::string("  ") + title + " {\n";
  for (size_t i = 0; i < side.nodes.size(); ++i)
    *out += "    " + statement_text(rule, side, locals, static_cast<int>(i)) + "\n";
  *out += "    output ";
  for (size_t k = 0; k < side.outputs.size(); ++k)
    *out += (k ? ", " : "") + ref_text(rule, locals, side.outputs[k]);
  *out += "\n  }\n";
}

// `correction { statements; box %P output=K at=[...] }`, one box line per
// patch.
void print_correction(std::string* out, const Rule& rule) {
  const Correction& c = rule.correction;
  auto locals = local_names(c.side);
  *out += "  correction {\n";
  for (size_t i = 0; i < c.side.nodes.size(); ++i)
    *out += "    " + statement_text(rule, c.side, locals, static_cast<int>(i)) + "\n";
  for (size_t k = 0; k < c.boxes.size(); ++k) {
    *out += "    box " + ref_text(rule, locals, c.side.outputs[k]) +
            " output=" + std::to_string(c.boxes[k].output) + " at=[";
    for (size_t a = 0; a < c.boxes[k].at.size(); ++a)
      *out += (a ? ", " : "") + to_string(c.boxes[k].at[a]);
    *out += "]\n";
  }
  *out += "  }\n";
}

}  // namespace

std::string print_rule(const Rule& rule) {
  std::string out = "rule " + rule.name + " {\n";
  if (rule.origin.kind == RuleOrigin::Kind::kGenerated) {
    out += "  origin generated version=" + word_text(rule.origin.version) +
           " ops=" + word_text(rule.origin.ops) + " seed=" + std::to_string(rule.origin.seed) +
           "\n";
  } else {
    out += "  origin handwritten\n";
  }
  const std::string& d = rule.status.detail;
  out += std::string("  status ") + status_name(rule.status.kind);
  switch (rule.status.kind) {
    case RuleStatus::Kind::kUnverified:
      break;
    case RuleStatus::Kind::kVerified:
      out += " specs=" + word_text(d);
      break;
    case RuleStatus::Kind::kRefuted:
      out += " model=" + print_attr_value(AttrValue{d});
      break;
    case RuleStatus::Kind::kUnknown:
      out += " reason=" + print_attr_value(AttrValue{d});
      break;
    case RuleStatus::Kind::kPartial:
    case RuleStatus::Kind::kExact:
      out += " boxes=" + word_text(d);
      break;
  }
  out += "\n";
  if (rule.one_way) out += "  oneway\n";
  for (const RuleVar& v : rule.inputs) out += "  input " + v.name + ": " + to_string(v.type) + "\n";
  for (const RuleParam& p : rule.params)
    out += "  param ?" + p.name + " = " + print_attr_value(p.example) + "\n";
  if (!rule.ranks.vars.empty()) {
    out += "  rank";
    for (const std::string& v : rule.ranks.vars) out += " " + v;
    out += " in " + std::to_string(rule.ranks.lo) + ".." + std::to_string(rule.ranks.hi) + "\n";
  }
  for (const Condition& c : rule.where) out += "  where " + condition_text(c) + "\n";
  print_side(&out, "source", rule, rule.source);
  print_side(&out, "target", rule, rule.target);
  if (!rule.correction.boxes.empty()) print_correction(&out, rule);
  return out + "}\n";
}

std::string print_rules(const RuleSet& set) {
  std::string out = "# tso rules v1\n";
  for (const std::string& line : set.header) out += line.empty() ? "#\n" : "# " + line + "\n";
  for (const Rule& r : set.rules) out += "\n" + print_rule(r);
  return out;
}

// ---------------------------------------------------------------------------
// Instantiation

namespace {

struct Env {
  const Rule& rule;
  const RuleBindings& bindings;

  const TensorType* type_of(const std::string& var) const {
    if (auto it = bindings.types.find(var); it != bindings.types.end()) return &it->second;
    for (const RuleVar& v : rule.inputs)
      if (v.name == var) return &v.type;
    return nullptr;
  }
  const AttrValue* param(const std::string& name) const {
    if (auto it = bindings.params.find(name); it != bindings.params.end()) return &it->second;
    for (const RuleParam& p : rule.params)
      if (p.name == name) return &p.example;
    return nullptr;
  }
};

Expected<int64_t> eval(const ShapeExpr& e, const Env& env) {
  return eval_shape_expr(
      e, [&](const std::string& var) { return env.type_of(var); },
      [&](const std::string& name) { return env.param(name); });
}

Expected<AttrValue> attr_value(const PatternAttr& a, const Env& env) {
  switch (a.form) {
    case PatternAttr::Form::kValue:
      return a.value;
    case PatternAttr::Form::kParam: {
      const AttrValue* v = env.param(a.param);
      if (!v) return Error{"parameter ?" + a.param + " has no value"};
      if (!attr_value_has_type(*v, attr_info(a.key).type))
        return Error{"parameter ?" + a.param + " = " + print_attr_value(*v) +
                     " has the wrong type for attribute " + std::string(attr_info(a.key).name)};
      return *v;
    }
    case PatternAttr::Form::kParamInverse: {
      const AttrValue* v = env.param(a.param);
      if (!v) return Error{"parameter ?" + a.param + " has no value"};
      const auto* perm = std::get_if<std::vector<int64_t>>(v);
      std::optional<std::vector<int64_t>> inv;
      if (perm) inv = inverse_permutation(*perm);
      if (!inv)
        return Error{"inv(?" + a.param + "): " + print_attr_value(*v) + " is not a permutation"};
      return AttrValue{std::move(*inv)};
    }
    default:
      break;
  }
  std::vector<int64_t> xs;
  for (const ShapeExpr& e : a.exprs) {
    Expected<int64_t> x = eval(e, env);
    if (!x) return x.error();
    xs.push_back(*x);
  }
  if (a.form == PatternAttr::Form::kExpr) return AttrValue{xs[0]};
  if (a.form == PatternAttr::Form::kExprList) return AttrValue{std::move(xs)};
  return AttrValue{Padding{Padding::kExplicit, {xs[0], xs[1], xs[2], xs[3]}}};
}

Expected<bool> holds(const Condition& c, const Env& env) {
  Expected<int64_t> l = eval(c.lhs, env);
  if (!l) return l.error();
  Expected<int64_t> r = c.kind == Condition::Kind::kOdd ? 0 : eval(c.rhs, env);
  if (!r) return r.error();
  return satisfies(c.kind, *l, *r);
}

}  // namespace

bool satisfies(Condition::Kind kind, int64_t l, int64_t r) {
  switch (kind) {
    case Condition::Kind::kEq:
      return l == r;
    case Condition::Kind::kNe:
      return l != r;
    case Condition::Kind::kLt:
      return l < r;
    case Condition::Kind::kLe:
      return l <= r;
    case Condition::Kind::kOdd:
      return l % 2 != 0;
  }
  return false;
}

std::optional<std::vector<int64_t>> inverse_permutation(const std::vector<int64_t>& perm) {
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> inv(perm.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= n || inv[perm[i]] >= 0) return std::nullopt;
    inv[perm[i]] = i;
  }
  return inv;
}

bool ranks_fit(const Rule& rule, std::span<const TensorType> var_types) {
  const RankClause& c = rule.ranks;
  int common = -1;
  for (size_t v = 0; v < rule.inputs.size(); ++v) {
    const int rank = var_types[v].shape.rank();
    if (std::find(c.vars.begin(), c.vars.end(), rule.inputs[v].name) == c.vars.end()) {
      if (rank != rule.inputs[v].type.shape.rank()) return false;
    } else if (rank < c.lo || rank > c.hi || (common >= 0 && rank != common)) {
      return false;
    } else {
      common = rank;
    }
  }
  return true;
}

RuleSide corrected_target(const Rule& rule) {
  RuleSide s = rule.target;
  const Correction& c = rule.correction;
  const int base = static_cast<int>(s.nodes.size());
  auto shifted = [base](RuleRef r) {
    if (r.kind == RuleRef::Kind::kNode) r.index += base;
    return r;
  };
  for (RuleNode n : c.side.nodes) {
    for (RuleRef& a : n.args) a = shifted(a);
    s.nodes.push_back(std::move(n));
  }
  for (size_t k = 0; k < c.boxes.size(); ++k) {
    const CorrectionBox& box = c.boxes[k];
    RuleNode write;
    write.op = Op::UpdateSlice;
    write.args = {s.outputs[box.output], shifted(c.side.outputs[k])};
    PatternAttr starts;
    starts.key = AttrKey::starts;
    starts.form = PatternAttr::Form::kExprList;
    starts.exprs = box.at;
    write.attrs.push_back(std::move(starts));
    s.outputs[box.output] = RuleRef{RuleRef::Kind::kNode, static_cast<int>(s.nodes.size()), 0};
    s.nodes.push_back(std::move(write));
  }
  return s;
}

namespace rules_internal {

Expected<Graph> instantiate_side(const Rule& rule, RuleSideKind which, const RuleBindings& bindings,
                                 Failure* failure) {
  RuleSide corrected;
  if (which == RuleSideKind::kCorrected) corrected = corrected_target(rule);
  const RuleSide& side = which == RuleSideKind::kSource   ? rule.source
                         : which == RuleSideKind::kTarget ? rule.target
                                                          : corrected;
  const char* side_name = which == RuleSideKind::kSource   ? "source"
                          : which == RuleSideKind::kTarget ? "target"
                                                           : "corrected target";
  Env env{rule, bindings};
  auto fail = [&](Failure::What what, int index, const std::string& msg) {
    if (failure) *failure = {what, index};
    return Error{"rule " + rule.name + ", " + side_name + ": " + msg};
  };
  for (size_t i = 0; i < rule.where.size(); ++i) {
    Expected<bool> ok = holds(rule.where[i], env);
    if (!ok) return fail(Failure::What::kWhere, int(i), ok.error().message);
    if (!*ok)
      return fail(Failure::What::kWhere, int(i),
                  "condition `" + condition_text(rule.where[i]) + "` does not hold");
  }
  GraphBuilder b(rule.name + "." + side_name);
  std::vector<TensorRef> vars;
  for (const RuleVar& v : rule.inputs) vars.push_back(b.input(v.name, *env.type_of(v.name)));
  std::vector<std::vector<TensorRef>> outs(side.nodes.size());
  auto resolve = [&](const RuleRef& r) {
    return r.kind == RuleRef::Kind::kVar ? vars[r.index] : outs[r.index][r.output];
  };
  auto locals = local_names(side);
  for (size_t i = 0; i < side.nodes.size(); ++i) {
    const RuleNode& n = side.nodes[i];
    auto node_fail = [&](const std::string& msg) {
      return fail(Failure::What::kNode, int(i),
                  "`" + statement_text(rule, side, locals, int(i)) + "`: " + msg);
    };
    Attrs attrs;
    for (const PatternAttr& a : n.attrs) {
      Expected<AttrValue> v = attr_value(a, env);
      if (!v) return node_fail(v.error().message);
      attrs.set(a.key, std::move(*v));
    }
    std::vector<TensorRef> args;
    for (const RuleRef& a : n.args) args.push_back(resolve(a));
    Expected<std::vector<TensorRef>> r =
        b.add(n.op, std::move(args), std::move(attrs), locals[i][0]);
    if (!r) return node_fail(r.error().message);
    if (static_cast<int>(r->size()) != n.outputs)
      return node_fail("the statement names " + std::to_string(n.outputs) + " results but " +
                       std::string(op_name(n.op)) + " gives " + std::to_string(r->size()));
    outs[i] = std::move(*r);
  }
  for (size_t k = 0; k < side.outputs.size(); ++k)
    b.output("out" + std::to_string(k), resolve(side.outputs[k]));
  Expected<Graph> g = b.finish();
  if (!g) return fail(Failure::What::kOutputs, -1, g.error().message);
  return g;
}

}  // namespace rules_internal

Expected<Graph> instantiate(const Rule& rule, RuleSideKind side, const RuleBindings& bindings) {
  return rules_internal::instantiate_side(rule, side, bindings, nullptr);
}

}  // namespace tso
