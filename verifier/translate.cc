#include "verifier/translate.h"

#include <map>
#include <optional>

#include "core/shape_inference.h"

namespace tso::verifier {

namespace {

using z3::expr;

struct SymInt {
  expr e;
  int64_t ex;  // the value at the example types and parameters
};

// A tensor of a rule side: its term, symbolic extents and example type.
struct SymTensor {
  expr term;
  std::vector<expr> dims;
  TensorType example;
};

// An attribute of a node: its Z3 encoding, its value at the example, and the
// integers inside it as terms (Int: one; Ints: one per entry; Pad: five).
struct SymAttr {
  expr encoded;
  AttrValue example;
  std::vector<expr> ints;
  bool concrete = true;
};

class Translator {
 public:
  Translator(const Rule& rule, const specs::OpFunctions& fns,
             const std::map<std::string, int64_t>& pins)
      : rule_(rule), fns_(fns), ctx_(fns.ctx()), pins_(pins) {}
  Expected<Translation> run();

 private:
  Expected<SymInt> shape_expr(const ShapeExpr& e);
  Expected<SymAttr> attr(const PatternAttr& a, AttrType type);
  Expected<expr> param(const std::string& name, AttrType type, AttrValue* example);
  Expected<std::vector<SymTensor>> side(const RuleSide& s);
  Expected<std::vector<SymTensor>> node(const RuleNode& n, const std::vector<SymTensor>& args);
  Expected<std::vector<std::vector<expr>>> shapes(Op op, const Attrs& attrs,
                                                  const std::map<AttrKey, SymAttr>& sym,
                                                  const std::vector<SymTensor>& args,
                                                  const std::vector<TensorType>& outs);
  std::vector<expr> broadcast(const std::vector<expr>& a, const std::vector<expr>& b);
  // The axis of a concat or split as a term in 0..rank-1: the literal, or a
  // parameter (negative values count from the end, as in ONNX).
  expr axis(const std::map<AttrKey, SymAttr>& sym, const Attrs& example, size_t rank);
  expr window(const expr& in, const expr& eff, const expr& stride, const std::vector<expr>& pad,
              int d, const expr& ceil_mode);
  void hyp(const expr& e) {
    expr s = e.simplify();
    if (!s.is_true()) out_.hypotheses.push_back(s);
  }
  Error fail(const std::string& msg) { return Error{"rule " + rule_.name + ": " + msg}; }

