// The merge family: two sibling convolutions or matmuls (neither reads the
// other) become one grouped convolution or batched matmul, split back.
#include <optional>

#include "generator/mutant_layouts.h"

namespace tso::gen {

namespace {

using Kind = RuleRef::Kind;

const Node& concrete(const SourceProgram& src, int i) {
  return src.graph.node(static_cast<int>(src.rule.inputs.size()) + i);
}

const Shape& shape_of(const SourceProgram& src, RuleRef r) {
  return src.rule.inputs[r.index].type.shape;
}

const Exprs& dims_of(const SourceProgram& src, RuleRef r) { return src.var_dims[r.index]; }

// Two nodes over variables only, both outputs of the side, in node order.
bool siblings(const SourceProgram& src) {
  const RuleSide& s = src.rule.source;
  if (s.nodes.size() != 2 || s.outputs.size() != 2 || s.nodes[0].op != s.nodes[1].op) return false;
  for (const RuleNode& n : s.nodes)
    for (const RuleRef& a : n.args)
      if (a.kind != Kind::kVar) return false;
  return s.outputs[0] == RuleRef{Kind::kNode, 0, 0} && s.outputs[1] == RuleRef{Kind::kNode, 1, 0};
}

Rule with_target(const SourceProgram& src) {
  Rule r = src.rule;
  r.target = {};
  return r;
}

// Splits y along `axis` into the two outputs.
void outputs(SideBuilder& b, RuleRef y, int axis, const ShapeExpr& first, const ShapeExpr& second) {
  for (RuleRef o : b.split(y, axis, {first, second})) b.output(o);
}

std::optional<Rule> merge_convs(const SourceProgram& src) {
  const RuleSide& s = src.rule.source;
  const RuleNode &n0 = s.nodes[0], &n1 = s.nodes[1];
  const Node &c0 = concrete(src, 0), &c1 = concrete(src, 1);
  if (c0.attrs != c1.attrs || n0.args.size() != n1.args.size()) return std::nullopt;
  const RuleRef x0 = n0.args[0], x1 = n1.args[0], w0 = n0.args[1], w1 = n1.args[1];
  if (shape_of(src, x0) != shape_of(src, x1) || shape_of(src, w0) != shape_of(src, w1))
    return std::nullopt;
  const bool bias = n0.args.size() == 3;
  Rule r = with_target(src);
  SideBuilder b(&r.target);
  RuleNode conv = n0;
  if (x0 != x1 && w0 == w1 && (!bias || n0.args[2] == n1.args[2])) {
    // Both images through the one weight: stacked in the batch.
    conv.args[0] = b.concat({x0, x1}, 0);
    r.target.nodes.push_back(conv);
    outputs(b, {Kind::kNode, static_cast<int>(r.target.nodes.size()) - 1, 0}, 0,
            dims_of(src, x0)[0], dims_of(src, x1)[0]);
    return r;
  }
  if (w0 == w1) return std::nullopt;
  const PatternAttr* groups = nullptr;
  for (const PatternAttr& a : n0.attrs)
    if (a.key == AttrKey::groups) groups = &a;
  TSO_CHECK(groups != nullptr, "conv2d without groups");
  if (groups->form != PatternAttr::Form::kValue) return std::nullopt;
  const int64_t g = std::get<int64_t>(groups->value);
  const RuleRef w = b.concat({w0, w1}, 0);
  if (x0 == x1 && g == 1) {
    conv.args[1] = w;
  } else {
    // Each image convolved by its own weights: one conv of twice the groups
    // over the channels of both.
    conv.args[0] = b.concat({x0, x1}, 1);
    conv.args[1] = w;
    set_attr(&conv, attr(AttrKey::groups, int64_t{2 * g}));
  }
  if (bias) conv.args[2] = b.concat({n0.args[2], n1.args[2]}, 0);
  r.target.nodes.push_back(conv);
  outputs(b, {Kind::kNode, static_cast<int>(r.target.nodes.size()) - 1, 0}, 1, dims_of(src, w0)[0],
          dims_of(src, w1)[0]);
  return r;
}

std::optional<Rule> merge_matmuls(const SourceProgram& src) {
  const RuleSide& s = src.rule.source;
  const RuleRef x0 = s.nodes[0].args[0], x1 = s.nodes[1].args[0];
  const RuleRef w0 = s.nodes[0].args[1], w1 = s.nodes[1].args[1];
  if (shape_of(src, x0) != shape_of(src, x1) || shape_of(src, w0) != shape_of(src, w1))
    return std::nullopt;
  const Exprs &xd = dims_of(src, x0), &wd = dims_of(src, w0);
  const int rank = static_cast<int>(xd.size());
  Rule r = with_target(src);
  SideBuilder b(&r.target);
  if (x0 == x1) {
    // One input, the weights side by side.
    RuleRef y = b.add(Op::Matmul, {x0, b.concat({w0, w1}, 1)});
    outputs(b, y, rank - 1, wd[1], dims_of(src, w1)[1]);
    return r;
  }
  if (w0 == w1) {
    RuleRef y = b.add(Op::Matmul, {b.concat({x0, x1}, 0), w0});
    outputs(b, y, 0, xd[0], dims_of(src, x1)[0]);
    return r;
  }
  // Two products of equal shapes as one batched product: a new leading
  // batch axis of 2 on the inputs, the weights broadcast over the others.
  auto lead = [&](RuleRef v, const Exprs& d, int pad_ones) {
    Exprs shape{lit(1)};
    for (int i = 0; i < pad_ones; ++i) shape.push_back(lit(1));
    shape.insert(shape.end(), d.begin(), d.end());
    return b.reshape(v, shape);
  };
  RuleRef xs = b.concat({lead(x0, xd, 0), lead(x1, dims_of(src, x1), 0)}, 0);
  RuleRef ws = b.concat({lead(w0, wd, rank - 2), lead(w1, dims_of(src, w1), rank - 2)}, 0);
  RuleRef y = b.add(Op::Matmul, {xs, ws});
  std::vector<RuleRef> parts = b.split(y, 0, {lit(1), lit(1)});
  for (int i = 0; i < 2; ++i) b.output(b.reshape(parts[i], src.node_dims[i]));
  return r;
}

}  // namespace

std::vector<Rule> merge_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  if (!siblings(src)) return out;
  std::optional<Rule> r =
      src.rule.source.nodes[0].op == Op::Conv2d ? merge_convs(src) : merge_matmuls(src);
  if (r) out.push_back(std::move(*r));
  return out;
}

}  // namespace tso::gen
