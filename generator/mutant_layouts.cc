// The layout families: stack, tile, interleave and pad_even.
#include "generator/mutant_layouts.h"

#include <functional>
#include <optional>

namespace tso::gen {

namespace {

// A layout the program runs in. `padded` (pad_even) are axes of the data
// input padded by one at the end before `encode`, with the output sliced
// back after `decode`.
struct Layout {
  std::vector<int> padded;
  // The least batch (extent 0 of the data input) it applies at: stacking a
  // batch of one is the program itself with layout operators around it.
  int64_t min_batch = 0;
  // The data input x (extents xd, after padding) in the layout.
  std::function<RuleRef(SideBuilder&, RuleRef x, const Exprs& xd)> encode;
  // Adapts node `i`'s attributes to the layout; false: it does not apply.
  std::function<bool(const SourceProgram&, int i, RuleNode*)> adapt;
  // An output y back to the original layout, where it has extents yd.
  std::function<RuleRef(SideBuilder&, RuleRef y, const Exprs& yd)> decode;
};

bool is_conv(const SourceProgram&, int, RuleNode* n) { return n->op == Op::Conv2d; }

const Node& concrete(const SourceProgram& src, int i) {
  return src.graph.node(static_cast<int>(src.rule.inputs.size()) + i);
}

// The variable every node's data argument chains from, when the program is
// one chain of nodes with a single output and the variable is read nowhere
// else.
std::optional<RuleRef> chain_input(const SourceProgram& src) {
  const RuleSide& s = src.rule.source;
  if (s.outputs.size() != 1 || s.nodes.empty()) return std::nullopt;
  const RuleRef x = s.nodes[0].args[0];
  if (x.kind != RuleRef::Kind::kVar) return std::nullopt;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const std::vector<RuleRef>& a = s.nodes[i].args;
    if (i > 0 && a[0] != RuleRef{RuleRef::Kind::kNode, static_cast<int>(i) - 1, 0})
      return std::nullopt;
    for (size_t j = 1; j < a.size(); ++j)
      if (a[j].kind != RuleRef::Kind::kVar || a[j] == x) return std::nullopt;
  }
  return x;
}

std::optional<Rule> conjugate(const SourceProgram& src, const Layout& l) {
  std::optional<RuleRef> x = chain_input(src);
  if (!x) return std::nullopt;
  const RuleSide& s = src.rule.source;
  Rule r = src.rule;
  r.target = {};
  std::vector<Exprs> seen_vars = src.var_dims;
  Exprs& xd = seen_vars[x->index];
  for (int a : l.padded) {
    xd[a] = add(xd[a], lit(1));
    r.where.push_back({Condition::Kind::kOdd, ShapeExpr::dim(r.inputs[x->index].name, a), {}});
  }
  if (l.min_batch > 0)
    r.where.push_back(
        {Condition::Kind::kLe, lit(l.min_batch), ShapeExpr::dim(r.inputs[x->index].name, 0)});
  std::vector<Exprs> seen =
      l.padded.empty() ? src.node_dims : side_dims(src.rule, s, src.graph, seen_vars);
  SideBuilder b(&r.target);
  RuleRef in = *x;
  if (!l.padded.empty()) {
    Exprs before(xd.size(), lit(0)), after(xd.size(), lit(0));
    for (int a : l.padded) after[a] = lit(1);
    in = b.pad(in, before, after);
  }
  RuleRef prev = l.encode(b, in, xd);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    RuleNode n = s.nodes[i];
    n.args[0] = prev;
    // A position-wise operator computes the same in every layout.
    if (n.op != Op::Relu && !l.adapt(src, static_cast<int>(i), &n)) return std::nullopt;
    r.target.nodes.push_back(std::move(n));
    prev = {RuleRef::Kind::kNode, static_cast<int>(r.target.nodes.size()) - 1, 0};
  }
  const int last = static_cast<int>(s.nodes.size()) - 1;
  RuleRef out = l.decode(b, prev, seen[last]);
  if (!l.padded.empty()) {
    std::vector<int64_t> axes;
    Exprs starts, ends;
    for (int a : l.padded) {
      axes.push_back(a);
      starts.push_back(lit(0));
      ends.push_back(src.node_dims[last][a]);
    }
    out = b.slice(out, axes, starts, ends);
  }
  b.output(out);
  return r;
}