  const Rule& rule_;
  const specs::OpFunctions& fns_;
  z3::context& ctx_;
  const std::map<std::string, int64_t>& pins_;
  Translation out_;
  std::map<std::string, SymTensor> vars_;
  std::map<std::string, std::pair<expr, AttrType>> params_;
};

Expected<SymInt> Translator::shape_expr(const ShapeExpr& e) {
  switch (e.kind) {
    case ShapeExpr::Kind::kLit:
      return SymInt{ctx_.int_val(e.value), e.value};
    case ShapeExpr::Kind::kDim: {
      auto it = vars_.find(e.var);
      if (it == vars_.end()) return fail("dim() of unknown variable " + e.var);
      int64_t rank = static_cast<int64_t>(it->second.dims.size());
      int64_t axis = e.value < 0 ? e.value + rank : e.value;
      if (axis < 0 || axis >= rank) return fail("dim(" + e.var + ") axis out of range");
      return SymInt{it->second.dims[axis], it->second.example.shape[int(axis)]};
    }
    case ShapeExpr::Kind::kParam: {
      AttrValue ex;
      Expected<expr> c = param(e.var, AttrType::Int, &ex);
      if (!c) return c.error();
      return SymInt{*c, std::get<int64_t>(ex)};
    }
    default:
      break;
  }
  Expected<SymInt> a = shape_expr(e.args[0]);
  if (!a) return a;
  Expected<SymInt> b = shape_expr(e.args[1]);
  if (!b) return b;
  switch (e.kind) {
    case ShapeExpr::Kind::kAdd:
      return SymInt{(a->e + b->e).simplify(), a->ex + b->ex};
    case ShapeExpr::Kind::kSub:
      return SymInt{(a->e - b->e).simplify(), a->ex - b->ex};
    case ShapeExpr::Kind::kDiv:
      if (b->ex == 0 || a->ex % b->ex != 0) return fail(to_string(e) + " is not exact");
      return SymInt{(a->e / b->e).simplify(), a->ex / b->ex};
    default:
      return SymInt{(a->e * b->e).simplify(), a->ex * b->ex};
  }
}

Expected<expr> Translator::param(const std::string& name, AttrType type, AttrValue* example) {
  const RuleParam* p = nullptr;
  for (const RuleParam& q : rule_.params)
    if (q.name == name) p = &q;
  if (!p) return fail("undeclared parameter ?" + name);
  *example = p->example;
  auto it = params_.find(name);
  if (it != params_.end()) {
    if (it->second.second != type) return fail("parameter ?" + name + " used with two types");
    return it->second.first;
  }
  std::string sym = "?" + name;
  auto pin = pins_.find(name);
  if (pin != pins_.end() && type != AttrType::Int)
    return fail("parameter ?" + name + " pinned but not an integer");
  expr c = pin != pins_.end() ? ctx_.int_val(pin->second)
                              : ctx_.constant(sym.c_str(), fns_.attr_sort(type));
  params_.emplace(name, std::make_pair(c, type));
  out_.symbols.emplace_back(sym, c);
  // Never clip: a fused clip's bounds are not the defaults, so a pattern
  // with a parameter activation (and default bounds) matches none.
  if (type == AttrType::Act) hyp(0 <= c && c <= static_cast<int>(Act::kGelu));
  if (type == AttrType::Ints)
    hyp(c.length() == ctx_.int_val(int(std::get<std::vector<int64_t>>(*example).size())));
  if (type == AttrType::Pad) {
    auto at = [&](int i) { return c.nth(ctx_.int_val(i)); };
    hyp(c.length() == 5);
    hyp(0 <= at(0) && at(0) <= 2);
    for (int i = 1; i < 5; ++i) hyp(at(i) >= 0 && (at(0) == 2 || at(i) == 0));
  }
  return c;
}

Expected<SymAttr> Translator::attr(const PatternAttr& a, AttrType type) {
  auto numerals = [&](const AttrValue& v) {
    std::vector<expr> ints;
    if (type == AttrType::Int) ints.push_back(ctx_.int_val(std::get<int64_t>(v)));
    if (type == AttrType::Act) ints.push_back(ctx_.int_val(int(std::get<Act>(v))));
    if (type == AttrType::Ints)
      for (int64_t x : std::get<std::vector<int64_t>>(v)) ints.push_back(ctx_.int_val(x));
    if (type == AttrType::Pad) {
      const Padding& p = std::get<Padding>(v);
      ints.push_back(ctx_.int_val(int(p.mode)));
      for (int64_t x : p.pads) ints.push_back(ctx_.int_val(x));
    }
    return ints;
  };
  auto normal = [&](AttrValue v) {  // explicit zero padding means valid (core/attrs.h)
    if (type == AttrType::Pad) {
      Padding& p = std::get<Padding>(v);
      if (p.mode == Padding::kExplicit && p.pads == std::array<int64_t, 4>{}) p = Padding{};
      if (p.mode != Padding::kExplicit) p.pads = {};
    }
    return v;
  };
  switch (a.form) {
    case PatternAttr::Form::kValue: {
      AttrValue v = normal(a.value);
      return SymAttr{specs::encode_attr(ctx_, type, v), v, numerals(v), true};
    }
    case PatternAttr::Form::kParam: {
      AttrValue ex;
      Expected<expr> c = param(a.param, type, &ex);
      if (!c) return c.error();
      std::vector<expr> ints;
      if (type == AttrType::Int || type == AttrType::Act) ints.push_back(*c);
      if (type == AttrType::Ints || type == AttrType::Pad) {
        size_t n = numerals(ex).size();
        for (size_t i = 0; i < n; ++i) ints.push_back(c->nth(ctx_.int_val(int(i))));
      }
      return SymAttr{*c, normal(ex), ints, false};
    }
    default:
      break;
  }
  std::vector<expr> ints;
  std::vector<int64_t> ex;
  for (const ShapeExpr& e : a.exprs) {
    Expected<SymInt> s = shape_expr(e);
    if (!s) return s.error();
    ints.push_back(s->e);
    ex.push_back(s->ex);
  }
  if (a.form == PatternAttr::Form::kExpr) return SymAttr{ints[0], AttrValue{ex[0]}, ints, false};
  if (a.form == PatternAttr::Form::kExprList)
    return SymAttr{specs::int_seq(ctx_, ints), AttrValue{ex}, ints, false};
  Padding p;
  p.mode = Padding::kExplicit;
  for (int i = 0; i < 4; ++i) p.pads[i] = ex[i];
  ints.insert(ints.begin(), ctx_.int_val(2));
  for (size_t i = 1; i < ints.size(); ++i) hyp(ints[i] >= 0);
  return SymAttr{specs::int_seq(ctx_, ints), normal(AttrValue{p}), ints, false};
}

std::vector<expr> Translator::broadcast(const std::vector<expr>& a, const std::vector<expr>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<expr> out;
  for (size_t i = 0; i < rank; ++i) {
    long ia = long(i) - long(rank - a.size()), ib = long(i) - long(rank - b.size());
    if (ia < 0) {
      out.push_back(b[ib]);
    } else if (ib < 0) {
      out.push_back(a[ia]);
    } else if (z3::eq(a[ia], b[ib])) {
      out.push_back(a[ia]);
    } else {
      hyp(a[ia] == b[ib] || a[ia] == 1 || b[ib] == 1);
      out.push_back(z3::ite(a[ia] == 1, b[ib], a[ia]).simplify());
    }
  }
  return out;
}

expr Translator::axis(const std::map<AttrKey, SymAttr>& sym, const Attrs& example, size_t rank) {
  const SymAttr& a = sym.at(AttrKey::axis);
  if (a.concrete) return ctx_.int_val(example.i(AttrKey::axis));  // normalized by inference
  const expr& p = a.ints[0];
  const int r = static_cast<int>(rank);
  hyp(-r <= p && p < r);
  return z3::ite(p < 0, p + r, p);
}

// The extent of `dims` along a symbolic axis.
expr along(const std::vector<expr>& dims, const expr& axis) {
  expr e = dims.back();
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) e = z3::ite(axis == d, dims[d], e);
  return e.simplify();
}

// core/shape_inference.cc window_out, symbolically.
expr Translator::window(const expr& in, const expr& eff, const expr& stride,
                        const std::vector<expr>& pad, int d, const expr& ceil_mode) {
  expr lo = pad[1 + d], hi = pad[3 + d];
  expr total = in + lo + hi - eff;
  expr floor_out = total / stride + 1;
  expr ceil_out = (total + stride - 1) / stride + 1;
  ceil_out = z3::ite((ceil_out - 1) * stride >= in + lo, ceil_out - 1, ceil_out);
  expr other = z3::ite(ceil_mode == 1, ceil_out, floor_out);
  expr same = (in + stride - 1) / stride;
  hyp(total >= 0 || pad[0] == 1);
  return z3::ite(pad[0] == 1, same, other).simplify();
}

Expected<std::vector<std::vector<expr>>> Translator::shapes(Op op, const Attrs& attrs,
                                                            const std::map<AttrKey, SymAttr>& sym,
                                                            const std::vector<SymTensor>& args,
                                                            const std::vector<TensorType>& outs) {
  auto ints = [&](AttrKey k) { return sym.at(k).ints; };
  auto concrete = [&](AttrKey k) -> Status {
    if (!sym.at(k).concrete)
      return fail(std::string(op_name(op)) + ": " + std::string(attr_info(k).name) +
                  " given by a parameter or shape expression is not supported");
    return Status::Ok();
  };
  const std::vector<expr>& x = args.empty() ? std::vector<expr>{} : args[0].dims;
  switch (op) {
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool:
      for (const expr& e : ints(AttrKey::shape)) hyp(e >= 1);
      return std::vector<std::vector<expr>>{ints(AttrKey::shape)};
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Gelu:
    case Op::Clip:
      return std::vector<std::vector<expr>>{x};
    case Op::ScalarMul:
      return std::vector<std::vector<expr>>{x};
    case Op::Add:
    case Op::Mul:
    case Op::Sub:
    case Op::Div:
      return std::vector<std::vector<expr>>{broadcast(x, args[1].dims)};
    case Op::BatchNorm:
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i].dims.size() != 1) return fail("batchnorm: parameters must have rank 1");
        hyp(args[i].dims[0] == x[1]);
      }
      return std::vector<std::vector<expr>>{x};
    case Op::Gemm: {
      const std::vector<expr>& y = args[1].dims;
      expr ta = ints(AttrKey::trans_a)[0] == 1, tb = ints(AttrKey::trans_b)[0] == 1;
      hyp((ints(AttrKey::trans_a)[0] == 0 || ta) && (ints(AttrKey::trans_b)[0] == 0 || tb));
      hyp(z3::ite(ta, x[0], x[1]) == z3::ite(tb, y[1], y[0]));
      std::vector<expr> out{z3::ite(ta, x[1], x[0]).simplify(), z3::ite(tb, y[0], y[1]).simplify()};
      if (args.size() == 3) {
        const std::vector<expr>& c = args[2].dims;
        for (size_t i = 0; i < c.size(); ++i) {
          const expr& o = out[out.size() - c.size() + i];
          hyp(c[i] == o || c[i] == 1);
        }
      }
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Reshape: {
      std::vector<expr> sh = ints(AttrKey::shape);
      expr in = ctx_.int_val(1), out = ctx_.int_val(1);
      for (const expr& e : x) in = in * e;
      for (const expr& e : sh) {
        hyp(e >= 1);
        out = out * e;
      }
      hyp(in == out);
      return std::vector<std::vector<expr>>{sh};
    }
    case Op::Matmul: {
      const std::vector<expr>& y = args[1].dims;
      hyp(x[x.size() - 1] == y[y.size() - 2]);
      std::vector<expr> out = broadcast(std::vector<expr>(x.begin(), x.end() - 2),
                                        std::vector<expr>(y.begin(), y.end() - 2));
      out.push_back(x[x.size() - 2]);
      out.push_back(y[y.size() - 1]);
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Conv2d: {
      const std::vector<expr>& w = args[1].dims;
      expr g = ints(AttrKey::groups)[0];
      hyp(g >= 1 && x[1] == w[1] * g && z3::mod(w[0], g) == 0);
      if (args.size() == 3) hyp(args[2].dims[0] == w[0]);
      std::vector<expr> out{x[0], w[0]};
      std::vector<expr> s = ints(AttrKey::stride), dl = ints(AttrKey::dilation);
      for (int d = 0; d < 2; ++d) {
        hyp(s[d] >= 1 && dl[d] >= 1);
        expr eff = (w[2 + d] - 1) * dl[d] + 1;
        out.push_back(window(x[2 + d], eff, s[d], ints(AttrKey::pad), d, ctx_.int_val(0)));
        hyp(out.back() >= 1);
      }
      return std::vector<std::vector<expr>>{out};
    }
    case Op::AvgPool:
    case Op::MaxPool: {
      std::vector<expr> out{x[0], x[1]};
      std::vector<expr> s = ints(AttrKey::stride), k = ints(AttrKey::kernel);
      // Inference refuses a pad as wide as the kernel (a window of padding
      // only); a pad or kernel given by a parameter needs it said.
      const std::vector<expr> p = ints(AttrKey::pad);
      for (int i = 0; i < 4; ++i) hyp(p[1 + i] < k[i % 2]);
      // Inference takes the flags as 0 or 1, a parameter's too.
      const expr cm = ints(AttrKey::ceil_mode)[0];
      hyp(0 <= cm && cm <= 1);
      if (op == Op::AvgPool) {
        const expr ci = ints(AttrKey::count_include_pad)[0];
        hyp(0 <= ci && ci <= 1);
      }
      for (int d = 0; d < 2; ++d) {
        hyp(s[d] >= 1 && k[d] >= 1);
        out.push_back(window(x[2 + d], k[d], s[d], p, d, cm));
        hyp(out.back() >= 1);
      }
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Pad: {
      const std::vector<expr> p = ints(AttrKey::pads);
      if (p.size() != 2 * x.size()) return fail("pad: pads must have two entries per axis");
      std::vector<expr> out;
      for (size_t i = 0; i < x.size(); ++i) {
        hyp(p[i] >= 0 && p[i + x.size()] >= 0);
        out.push_back(x[i] + p[i] + p[i + x.size()]);
      }
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Enlarge: {
      std::vector<expr> k = ints(AttrKey::kernel);
      for (int d = 0; d < 2; ++d) hyp(k[d] >= x[2 + d] && z3::mod(k[d] - x[2 + d], 2) == 0);
      return std::vector<std::vector<expr>>{{x[0], x[1], k[0], k[1]}};
    }
    case Op::Transpose: {
      TSO_RETURN_IF_ERROR(concrete(AttrKey::perm));
      std::vector<expr> out;
      for (int64_t p : attrs.ints(AttrKey::perm)) out.push_back(x[p]);
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Concat: {
      const expr a = axis(sym, attrs, x.size());
      std::vector<expr> out = x;
      for (size_t i = 1; i < args.size(); ++i)
        for (size_t d = 0; d < x.size(); ++d) {
          hyp(a == int(d) || args[i].dims[d] == x[d]);
          out[d] = z3::ite(a == int(d), out[d] + args[i].dims[d], out[d]).simplify();
        }
      return std::vector<std::vector<expr>>{out};
    }
    case Op::Split: {
      const expr a = axis(sym, attrs, x.size());
      std::vector<std::vector<expr>> res;
      expr sum = ctx_.int_val(0);
      for (const expr& size : ints(AttrKey::sizes)) {
        hyp(size >= 1);
        sum = sum + size;
        res.emplace_back();
        for (size_t d = 0; d < x.size(); ++d)
          res.back().push_back(z3::ite(a == int(d), size, x[d]).simplify());
      }
      hyp(sum == along(x, a));
      return res;
    }
    default:
      break;
  }
  (void)outs;
  return fail("operator " + std::string(op_name(op)) + " has no symbolic shape inference");
}

// Whether `n` carries a fused clip (its function is then `name_clip`, which
// takes the bounds); an error for bounds that are not the defaults under
// any other activation.
Expected<bool> fused_clip(const RuleNode& n) {
  if (!op_info(n.op).takes(AttrKey::act)) return false;
  bool clip = false, bounded = false;
  for (const PatternAttr& a : n.attrs) {
    const bool literal = a.form == PatternAttr::Form::kValue;
    if (a.key == AttrKey::act) clip = literal && std::get<Act>(a.value) == Act::kClip;
    if ((a.key == AttrKey::min || a.key == AttrKey::max) &&
        !(literal && a.value == *attr_default(a.key)))
      bounded = true;
  }
  if (bounded && !clip)
    return Error{std::string(op_name(n.op)) + ": min and max bound act=clip only"};
  return clip;
}

Expected<std::vector<SymTensor>> Translator::node(const RuleNode& n,
                                                  const std::vector<SymTensor>& args) {
  Expected<bool> clip = fused_clip(n);
  if (!clip) return fail(clip.error().message);
  const specs::OpFunction* f =
      fns_.find(n.op, n.op == Op::Concat ? 2 : static_cast<int>(args.size()), *clip);
  if (!f) return fail("operator " + std::string(op_name(n.op)) + " has no Z3 function");
  std::map<AttrKey, SymAttr> sym;
  Attrs example;
  for (const PatternAttr& a : n.attrs) {
    Expected<SymAttr> s = attr(a, attr_info(a.key).type);
    if (!s) return s.error();
    example.set(a.key, s->example);
    sym.emplace(a.key, std::move(*s));
  }
  // Clip's bounds given by parameters: valid as inference requires (a
  // literal pair was checked when the rule was loaded).
  if ((n.op == Op::Clip || *clip) &&
      !(sym.at(AttrKey::min).concrete && sym.at(AttrKey::max).concrete))
    hyp(sym.at(AttrKey::min).encoded <= sym.at(AttrKey::max).encoded);
  std::vector<TensorType> in_types;
  for (const SymTensor& t : args) in_types.push_back(t.example);
  Expected<std::vector<TensorType>> outs = infer_types(n.op, &example, in_types);
  if (!outs)
    return fail(std::string(op_name(n.op)) + " at the example types: " + outs.error().message);
  Expected<std::vector<std::vector<expr>>> dims = shapes(n.op, example, sym, args, *outs);
  if (!dims) return dims.error();
  for (auto& v : *dims)
    for (expr& e : v) e = e.simplify();
  std::vector<SymTensor> results;
  if (n.op == Op::Concat) {
    const expr a = axis(sym, example, args[0].dims.size());
    expr acc = args[0].term, extent = along(args[0].dims, a);
    for (size_t i = 1; i < args.size(); ++i) {
      z3::expr_vector v(ctx_);
      v.push_back(a);
      v.push_back(ctx_.int_val(int(args[0].dims.size())));
      v.push_back(extent);
      v.push_back(along(args[i].dims, a));
      v.push_back(acc);
      v.push_back(args[i].term);
      acc = f->decl(v);
      extent = (extent + along(args[i].dims, a)).simplify();
    }
    results.push_back({acc, (*dims)[0], (*outs)[0]});
  } else if (n.op == Op::Split) {
    const expr a = axis(sym, example, args[0].dims.size());
    expr offset = ctx_.int_val(0);
    for (size_t i = 0; i < dims->size(); ++i) {
      z3::expr_vector v(ctx_);
      v.push_back(a);
      v.push_back(along(args[0].dims, a));
      v.push_back(offset.simplify());
      v.push_back(along((*dims)[i], a));
      v.push_back(args[0].term);
      results.push_back({f->decl(v), (*dims)[i], (*outs)[i]});
      offset = offset + along((*dims)[i], a);
    }
  } else {
    z3::expr_vector v(ctx_);
    for (AttrKey k : f->attrs) {
      // A literal axis as inference normalized it (negative counts from the
      // end); a parameter stays symbolic.
      const bool literal_axis = k == AttrKey::axis && sym.at(k).concrete;
      v.push_back(literal_axis ? ctx_.int_val(example.i(k)) : sym.at(k).encoded);
    }
    for (const SymTensor& t : args) v.push_back(t.term);
    results.push_back({f->decl(v), (*dims)[0], (*outs)[0]});
  }
  return results;
}

Expected<std::vector<SymTensor>> Translator::side(const RuleSide& s) {
  std::vector<std::vector<SymTensor>> outs;
  auto resolve = [&](const RuleRef& r) -> const SymTensor& {
    return r.kind == RuleRef::Kind::kVar ? vars_.at(rule_.inputs[r.index].name)
                                         : outs[r.index][r.output];
  };
  for (const RuleNode& n : s.nodes) {
    std::vector<SymTensor> args;
    for (const RuleRef& r : n.args) args.push_back(resolve(r));
    Expected<std::vector<SymTensor>> res = node(n, args);
    if (!res) return res.error();
    for (const SymTensor& t : *res) {
      hyp(fns_.rank()(t.term) == ctx_.int_val(int(t.dims.size())));
      for (size_t i = 0; i < t.dims.size(); ++i)
        hyp(fns_.dim()(t.term, ctx_.int_val(int(i))) == t.dims[i]);
    }
    outs.push_back(std::move(*res));
  }
  std::vector<SymTensor> result;
  for (const RuleRef& r : s.outputs) result.push_back(resolve(r));
  return result;
}

Expected<Translation> Translator::run() {
  for (const RuleVar& v : rule_.inputs) {
    expr t = ctx_.constant(v.name.c_str(), fns_.tensor());
    std::vector<expr> dims;
    for (int i = 0; i < v.type.shape.rank(); ++i) {
      std::string name = "dim(" + v.name + "," + std::to_string(i) + ")";
      expr d = ctx_.int_const(name.c_str());
      hyp(d >= 1);
      hyp(fns_.dim()(t, ctx_.int_val(i)) == d);
      out_.symbols.emplace_back(name, d);
      dims.push_back(d);
    }
    hyp(fns_.rank()(t) == ctx_.int_val(v.type.shape.rank()));
    out_.symbols.emplace_back(v.name, t);
    vars_.emplace(v.name, SymTensor{t, dims, v.type});
  }
  for (const Condition& c : rule_.where) {
    Expected<SymInt> l = shape_expr(c.lhs);
    if (!l) return l.error();
    if (c.kind == Condition::Kind::kOdd) {
      hyp(z3::mod(l->e, 2) == 1);
      continue;
    }
    Expected<SymInt> r = shape_expr(c.rhs);
    if (!r) return r.error();
    switch (c.kind) {
      case Condition::Kind::kEq:
        hyp(l->e == r->e);
        break;
      case Condition::Kind::kNe:
        hyp(l->e != r->e);
        break;
      case Condition::Kind::kLt:
        hyp(l->e < r->e);
        break;
      default:
        hyp(l->e <= r->e);
        break;
    }
  }
  Expected<std::vector<SymTensor>> src = side(rule_.source);
  if (!src) return src.error();
  Expected<std::vector<SymTensor>> dst = side(rule_.target);
  if (!dst) return dst.error();
  for (size_t i = 0; i < src->size(); ++i) {
    if ((*src)[i].dims.size() != (*dst)[i].dims.size())
      return fail("output " + std::to_string(i) + " has different ranks on the two sides");
    // The optimizer replaces an output only by one of the same type.
    for (size_t d = 0; d < (*src)[i].dims.size(); ++d) hyp((*src)[i].dims[d] == (*dst)[i].dims[d]);
    out_.source.push_back((*src)[i].term);
    out_.target.push_back((*dst)[i].term);
  }
  return std::move(out_);
}

}  // namespace

std::vector<std::string> unspecified_operators(const Rule& rule, const specs::OpFunctions& fns,
                                               const std::set<std::string>& specified) {
  std::set<std::string> missing;
  for (const RuleSide* s : {&rule.source, &rule.target}) {
    for (const RuleNode& n : s->nodes) {
      int inputs = n.op == Op::Concat ? 2 : static_cast<int>(n.args.size());
      Expected<bool> clip = fused_clip(n);
      const specs::OpFunction* f = fns.find(n.op, inputs, clip.ok() && *clip);
      std::string name = f ? f->name : std::string(op_name(n.op));
      if (!f || !specified.count(name)) missing.insert(name);
    }
  }
  return {missing.begin(), missing.end()};
}

Expected<Translation> translate_rule(const Rule& rule, const specs::OpFunctions& fns,
                                     const std::map<std::string, int64_t>& pins) {
  return Translator(rule, fns, pins).run();
}

}  // namespace tso::verifier
