// Graph substitution rules: the data the generator writes, the verifier
// proves and the optimizer applies. A rule is a pair of small pattern graphs
// (source and target) over the same named tensor variables, with the same
// number of outputs: output i of the source is replaced by output i of the
// target. Attribute values may be shape expressions over the variables
// (`dim(w1,0)`) or parameter variables (`?k`), so one rule covers every shape
// at which both sides are valid.
//
// The text format (v1) is documented in substitutions/README.md; this header
// holds its in-memory form, the loader, the canonical printer
// (`parse_rules(print_rules(s)) == s`) and `instantiate`, which turns one
// side into a concrete core Graph at chosen variable types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/ops.h"
#include "core/types.h"

namespace tso {

// An integer expression over the extents of the rule's variables and its
// integer parameters (`?t`: an entry of a list attribute such as a pad's
// `pads`, bound where the source names it as a whole entry). `/` is exact
// division: where the quotient is not an integer the expression has no
// value, so a rule that needs `dim(x,2) / 2` applies only at even extents.
struct ShapeExpr {
  enum class Kind : uint8_t { kLit, kDim, kAdd, kSub, kMul, kDiv, kParam };
  Kind kind = Kind::kLit;
  int64_t value = 0;            // kLit: the literal; kDim: the axis (negative counts from the end)
  std::string var;              // kDim: the variable; kParam: the parameter, without the '?'
  std::vector<ShapeExpr> args;  // kAdd, kSub, kMul, kDiv: the two operands

