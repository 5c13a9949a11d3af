// Shape arithmetic, the side builder and symbolic extents for mutants.
#include "generator/mutant_side.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tso::gen {

namespace {

using K = ShapeExpr::Kind;

// A sum of atoms (extents and divisions) with integer coefficients, in order
// of first appearance, plus a constant.
struct Sum {
  std::vector<std::pair<ShapeExpr, int64_t>> terms;
  int64_t constant = 0;

  void add_term(const ShapeExpr& atom, int64_t coef) {
    for (auto& [a, c] : terms)
      if (a == atom) {
        c += coef;
        return;
      }
    terms.push_back({atom, coef});
  }
};

Sum to_sum(const ShapeExpr& e) {
  Sum s;
  switch (e.kind) {
    case K::kLit:
      s.constant = e.value;
      return s;
    case K::kAdd:
    case K::kSub: {
      Sum a = to_sum(e.args[0]), b = to_sum(e.args[1]);
      const int64_t sign = e.kind == K::kAdd ? 1 : -1;
      for (const auto& [atom, c] : b.terms) a.add_term(atom, sign * c);
      a.constant += sign * b.constant;
      return a;
    }
    case K::kMul:
      if (e.args[0].kind == K::kLit || e.args[1].kind == K::kLit) {
        const bool left = e.args[0].kind == K::kLit;
        Sum x = to_sum(e.args[left ? 1 : 0]);
        const int64_t k = e.args[left ? 0 : 1].value;
        for (auto& [atom, c] : x.terms) c *= k;
        x.constant *= k;
        return x;
      }
      break;
    default:
      break;
  }
  s.add_term(e, 1);
  return s;
}

ShapeExpr from_sum(Sum s) {
  std::erase_if(s.terms, [](const auto& t) { return t.second == 0; });
  // Positive terms first, so the expression never starts with a subtraction.
  std::stable_partition(s.terms.begin(), s.terms.end(), [](const auto& t) { return t.second > 0; });
  auto scaled = [](const ShapeExpr& atom, int64_t c) {
    return c == 1 ? atom : ShapeExpr::binary(K::kMul, ShapeExpr::lit(c), atom);
  };
  if (s.terms.empty() || s.terms.front().second < 0) {
    ShapeExpr e = ShapeExpr::lit(s.constant);
    for (const auto& [atom, c] : s.terms) e = ShapeExpr::binary(K::kSub, e, scaled(atom, -c));
    return e;
  }
  ShapeExpr e = scaled(s.terms.front().first, s.terms.front().second);
  for (size_t i = 1; i < s.terms.size(); ++i) {
    const auto& [atom, c] = s.terms[i];
    e = c > 0 ? ShapeExpr::binary(K::kAdd, e, scaled(atom, c))
              : ShapeExpr::binary(K::kSub, e, scaled(atom, -c));
  }
  if (s.constant > 0) e = ShapeExpr::binary(K::kAdd, e, ShapeExpr::lit(s.constant));
  if (s.constant < 0) e = ShapeExpr::binary(K::kSub, e, ShapeExpr::lit(-s.constant));
  return e;
}

}  // namespace

ShapeExpr lit(int64_t v) { return ShapeExpr::lit(v); }

ShapeExpr add(const ShapeExpr& a, const ShapeExpr& b) {
  return from_sum(to_sum(ShapeExpr::binary(K::kAdd, a, b)));
}

ShapeExpr sub(const ShapeExpr& a, const ShapeExpr& b) {
  return from_sum(to_sum(ShapeExpr::binary(K::kSub, a, b)));
}

ShapeExpr mul(const ShapeExpr& a, int64_t k) {
  return from_sum(to_sum(ShapeExpr::binary(K::kMul, a, ShapeExpr::lit(k))));
}

ShapeExpr mul(const ShapeExpr& a, const ShapeExpr& b) {
  if (b.kind == K::kLit) return mul(a, b.value);
  if (a.kind == K::kLit) return mul(b, a.value);
  return ShapeExpr::binary(K::kMul, a, b);
}

