#include "verifier/term_graph.h"

#include <cstdlib>
#include <limits>

namespace tso::verifier {

namespace {

std::string show(const z3::expr& e) {
  std::string s = e.to_string();
  return s.size() > 200 ? s.substr(0, 197) + "..." : s;
}

Error bad(const z3::expr& term, const std::string& msg) {
  return Error{msg + " in " + show(term)};
}

void flatten_seq(const z3::expr& e, std::vector<z3::expr>* out) {
  if (e.is_app() && e.decl().decl_kind() == Z3_OP_SEQ_CONCAT) {
    for (unsigned i = 0; i < e.num_args(); ++i) flatten_seq(e.arg(i), out);
  } else {
    out->push_back(e);
  }
}

// A real numeral, or an infinity as attributes encode one: 1/0 or -1/0
// (specs/op_functions.cc).
Expected<double> decode_real(const z3::expr& e) {
  z3::expr s = e.simplify();
  int64_t sign = 0, zero = 1;
  if (s.is_app() && s.decl().decl_kind() == Z3_OP_DIV && s.arg(0).is_numeral_i64(sign) &&
      s.arg(1).is_numeral_i64(zero) && zero == 0 && (sign == 1 || sign == -1))
    return sign * std::numeric_limits<double>::infinity();
  if (!s.is_numeral()) return Error{"expected a real numeral, got " + show(s)};
  int64_t num, den;
  if (s.is_numeral_i64(num)) return static_cast<double>(num);
  z3::expr n = s.numerator(), d = s.denominator();
  if (n.is_numeral_i64(num) && d.is_numeral_i64(den)) return double(num) / double(den);
  return std::strtod(s.get_decimal_string(20).c_str(), nullptr);
}

Expected<AttrValue> decode_attr(AttrType t, const z3::expr& e) {
  switch (t) {
    case AttrType::Int: {
      Expected<int64_t> v = decode_int(e);
      if (!v) return v.error();
      return AttrValue{*v};
    }
    case AttrType::Act: {
      Expected<int64_t> v = decode_int(e);
      if (!v) return v.error();
      // A fused clip is the `name_clip` function, never a code.
      if (*v < 0 || *v > static_cast<int>(Act::kGelu))
        return Error{"activation code " + std::to_string(*v) + " is not 0..4"};
      return AttrValue{static_cast<Act>(*v)};
    }
    case AttrType::Float: {
      Expected<double> v = decode_real(e);
      if (!v) return v.error();
      return AttrValue{*v};
    }
    case AttrType::Ints: {
      Expected<std::vector<int64_t>> v = decode_ints(e);
      if (!v) return v.error();
      return AttrValue{*v};
    }
    case AttrType::Pad: {
      Expected<std::vector<int64_t>> v = decode_ints(e);
      if (!v) return v.error();
      if (v->size() != 5 || (*v)[0] < 0 || (*v)[0] > 2)
        return Error{"padding must be [mode,top,left,bottom,right] with mode 0..2"};
      Padding p;
      p.mode = static_cast<Padding::Mode>((*v)[0]);
      for (int i = 0; i < 4; ++i) p.pads[i] = (*v)[1 + i];
      return AttrValue{p};
    }
    case AttrType::Str:
      break;
  }
  return Error{"string attributes have no encoding"};
}

}  // namespace

Expected<int64_t> decode_int(const z3::expr& e) {
  z3::expr s = e.simplify();
  int64_t v;
  if (!s.is_numeral_i64(v)) return Error{"expected an integer, got " + show(s)};
  return v;
}

Expected<std::vector<int64_t>> decode_ints(const z3::expr& e) {
  z3::expr s = e.simplify();
  std::vector<z3::expr> parts;
  flatten_seq(s, &parts);
  std::vector<int64_t> out;
  for (const z3::expr& p : parts) {
    if (p.is_app() && p.decl().decl_kind() == Z3_OP_SEQ_EMPTY) continue;
    if (!p.is_app() || p.decl().decl_kind() != Z3_OP_SEQ_UNIT)
      return Error{"expected a list of integers, got " + show(s)};
    Expected<int64_t> v = decode_int(p.arg(0));
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

TermGraphBuilder::TermGraphBuilder(const specs::OpFunctions& fns,
                                   std::map<std::string, TensorType> inputs)
    : fns_(fns), b_("term") {
  for (const auto& [name, type] : inputs) inputs_[name] = b_.input(name, type);
}

Expected<TensorRef> TermGraphBuilder::add(const z3::expr& term) {
  auto it = memo_.find(term.id());
  if (it != memo_.end()) return it->second;
  Expected<TensorRef> r = add_app(term);
  if (r) memo_.emplace(term.id(), *r);
  return r;
}

Expected<TensorRef> TermGraphBuilder::add_app(const z3::expr& term) {
  if (!term.is_app() || !Z3_is_eq_sort(term.ctx(), term.get_sort(), fns_.tensor()))
    return bad(term, "expected a tensor term");
  std::string name = term.decl().name().str();
  if (term.num_args() == 0) {
    auto in = inputs_.find(name);
    if (in == inputs_.end()) return bad(term, "tensor '" + name + "' has no type");
    return in->second;
  }
  const specs::OpFunction* f = fns_.find(name);
  if (!f) return bad(term, "'" + name + "' is not an operator function");
  Attrs attrs;
  unsigned arg = 0;
  for (AttrKey k : f->attrs) {
    Expected<AttrValue> v = decode_attr(attr_info(k).type, term.arg(arg++));
    if (!v) return bad(term, std::string(attr_info(k).name) + ": " + v.error().message);
    attrs.set(k, std::move(*v));
  }
  if (f->fused_clip) attrs.set(AttrKey::act, Act::kClip);
  std::vector<int64_t> shape_params;
  while (arg < term.num_args() - f->inputs) {
    Expected<int64_t> v = decode_int(term.arg(arg++));
    if (!v) return bad(term, v.error().message);
    shape_params.push_back(*v);
  }
  std::vector<TensorRef> args;
  for (; arg < term.num_args(); ++arg) {
    Expected<TensorRef> r = add(term.arg(arg));
    if (!r) return r.error();
    args.push_back(*r);
  }
  int output = 0;
  if (f->shape == specs::OpFunction::Shape::kConcat) {
    int64_t axis = attrs.i(AttrKey::axis);
    const Shape &x = type(args[0]).shape, &y = type(args[1]).shape;
    if (shape_params[0] != x.rank() || axis < 0 || axis >= x.rank() || y.rank() != x.rank() ||
        shape_params[1] != x[axis] || shape_params[2] != y[axis])
      return bad(term, "concat parameters do not match the shapes " + to_string(x) + " and " +
                           to_string(y));
  } else if (f->shape == specs::OpFunction::Shape::kSplit) {
    int64_t axis = attrs.i(AttrKey::axis);
    const Shape& x = type(args[0]).shape;
    int64_t total = shape_params[0], offset = shape_params[1], length = shape_params[2];
    if (axis < 0 || axis >= x.rank() || total != x[axis] || offset < 0 || length < 1 ||
        offset + length > total)
      return bad(term, "split parameters do not match the shape " + to_string(x));
    std::vector<int64_t> sizes;
    if (offset > 0) sizes.push_back(offset), output = 1;
    sizes.push_back(length);
    if (offset + length < total) sizes.push_back(total - offset - length);
    attrs.set(AttrKey::sizes, sizes);
  }
  Expected<std::vector<TensorRef>> outs = b_.add(f->op, std::move(args), std::move(attrs));
  if (!outs) return bad(term, outs.error().message);
  return (*outs)[output];
}

Expected<Graph> TermGraphBuilder::finish(const std::vector<TensorRef>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) b_.output("out" + std::to_string(i), outputs[i]);
  return b_.finish();
}

}  // namespace tso::verifier