  static ShapeExpr lit(int64_t v);
  static ShapeExpr dim(std::string var, int64_t axis);
  static ShapeExpr param(std::string name);
  static ShapeExpr binary(Kind kind, ShapeExpr a, ShapeExpr b);
  friend bool operator==(const ShapeExpr&, const ShapeExpr&) = default;
};

// "dim(w1,0) + dim(w2,0)": canonical text, minimal parentheses.
std::string to_string(const ShapeExpr& e);

// The value of binary expression `e` (kAdd, kSub, kMul or kDiv) from its
// operands' values; an error on overflow, division by zero or a remainder.
Expected<int64_t> apply_binary(const ShapeExpr& e, int64_t a, int64_t b);

// The value of `e`: `type_of(var)` gives the type a variable is bound to and
// `param_of(name)` the value of a parameter (each a pointer, null when it has
// none). The one evaluator of instantiation and of the optimizer's matcher.
template <class TypeOf, class ParamOf>
Expected<int64_t> eval_shape_expr(const ShapeExpr& e, const TypeOf& type_of,
                                  const ParamOf& param_of) {
  switch (e.kind) {
    case ShapeExpr::Kind::kLit:
      return e.value;
    case ShapeExpr::Kind::kDim: {
      const TensorType* t = type_of(e.var);
      if (!t) return Error{"unknown variable " + e.var + " in " + to_string(e)};
      const int64_t axis = e.value < 0 ? e.value + t->shape.rank() : e.value;
      if (axis < 0 || axis >= t->shape.rank())
        return Error{to_string(e) + ": axis out of range for " + e.var + ": " + to_string(*t)};
      return t->shape[static_cast<int>(axis)];
    }
    case ShapeExpr::Kind::kParam: {
      const AttrValue* v = param_of(e.var);
      const int64_t* x = v ? std::get_if<int64_t>(v) : nullptr;
      if (!x) return Error{"parameter ?" + e.var + " has no integer value"};
      return *x;
    }
    default:
      break;
  }
  Expected<int64_t> a = eval_shape_expr(e.args[0], type_of, param_of);
  if (!a) return a;
  Expected<int64_t> b = eval_shape_expr(e.args[1], type_of, param_of);
  if (!b) return b;
  return apply_binary(e, *a, *b);
}

// An attribute of a pattern node. Attributes a node does not mention hold
// their default value, so two nodes with the same meaning compare equal.
struct PatternAttr {
  enum class Form : uint8_t {
    kValue,         // a concrete value (`value`)
    kParam,         // `?name`: bound by the source, reused by the target
    kExpr,          // an Int attribute given by one shape expression (`exprs[0]`)
    kExprList,      // an Ints attribute given by a list of shape expressions
    kExprPads,      // an explicit padding [top, left, bottom, right] of shape expressions
    kParamInverse,  // `inv(?name)` (transpose perm only): the inverse of the permutation ?name
  };
  AttrKey key{};
  Form form = Form::kValue;
  AttrValue value;               // kValue
  std::string param;             // kParam, without the '?'
  std::vector<ShapeExpr> exprs;  // kExpr, kExprList, kExprPads
  friend bool operator==(const PatternAttr&, const PatternAttr&) = default;
};

// A tensor inside a rule: a variable (by index into Rule::inputs) or an
// output of an earlier node of the same side.
struct RuleRef {
  enum class Kind : uint8_t { kVar, kNode };
  Kind kind = Kind::kVar;
  int index = 0;   // variable index, or node index within the side
  int output = 0;  // kNode: which output of the node
  friend bool operator==(const RuleRef&, const RuleRef&) = default;
};

struct RuleNode {
  Op op = Op::Add;
  std::vector<RuleRef> args;
  std::vector<PatternAttr> attrs;  // every attribute of `op`, sorted by key
  int outputs = 1;                 // results named by the statement
  friend bool operator==(const RuleNode&, const RuleNode&) = default;
};

struct RuleSide {
  std::vector<RuleNode> nodes;   // in statement order (topological)
  std::vector<RuleRef> outputs;  // the pattern's outputs, in order
  friend bool operator==(const RuleSide&, const RuleSide&) = default;
};

// `input NAME: TYPE`: a tensor variable and its example type (the shape the
// rule was found at).
struct RuleVar {
  std::string name;
  TensorType type;
  friend bool operator==(const RuleVar&, const RuleVar&) = default;
};

// `param ?NAME = VALUE`: a parameter variable and its example value.
struct RuleParam {
  std::string name;  // without the '?'
  AttrValue example;
  friend bool operator==(const RuleParam&, const RuleParam&) = default;
};

// `where LHS OP RHS` or `where odd(LHS)`: a shape condition beyond validity.
struct Condition {
  enum class Kind : uint8_t { kEq, kNe, kLt, kLe, kOdd };
  Kind kind = Kind::kEq;
  ShapeExpr lhs, rhs;  // rhs unused for kOdd
  friend bool operator==(const Condition&, const Condition&) = default;
};

// Whether values `l` and `r` of a condition's sides satisfy it (`r` unused
// for kOdd).
bool satisfies(Condition::Kind kind, int64_t l, int64_t r);

// `rank VAR... in LO..HI`: the listed variables bind tensors of one common
// rank in LO..HI (their example types share one rank) and every other
// variable binds only tensors of its example type's rank; the verifier
// proves the rule at each rank of the range. Empty `vars`: no clause, every
// variable binds only tensors of its example type's rank (the ranks the
// rule is proved at).
struct RankClause {
  std::vector<std::string> vars;
  int lo = 0, hi = 0;
  friend bool operator==(const RankClause&, const RankClause&) = default;
};

// The inverse of a permutation of 0..n-1 (what `inv(?p)` stands for);
// nullopt when `perm` is not one.
std::optional<std::vector<int64_t>> inverse_permutation(const std::vector<int64_t>& perm);

struct RuleOrigin {
  enum class Kind : uint8_t { kGenerated, kHandwritten };
  Kind kind = Kind::kHandwritten;
  std::string version;  // kGenerated: generator version, operator set and seed
  std::string ops;
  uint64_t seed = 0;
  friend bool operator==(const RuleOrigin&, const RuleOrigin&) = default;
};

struct RuleStatus {
  // kExact and kPartial are decided by the region check of partial
  // equivalence (verifier/regions.h) at the example types: kExact found no
  // wrong box, kPartial found some and the rule carries their correction.
  enum class Kind : uint8_t { kUnverified, kVerified, kRefuted, kUnknown, kPartial, kExact };
  Kind kind = Kind::kUnverified;
  // kVerified: the specs hash; kRefuted: the model; kUnknown: the reason;
  // kPartial, kExact: the number of boxes decided.
  std::string detail;
  friend bool operator==(const RuleStatus&, const RuleStatus&) = default;
};

// The status's word in a rule file: "unverified", "verified", ...
const char* status_name(RuleStatus::Kind kind);

// One box of a partial rule's correction: target output `output` is
// overwritten from position `at` (one expression per axis) with a patch, and
// the box's extent is the patch's shape.
struct CorrectionBox {
  int output = 0;
  std::vector<ShapeExpr> at;
  friend bool operator==(const CorrectionBox&, const CorrectionBox&) = default;
};

// A partial rule's correction: `side` computes one patch per box
// (side.outputs[i] is box i's) from the rule's variables, recomputing the
// source program on the slices of its inputs the box needs. The corrected
// target, which equals the source everywhere, is the target with every box
// written into its output (update_slice).
struct Correction {
  RuleSide side;
  std::vector<CorrectionBox> boxes;
  friend bool operator==(const Correction&, const Correction&) = default;
};

struct Rule {
  std::string name;
  RuleOrigin origin;
  RuleStatus status;
  // `oneway`: the optimizer applies the rule forward only, never its
  // reverse (optimizer/reverse_rule.h): a fold whose reverse only adds an
  // operator, which the search would take for a gain wherever two noisy
  // measurements favour it.
  bool one_way = false;
  std::vector<RuleVar> inputs;
  std::vector<RuleParam> params;
  std::vector<Condition> where;
  RankClause ranks;
  RuleSide source, target;
  Correction correction;  // status partial only; then at least one box
  friend bool operator==(const Rule&, const Rule&) = default;
};

struct RuleSet {
  // Comment lines at the top of the file after the version line, without
  // their leading "# " (provenance, counts). Other comments are not kept.
  std::vector<std::string> header;
  std::vector<Rule> rules;
  friend bool operator==(const RuleSet&, const RuleSet&) = default;
};

// Parses a rule file. Errors read "FILE:LINE:COL: message"; besides syntax
// they cover unknown operators, wrong arities, variables or parameters the
// target uses but the source never binds, and sides that are not shape-valid
// at the example types or disagree with each other in output count or types.
Expected<RuleSet> parse_rules(std::string_view text, std::string_view filename = "<rules>");

// Canonical text: locals renumbered %0.. per side, default attributes
// omitted, deterministic. `parse_rules(print_rules(s)) == s`.
std::string print_rules(const RuleSet& set);
std::string print_rule(const Rule& rule);

// kCorrected: the target with the correction's patches written in (the
// target itself for a rule without a correction).
enum class RuleSideKind : uint8_t { kSource, kTarget, kCorrected };

// Values for a rule's variables and parameters, by name (parameters without
// the '?'). Missing entries take the example type or value.
struct RuleBindings {
  std::map<std::string, TensorType> types;
  std::map<std::string, AttrValue> params;
};

// Whether the rule's variables may bind tensors of these types (one per
// Rule::inputs entry) as far as ranks go: see RankClause. Without a clause,
// exactly when each type has its variable's example rank.
bool ranks_fit(const Rule& rule, std::span<const TensorType> var_types);

// The generator writes the lifted copy of its rule X as `X_lifted`
// (generator/lift.h), right after X.
inline constexpr std::string_view kLiftedSuffix = "_lifted";

// The text two rules share exactly when they are the same rewrite up to the
// names of their variables and parameters (renamed in order of first use)
// and their provenance, status and example types.
std::string structure_key(const Rule& rule);

// The target with the correction's boxes written into its outputs, one
// update_slice per box (the target itself when there is no correction): the
// side a partial rule is applied with.
RuleSide corrected_target(const Rule& rule);

// One side of `rule` as a concrete graph: an input node per variable (named
// after it, in declaration order), the side's operators with every shape
// expression evaluated, and outputs named out0, out1, ... Fails, naming the
// rule and the node, when a `where` condition does not hold or the side is
// not shape-valid at these types.
Expected<Graph> instantiate(const Rule& rule, RuleSideKind side, const RuleBindings& bindings = {});

}  // namespace tso