ShapeExpr div(const ShapeExpr& a, int64_t k) {
  TSO_CHECK(k > 0, "division by a non-positive literal");
  if (k == 1) return a;
  Sum s = to_sum(a);
  bool exact = s.constant % k == 0;
  for (const auto& [atom, c] : s.terms) exact = exact && c % k == 0;
  if (!exact) return ShapeExpr::binary(K::kDiv, from_sum(s), ShapeExpr::lit(k));
  for (auto& [atom, c] : s.terms) c /= k;
  s.constant /= k;
  return from_sum(s);
}

PatternAttr attr(AttrKey key, AttrValue value) {
  PatternAttr a;
  a.key = key;
  a.value = std::move(value);
  return a;
}

PatternAttr attr(AttrKey key, const Exprs& exprs) {
  PatternAttr a;
  a.key = key;
  const bool literal =
      std::all_of(exprs.begin(), exprs.end(), [](const ShapeExpr& e) { return e.kind == K::kLit; });
  const bool list = attr_info(key).type != AttrType::Int;
  if (literal) {
    std::vector<int64_t> xs;
    for (const ShapeExpr& e : exprs) xs.push_back(e.value);
    a.value = list ? AttrValue{xs} : AttrValue{xs.at(0)};
    return a;
  }
  a.form = list ? PatternAttr::Form::kExprList : PatternAttr::Form::kExpr;
  a.exprs = exprs;
  return a;
}

PatternAttr pad_attr(const Exprs& pads) {
  TSO_CHECK(pads.size() == 4, "conv2d pads are [top, left, bottom, right]");
  PatternAttr a = attr(AttrKey::pad, Padding{});
  if (std::all_of(pads.begin(), pads.end(), [](const ShapeExpr& e) { return e.kind == K::kLit; })) {
    const std::array<int64_t, 4> p{pads[0].value, pads[1].value, pads[2].value, pads[3].value};
    // Explicit zeros are `valid`, as shape inference stores them.
    if (p != std::array<int64_t, 4>{}) a.value = Padding{Padding::kExplicit, p};
    return a;
  }
  a.form = PatternAttr::Form::kExprPads;
  a.value = AttrValue{};
  a.exprs = pads;
  return a;
}

void set_attr(RuleNode* n, PatternAttr a) {
  for (PatternAttr& x : n->attrs)
    if (x.key == a.key) {
      x = std::move(a);
      return;
    }
  TSO_CHECK(false, std::string(op_info(n->op).name) + " takes no attribute " +
                       std::string(attr_info(a.key).name));
}

RuleRef SideBuilder::add(Op op, std::vector<RuleRef> args, std::vector<PatternAttr> attrs) {
  RuleNode n;
  n.op = op;
  n.args = std::move(args);
  const OpInfo& info = op_info(op);
  for (int k = 0; k < kNumAttrKeys; ++k) {
    const AttrKey key = static_cast<AttrKey>(k);
    if (!info.takes(key)) continue;
    auto given = std::find_if(attrs.begin(), attrs.end(),
                              [&](const PatternAttr& a) { return a.key == key; });
    if (given != attrs.end()) {
      n.attrs.push_back(*given);
      continue;
    }
    const std::optional<AttrValue>& d = attr_default(key);
    TSO_CHECK(d.has_value(),
              std::string(info.name) + " needs attribute " + std::string(attr_info(key).name));
    n.attrs.push_back(attr(key, *d));
  }
  side_->nodes.push_back(std::move(n));
  return {RuleRef::Kind::kNode, static_cast<int>(side_->nodes.size()) - 1, 0};
}