Layout stack_h() {
  Layout l;
  l.min_batch = 2;
  l.encode = [](SideBuilder& b, RuleRef x, const Exprs& d) {
    return b.reshape(b.transpose(x, {1, 0, 2, 3}), {lit(1), d[1], mul(d[0], d[2]), d[3]});
  };
  l.adapt = is_conv;
  l.decode = [](SideBuilder& b, RuleRef y, const Exprs& d) {
    return b.transpose(b.reshape(y, {d[1], d[0], d[2], d[3]}), {1, 0, 2, 3});
  };
  return l;
}

Layout stack_w() {
  Layout l;
  l.min_batch = 2;
  l.encode = [](SideBuilder& b, RuleRef x, const Exprs& d) {
    return b.reshape(b.transpose(x, {1, 2, 0, 3}), {lit(1), d[1], d[2], mul(d[0], d[3])});
  };
  l.adapt = is_conv;
  l.decode = [](SideBuilder& b, RuleRef y, const Exprs& d) {
    return b.transpose(b.reshape(y, {d[1], d[2], d[0], d[3]}), {2, 0, 1, 3});
  };
  return l;
}

// A rank-3 matmul's batch moved into its rows.
Layout stack_rows() {
  Layout l;
  l.min_batch = 2;
  l.encode = [](SideBuilder& b, RuleRef x, const Exprs& d) {
    return b.reshape(x, {mul(d[0], d[1]), d[2]});
  };
  l.adapt = [](const SourceProgram&, int, RuleNode* n) { return n->op == Op::Matmul; };
  l.decode = [](SideBuilder& b, RuleRef y, const Exprs& d) { return b.reshape(y, d); };
  return l;
}

RuleRef untile(SideBuilder& b, RuleRef y, const Exprs& d, int axis) {
  return b.concat(b.split(y, 0, {d[0], d[0]}), axis);
}

// Two tiles along `axis` in the batch, each convolved on its own.
Layout tile(int axis) {
  Layout l;
  l.encode = [axis](SideBuilder& b, RuleRef x, const Exprs& d) {
    return b.concat(b.split(x, axis, {div(d[axis], 2), div(d[axis], 2)}), 0);
  };
  l.adapt = is_conv;
  l.decode = [axis](SideBuilder& b, RuleRef y, const Exprs& d) { return untile(b, y, d, axis); };
  return l;
}

// The padding of a convolution along spatial axis s (0 = H, 1 = W) as
// expressions: {before, after}.
std::pair<ShapeExpr, ShapeExpr> conv_pads(const Node& c, const ShapeExpr& kernel, int s) {
  const Padding& p = c.attrs.pad(AttrKey::pad);
  if (p.mode == Padding::kExplicit) return {lit(p.pads[s]), lit(p.pads[s + 2])};
  if (p.mode == Padding::kValid) return {lit(0), lit(0)};
  // `same` at stride 1: d (k - 1) in all, the odd one at the end.
  const ShapeExpr total = mul(sub(kernel, lit(1)), c.attrs.ints(AttrKey::dilation)[s]);
  const ShapeExpr before = div(total, 2);
  return {before, sub(total, before)};
}

