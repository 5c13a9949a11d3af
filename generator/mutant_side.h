// Internal to generator/: the pieces mutants are written with. Shape
// arithmetic that keeps expressions small (sums of extents are folded, so
// `dim(x,2) + 2 + 2 - 4` prints `dim(x,2)`), a builder that appends operators
// to a rule side with every attribute present (as the rule parser fills
// them), and the symbolic output extents of a source program's conv2d and
// matmul nodes.
#pragma once

#include <vector>

#include "core/graph.h"
#include "substitutions/rules.h"

namespace tso::gen {

using Exprs = std::vector<ShapeExpr>;

ShapeExpr lit(int64_t v);
ShapeExpr add(const ShapeExpr& a, const ShapeExpr& b);
ShapeExpr sub(const ShapeExpr& a, const ShapeExpr& b);
ShapeExpr mul(const ShapeExpr& a, int64_t k);
ShapeExpr mul(const ShapeExpr& a, const ShapeExpr& b);
// Exact division: a sum whose terms all divide by k is divided term by term;
// otherwise a `/` node, which fails to instantiate where it does not divide.
ShapeExpr div(const ShapeExpr& a, int64_t k);

// An attribute given by a value, or by shape expressions (plain values when
// all are literals, as the parser stores them).
PatternAttr attr(AttrKey key, AttrValue value);
PatternAttr attr(AttrKey key, const Exprs& exprs);
PatternAttr pad_attr(const Exprs& pads);  // conv2d's explicit [top, left, bottom, right]
// Replaces the node's attribute of a.key.
void set_attr(RuleNode* n, PatternAttr a);

class SideBuilder {
 public:
  explicit SideBuilder(RuleSide* side) : side_(side) {}
  // Appends `op(args; attrs)`, the attributes not given at their defaults.
  RuleRef add(Op op, std::vector<RuleRef> args, std::vector<PatternAttr> attrs = {});
  std::vector<RuleRef> split(RuleRef x, int axis, const Exprs& sizes);
  RuleRef concat(std::vector<RuleRef> xs, int axis);
  RuleRef reshape(RuleRef x, const Exprs& shape);
  RuleRef transpose(RuleRef x, std::vector<int64_t> perm);
  // Zero padding: `before` and `after` per axis.
  RuleRef pad(RuleRef x, const Exprs& before, const Exprs& after);
  // x[starts:ends] along `axes`, step 1.
  RuleRef slice(RuleRef x, std::vector<int64_t> axes, const Exprs& starts, const Exprs& ends);
  void output(RuleRef r) { side_->outputs.push_back(r); }

 private:
  RuleSide* side_;
};

// The extents of every node output of a side of `rule` whose nodes are
// conv2d, matmul and relu, as expressions, given the extents of the variables
// (`var_dims[i]` for rule.inputs[i]). `concrete` is that side instantiated
// at the example types (for the nodes' complete attributes). An output
// height of a strided conv is an exact division: the expressions hold where
// it divides.
std::vector<Exprs> side_dims(const Rule& rule, const RuleSide& side, const Graph& concrete,
                             const std::vector<Exprs>& var_dims);
// dim(v, 0), dim(v, 1), ... for each variable of the rule.
std::vector<Exprs> variable_dims(const Rule& rule);

}  // namespace tso::gen