std::vector<RuleRef> SideBuilder::split(RuleRef x, int axis, const Exprs& sizes) {
  RuleRef r =
      add(Op::Split, {x}, {attr(AttrKey::axis, int64_t{axis}), attr(AttrKey::sizes, sizes)});
  side_->nodes.back().outputs = static_cast<int>(sizes.size());
  std::vector<RuleRef> out;
  for (size_t i = 0; i < sizes.size(); ++i) out.push_back({r.kind, r.index, static_cast<int>(i)});
  return out;
}

RuleRef SideBuilder::concat(std::vector<RuleRef> xs, int axis) {
  return add(Op::Concat, std::move(xs), {attr(AttrKey::axis, int64_t{axis})});
}

RuleRef SideBuilder::reshape(RuleRef x, const Exprs& shape) {
  return add(Op::Reshape, {x}, {attr(AttrKey::shape, shape)});
}

RuleRef SideBuilder::transpose(RuleRef x, std::vector<int64_t> perm) {
  return add(Op::Transpose, {x}, {attr(AttrKey::perm, std::move(perm))});
}

RuleRef SideBuilder::pad(RuleRef x, const Exprs& before, const Exprs& after) {
  Exprs pads = before;
  pads.insert(pads.end(), after.begin(), after.end());
  return add(Op::Pad, {x}, {attr(AttrKey::pads, pads)});
}

RuleRef SideBuilder::slice(RuleRef x, std::vector<int64_t> axes, const Exprs& starts,
                           const Exprs& ends) {
  std::vector<int64_t> steps(axes.size(), 1);
  return add(Op::Slice, {x},
             {attr(AttrKey::axes, std::move(axes)), attr(AttrKey::starts, starts),
              attr(AttrKey::ends, ends), attr(AttrKey::steps, std::move(steps))});
}

namespace {

// An output extent of a convolution along one spatial axis.
ShapeExpr conv_extent(const ShapeExpr& in, const ShapeExpr& kernel, const Attrs& a, int axis) {
  const int64_t s = a.ints(AttrKey::stride)[axis], d = a.ints(AttrKey::dilation)[axis];
  const Padding& p = a.pad(AttrKey::pad);
  if (p.mode == Padding::kSame) return div(in, s);
  const int64_t lo = p.mode == Padding::kExplicit ? p.pads[axis] : 0;
  const int64_t hi = p.mode == Padding::kExplicit ? p.pads[axis + 2] : 0;
  ShapeExpr span = sub(add(in, lit(lo + hi - 1)), mul(sub(kernel, lit(1)), d));
  return add(div(span, s), lit(1));
}

}  // namespace

std::vector<Exprs> variable_dims(const Rule& rule) {
  std::vector<Exprs> out;
  for (const RuleVar& v : rule.inputs) {
    Exprs d;
    for (int i = 0; i < v.type.shape.rank(); ++i) d.push_back(ShapeExpr::dim(v.name, i));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Exprs> side_dims(const Rule& rule, const RuleSide& side, const Graph& concrete,
                             const std::vector<Exprs>& var_dims) {
  std::vector<Exprs> out;
  auto of = [&](const RuleRef& r) -> const Exprs& {
    return r.kind == RuleRef::Kind::kVar ? var_dims[r.index] : out[r.index];
  };
  for (size_t i = 0; i < side.nodes.size(); ++i) {
    const RuleNode& n = side.nodes[i];
    const Node& c = concrete.node(static_cast<int>(rule.inputs.size() + i));
    const Exprs& a = of(n.args[0]);
    if (n.op == Op::Relu) {
      out.push_back(a);
      continue;
    }
    const Exprs& b = of(n.args[1]);
    if (n.op == Op::Conv2d) {
      out.push_back(
          {a[0], b[0], conv_extent(a[2], b[2], c.attrs, 0), conv_extent(a[3], b[3], c.attrs, 1)});
    } else {
      TSO_CHECK(n.op == Op::Matmul, "a source program holds conv2d, matmul and relu only");
      Exprs o = a;
      o.back() = b.back();
      out.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace tso::gen