// Two tiles along `axis` with their halos: the input padded along the axis
// as the convolution pads it, cut into two overlapping windows that each
// hold every row their half of the output reads, convolved without padding
// along the axis. A single stride-1 convolution.
std::optional<Layout> tile_halo(const SourceProgram& src, int axis) {
  const RuleSide& s = src.rule.source;
  if (s.nodes.size() != 1 || s.nodes[0].op != Op::Conv2d) return std::nullopt;
  const Node& c = concrete(src, 0);
  const int sp = axis - 2;
  if (c.attrs.ints(AttrKey::stride) != std::vector<int64_t>{1, 1}) return std::nullopt;
  const Exprs& wd = src.var_dims[s.nodes[0].args[1].index];
  // Named copies, not structured bindings: lambdas capture them (clang < 16
  // cannot capture a structured binding).
  const auto pads_here = conv_pads(c, wd[axis], sp),
             pads_other = conv_pads(c, wd[5 - axis], 1 - sp);
  const ShapeExpr lo = pads_here.first, hi = pads_here.second;
  const ShapeExpr lo_o = pads_other.first, hi_o = pads_other.second;
  const ShapeExpr halo = mul(sub(wd[axis], lit(1)), c.attrs.ints(AttrKey::dilation)[sp]);
  Layout l;
  l.encode = [axis, lo, hi, halo](SideBuilder& b, RuleRef x, const Exprs& d) {
    Exprs before(4, lit(0)), after(4, lit(0));
    before[axis] = lo;
    after[axis] = hi;
    RuleRef p = b.pad(x, before, after);
    const ShapeExpr padded = add(add(d[axis], lo), hi);
    const ShapeExpr half = div(sub(padded, halo), 2);
    RuleRef t0 = b.slice(p, {axis}, {lit(0)}, {add(half, halo)});
    RuleRef t1 = b.slice(p, {axis}, {half}, {padded});
    return b.concat({t0, t1}, 0);
  };
  l.adapt = [sp, lo_o, hi_o](const SourceProgram&, int, RuleNode* n) {
    Exprs pads(4, lit(0));
    pads[1 - sp] = lo_o;
    pads[3 - sp] = hi_o;
    set_attr(n, pad_attr(pads));
    return true;
  };
  l.decode = [axis](SideBuilder& b, RuleRef y, const Exprs& d) { return untile(b, y, d, axis); };
  return l;
}

// Dilation d as d x d interleaved sub-images in the batch: every node a
// stride-1 conv of dilation [d, d] whose padding divides by d (or `same`).
std::optional<Layout> interleave(const SourceProgram& src) {
  const RuleSide& s = src.rule.source;
  if (s.nodes[0].op != Op::Conv2d) return std::nullopt;
  const int64_t d = concrete(src, 0).attrs.ints(AttrKey::dilation)[0];
  if (d < 2) return std::nullopt;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& c = concrete(src, static_cast<int>(i));
    if (c.op == Op::Relu) continue;
    if (c.op != Op::Conv2d || c.attrs.ints(AttrKey::dilation) != std::vector<int64_t>{d, d} ||
        c.attrs.ints(AttrKey::stride) != std::vector<int64_t>{1, 1})
      return std::nullopt;
    const Padding& p = c.attrs.pad(AttrKey::pad);
    if (p.mode == Padding::kExplicit)
      for (int64_t v : p.pads)
        if (v % d != 0) return std::nullopt;
  }
  Layout l;
  l.encode = [d](SideBuilder& b, RuleRef x, const Exprs& e) {
    RuleRef r = b.reshape(x, {e[0], e[1], div(e[2], d), lit(d), div(e[3], d), lit(d)});
    return b.reshape(b.transpose(r, {3, 5, 0, 1, 2, 4}),
                     {mul(e[0], d * d), e[1], div(e[2], d), div(e[3], d)});
  };
  l.adapt = [d](const SourceProgram& src, int i, RuleNode* n) {
    set_attr(n, attr(AttrKey::dilation, std::vector<int64_t>{1, 1}));
    const Padding& p = concrete(src, i).attrs.pad(AttrKey::pad);
    if (p.mode == Padding::kExplicit)
      set_attr(n, pad_attr({lit(p.pads[0] / d), lit(p.pads[1] / d), lit(p.pads[2] / d),
                            lit(p.pads[3] / d)}));
    return true;
  };
  l.decode = [d](SideBuilder& b, RuleRef y, const Exprs& e) {
    RuleRef r = b.reshape(y, {lit(d), lit(d), e[0], e[1], div(e[2], d), div(e[3], d)});
    return b.reshape(b.transpose(r, {2, 3, 4, 0, 5, 1}), e);
  };
  return l;
}

