#include "specs/op_functions.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace tso::specs {

namespace {

// Every operator of core/ops.def, in table order.
constexpr Op kAllOps[] = {
#define TSO_OP(id, name, min_inputs, max_inputs, outputs, kind, attrs) Op::id,
#include "core/ops.def"
};

bool has_function(const OpInfo& info) {
  if (info.op == Op::Input || info.op == Op::Weight) return false;
  for (int k = 0; k < kNumAttrKeys; ++k)
    if (info.takes(AttrKey(k)) && attr_info(AttrKey(k)).type == AttrType::Str) return false;
  return true;
}

// An exact rational for a finite double; the two infinities as the (fixed,
// otherwise unconstrained) terms 1/0 and -1/0.
z3::expr real_of(z3::context& ctx, double v) {
  if (std::isinf(v)) return ctx.real_val(v > 0 ? 1 : -1) / ctx.real_val(0);
  TSO_CHECK(!std::isnan(v), "NaN attribute value");
  int exp = 0;
  double mant = std::frexp(v, &exp);
  int64_t m = static_cast<int64_t>(std::ldexp(mant, 53));
  exp -= 53;
  z3::expr r = ctx.real_val(m);
  z3::expr two = ctx.real_val(2);
  z3::expr scale = ctx.real_val(1);
  for (int i = 0; i < std::abs(exp); ++i) scale = scale * two;
  return (exp >= 0 ? r * scale : r / scale).simplify();
}

}  // namespace

z3::expr int_seq(z3::context& ctx, const std::vector<z3::expr>& items) {
  if (items.empty()) {
    z3::sort i = ctx.int_sort();
    return z3::expr(ctx, Z3_mk_seq_empty(ctx, ctx.seq_sort(i)));
  }
  z3::expr_vector units(ctx);
  for (const z3::expr& e : items) units.push_back(e.unit());
  return units.size() == 1 ? units[0] : z3::concat(units);
}

z3::expr encode_attr(z3::context& ctx, AttrType t, const AttrValue& v) {
  switch (t) {
    case AttrType::Int:
      return ctx.int_val(std::get<int64_t>(v));
    case AttrType::Act:
      return ctx.int_val(static_cast<int>(std::get<Act>(v)));
    case AttrType::Float:
      return real_of(ctx, std::get<double>(v));
    case AttrType::Ints: {
      std::vector<z3::expr> items;
      for (int64_t x : std::get<std::vector<int64_t>>(v)) items.push_back(ctx.int_val(x));
      return int_seq(ctx, items);
    }
    case AttrType::Pad: {
      const Padding& p = std::get<Padding>(v);
      std::vector<z3::expr> items{ctx.int_val(static_cast<int>(p.mode))};
      for (int64_t x : p.pads) items.push_back(ctx.int_val(x));
      return int_seq(ctx, items);
    }
    case AttrType::Str:
      break;
  }
  TSO_CHECK(false, "string attributes have no Z3 encoding");
  return ctx.int_val(0);
}

z3::sort OpFunctions::attr_sort(AttrType t) const {
  switch (t) {
    case AttrType::Int:
    case AttrType::Act:
      return ctx_->int_sort();
    case AttrType::Float:
      return ctx_->real_sort();
    default:
      return ints_;
  }
}

OpFunctions::OpFunctions(z3::context& ctx)
    : ctx_(&ctx),
      tensor_(ctx.uninterpreted_sort("T")),
      ints_(ctx.int_sort()),
      rank_(ctx.function("rank", tensor_, ctx.int_sort())),
      dim_(ctx.function("dim", tensor_, ctx.int_sort(), ctx.int_sort())) {
  z3::sort i = ctx.int_sort();
  ints_ = ctx.seq_sort(i);
  for (Op op : kAllOps) {
    const OpInfo& info = op_info(op);
    if (!has_function(info)) continue;
    OpFunction::Shape shape = op == Op::Concat  ? OpFunction::Shape::kConcat
                              : op == Op::Split ? OpFunction::Shape::kSplit
                                                : OpFunction::Shape::kPlain;
    int lo = info.min_inputs, hi = info.max_inputs;
    if (shape == OpFunction::Shape::kConcat) lo = hi = 2;
    const bool has_act = info.takes(AttrKey::act);
    for (bool clip : {false, true}) {
      if (clip && !has_act) continue;
      for (int n = lo; n <= hi; ++n) {
        z3::sort_vector domain(ctx);
        std::vector<AttrKey> attrs;
        for (int k = 0; k < kNumAttrKeys; ++k) {
          AttrKey key = AttrKey(k);
          if (!info.takes(key) || (shape == OpFunction::Shape::kSplit && key == AttrKey::sizes))
            continue;
          // The activation or its clip bounds, never both (see the header).
          const bool bound = key == AttrKey::min || key == AttrKey::max;
          if (has_act && (clip ? key == AttrKey::act : bound)) continue;
          attrs.push_back(key);
          domain.push_back(attr_sort(attr_info(key).type));
        }
        int extra = shape == OpFunction::Shape::kPlain ? 0 : 3;  // rank n0 n1 / total offset length
        for (int e = 0; e < extra; ++e) domain.push_back(ctx.int_sort());
        for (int t = 0; t < n; ++t) domain.push_back(tensor_);
        std::string name(info.name);
        if (clip) name += "_clip";
        if (n != lo) name += "." + std::to_string(n);
        fns_.push_back(OpFunction{op, n, shape, clip, name, std::move(attrs),
                                  ctx.function(name.c_str(), domain, tensor_)});
      }
    }
  }
}

const OpFunction* OpFunctions::find(Op op, int inputs, bool fused_clip) const {
  for (const OpFunction& f : fns_)
    if (f.op == op && f.inputs == inputs && f.fused_clip == fused_clip) return &f;
  return nullptr;
}

const OpFunction* OpFunctions::find(std::string_view name) const {
  for (const OpFunction& f : fns_)
    if (f.name == name) return &f;
  return nullptr;
}

z3::sort_vector OpFunctions::sorts() const {
  z3::sort_vector v(*ctx_);
  v.push_back(tensor_);
  return v;
}

z3::func_decl_vector OpFunctions::decls() const {
  z3::func_decl_vector v(*ctx_);
  for (const OpFunction& f : fns_) v.push_back(f.decl);
  v.push_back(rank_);
  v.push_back(dim_);
  return v;
}

}  // namespace tso::specs