Layout identity() {
  Layout l;
  l.encode = [](SideBuilder&, RuleRef x, const Exprs&) { return x; };
  l.adapt = is_conv;
  l.decode = [](SideBuilder&, RuleRef y, const Exprs&) { return y; };
  return l;
}

void add_if(std::vector<Rule>* out, const SourceProgram& src, const std::optional<Layout>& l) {
  if (!l) return;
  if (std::optional<Rule> r = conjugate(src, *l)) out->push_back(std::move(*r));
}

// The shape of the data input at the example types, or an empty shape.
Shape data_shape(const SourceProgram& src) {
  std::optional<RuleRef> x = chain_input(src);
  return x ? src.rule.inputs[x->index].type.shape : Shape{};
}

}  // namespace

std::vector<Rule> stack_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  const Shape x = data_shape(src);
  // At batch 1 stacking is the identity.
  if (x.rank() == 4 && x[0] >= 2) {
    add_if(&out, src, stack_h());
    add_if(&out, src, stack_w());
  }
  if (x.rank() == 3 && x[0] >= 2) add_if(&out, src, stack_rows());
  return out;
}

std::vector<Rule> tile_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  if (data_shape(src).rank() != 4) return out;
  for (int axis : {2, 3}) {
    add_if(&out, src, tile(axis));
    add_if(&out, src, tile_halo(src, axis));
  }
  return out;
}

std::vector<Rule> interleave_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  if (data_shape(src).rank() == 4) add_if(&out, src, interleave(src));
  return out;
}

std::vector<Rule> roundtrip_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  std::optional<Layout> l = interleave(src);
  if (data_shape(src).rank() != 4 || !l) return out;
  // The output of the program's interleaved node, y, decoded and encoded
  // again: what two interleaved programs in a row leave between them.
  const int64_t d = concrete(src, 0).attrs.ints(AttrKey::dilation)[0];
  const TensorType& t = src.graph.node(static_cast<int>(src.rule.inputs.size())).outs[0];
  Rule r;
  r.name = src.rule.name;
  r.origin = src.rule.origin;
  r.inputs = {
      {"y", {t.dtype, Shape{t.shape[0] * d * d, t.shape[1], t.shape[2] / d, t.shape[3] / d}}}};
  const Exprs yd{ShapeExpr::dim("y", 0), ShapeExpr::dim("y", 1), ShapeExpr::dim("y", 2),
                 ShapeExpr::dim("y", 3)};
  const Exprs e{div(yd[0], d * d), yd[1], mul(yd[2], d), mul(yd[3], d)};
  SideBuilder b(&r.source);
  const RuleRef y{RuleRef::Kind::kVar, 0, 0};
  b.output(l->encode(b, l->decode(b, y, e), e));
  r.target.outputs.push_back(y);
  out.push_back(std::move(r));
  return out;
}

std::vector<Rule> pad_even_mutants(const SourceProgram& src) {
  std::vector<Rule> out;
  const Shape x = data_shape(src);
  if (x.rank() != 4) return out;
  std::vector<int> odd;
  for (int a : {2, 3})
    if (x[a] % 2 == 1) odd.push_back(a);
  if (odd.empty()) return out;
  std::vector<std::optional<Layout>> inner{identity(), interleave(src)};
  for (int a : odd) inner.push_back(tile(a));
  for (std::optional<Layout>& l : inner) {
    if (!l) continue;
    l->padded = odd;
    add_if(&out, src, l);
  }
  return out;
}

}  // namespace tso::gen
