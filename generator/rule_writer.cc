// Symbolic replay of a candidate's sides: every extent of every tensor as a
// shape expression over the rule's variables, and the pieces split cuts at.
//
// Derived attributes: split sizes are the symbolic pieces; conv2d groups with
// a depthwise weight (C_in of 1) are dim(x,1); constant shapes are the dims of
// a variable of that same shape, else per extent the first variable extent
// of that value (1 stays literal), else literal; an enlarge kernel is the
// kernel of another 4-D variable with that kernel, else literal.
//
// Conditions: the generator's add and mul never broadcast, and a rule found
// on equal shapes may be false on broadcast ones (conv2d(x1, w) + conv2d(x2,
// w) = conv2d(x1 + x2, w) fails when x1 is 1x1 and x2 is 5x5: padding), so
// the operands' extents are required equal by `where` conditions wherever
// their expressions differ; a bias add's vector has the extent of its
// operand's last axis. Where a bias (of conv2d or a bias add) is cut into
// pieces and the result keeps them, the pieces are required equal one by
// one, so the rule stays true read backwards (a split at those pieces).
// A grouped conv whose input or weight channels are cut into one piece per
// group gets its pieces required equal, and a depthwise conv over as many
// input as weight pieces equal channel multipliers: the merge of convolutions
// into a grouped one holds only for equal output channels per group.
#include "generator/rule_writer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace tso::gen {

namespace {

using Exprs = std::vector<ShapeExpr>;

struct SymTensor {
  Exprs dims;
  std::vector<Exprs> segs;  // per axis; empty: no pieces
};

ShapeExpr sum(const Exprs& e, size_t n) {
  ShapeExpr s = e[0];
  for (size_t i = 1; i < n; ++i) s = ShapeExpr::binary(ShapeExpr::Kind::kAdd, s, e[i]);
  return s;
}

Exprs pieces(const SymTensor& t, int axis) {
  return t.segs[axis].empty() ? Exprs{t.dims[axis]} : t.segs[axis];
}

class SideWriter {
 public:
  // rule_vars[i] is written as set.vars[names[i]] (a renaming within classes).
  SideWriter(KindTable& table, const std::vector<int>& rule_vars, const std::vector<int>& names,
             std::vector<Condition>* where)
      : table_(table), where_(where) {
    const OpSet& set = table.set();
    for (size_t i = 0; i < rule_vars.size(); ++i) {
      var_index_[rule_vars[i]] = static_cast<int>(i);
      vars_.push_back(&set.vars[names[i]]);
    }
  }

  RuleSide write(const Program& p, const std::vector<int>& outs) {
    const OpSet& set = table_.set();
    Replayed r = replay(table_, p);
    std::vector<SymTensor> sym(r.kind.size());
    std::vector<RuleRef> refs(r.kind.size());
    for (int v = 0; v < r.num_vars; ++v) {
      const Shape& s = set.vars[v].type.shape;
      sym[v].segs.resize(s.rank());
      if (!var_index_.count(v)) continue;
      const std::string& name = vars_[var_index_.at(v)]->name;
      for (int d = 0; d < s.rank(); ++d) sym[v].dims.push_back(ShapeExpr::dim(name, d));
      refs[v] = {RuleRef::Kind::kVar, var_index_.at(v), 0};
    }
    RuleSide side;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const OpTemplate& t = set.ops[p.ops[i].tmpl];
      const Applied& app = *r.applied[i];
      std::vector<const SymTensor*> a;
      RuleNode node;
      node.op = app.node.op;
      for (int arg : r.op_args[i]) {
        a.push_back(&sym[arg]);
        node.args.push_back(refs[arg]);
      }
      std::vector<std::pair<AttrKey, Exprs>> exprs;
      std::vector<SymTensor> out = outputs(t, app, r, i, a, &exprs);
      for (const auto& [key, value] : app.node.attrs.entries()) {
        PatternAttr pa;
        pa.key = key;
        pa.value = value;
        for (auto& [k, e] : exprs)
          if (k == key) {
            pa.form =
                key == AttrKey::groups ? PatternAttr::Form::kExpr : PatternAttr::Form::kExprList;
            pa.exprs = e;
            pa.value = AttrValue{};
          }
        node.attrs.push_back(std::move(pa));
      }
      node.outputs = static_cast<int>(out.size());
      for (size_t o = 0; o < out.size(); ++o) {
        int tensor = r.op_outputs[i][o];
        sym[tensor] = std::move(out[o]);
        refs[tensor] = {RuleRef::Kind::kNode, static_cast<int>(i), static_cast<int>(o)};
      }
      side.nodes.push_back(std::move(node));
    }
    for (int t : outs) side.outputs.push_back(refs[t]);
    return side;
  }

 private:
  // A constant extent of value v, as an expression over the variables.
  ShapeExpr extent(int64_t v) const {
    if (v != 1)
      for (const GenVar* g : vars_)
        for (int d = 0; d < g->type.shape.rank(); ++d)
          if (g->type.shape[d] == v) return ShapeExpr::dim(g->name, d);
    return ShapeExpr::lit(v);
  }

  Exprs constant_shape(const std::vector<int64_t>& shape) const {
    Exprs e;
    for (const GenVar* g : vars_)
      if (std::vector<int64_t>(g->type.shape.begin(), g->type.shape.end()) == shape) {
        for (size_t d = 0; d < shape.size(); ++d) e.push_back(ShapeExpr::dim(g->name, d));
        return e;
      }
    for (int64_t v : shape) e.push_back(extent(v));
    return e;
  }

  std::vector<SymTensor> outputs(const OpTemplate& t, const Applied& app, const Replayed& r,
                                 size_t op, const std::vector<const SymTensor*>& a,
                                 std::vector<std::pair<AttrKey, Exprs>>* exprs) {
    std::vector<SymTensor> out(app.out_kinds.size());
    const Kind& k0 = table_.kind(app.out_kinds[0]);
    for (SymTensor& s : out) s.segs.resize(k0.shape.rank());
    SymTensor& o = out[0];
    // Pieces kept where the concrete split info has them.
    auto keep = [&](SymTensor& s, int kind, const SymTensor& from) {
      for (size_t d = 0; d < s.segs.size(); ++d)
        if (table_.kind(kind).segs[d].n > 0 && d < from.segs.size()) s.segs[d] = from.segs[d];
    };
    switch (t.op) {
      case Op::Conv2d: {
        o.dims = {a[0]->dims[0], a[1]->dims[0], a[0]->dims[2], a[0]->dims[3]};
        o.segs[0] = a[0]->segs[0];
        o.segs[1] = a[1]->segs[0];
        if (a.size() == 3 && !a[2]->segs[0].empty()) {
          if (k0.segs[1].n == 0)
            o.segs[1].clear();
          else
            require_pieces_equal(a[1]->segs[0], a[2]->segs[0]);
        }
        const int64_t groups = app.node.attrs.i(AttrKey::groups);
        if (groups != 1 && table_.kind(r.kind[r.op_args[op][1]]).shape[1] == 1) {
          exprs->push_back({AttrKey::groups, {a[0]->dims[1]}});
          require_equal_multipliers(a[0]->segs[1], a[1]->segs[0]);
        } else if (groups != 1) {
          require_equal_widths(a[0]->segs[1], groups);
          require_equal_widths(a[1]->segs[0], groups);
        }
        break;
      }
      case Op::Matmul: {
        const size_t last = a[0]->dims.size() - 1;
        o.dims = a[0]->dims;
        o.dims[last] = a[1]->dims[1];
        for (size_t d = 0; d < last; ++d) o.segs[d] = a[0]->segs[d];
        o.segs[last] = a[1]->segs[1];
        break;
      }
      case Op::Add:
        if (t.bias) {
          // A vector along the last axis: its extent is that axis's, piece
          // by piece where the sum keeps the pieces (split may cut there).
          const size_t last = a[0]->dims.size() - 1;
          require_equal(a[0]->dims[last], a[1]->dims[0]);
          o.dims = a[0]->dims;
          keep(o, app.out_kinds[0], *a[0]);
          if (!o.segs[last].empty()) require_pieces_equal(o.segs[last], a[1]->segs[0]);
          break;
        }
        [[fallthrough]];
      case Op::Mul:
        for (size_t d = 0; d < a[0]->dims.size(); ++d) require_equal(a[0]->dims[d], a[1]->dims[d]);
        o.dims = a[0]->dims;
        keep(o, app.out_kinds[0], *a[0]);
        break;
      case Op::ScalarMul:
      case Op::Relu:
      case Op::Sigmoid:
      case Op::Tanh:
      case Op::Gelu:
      case Op::Clip:
        o = *a[0];
        break;
      case Op::AvgPool:
      case Op::MaxPool:
        o.dims = a[0]->dims;
        o.segs[0] = a[0]->segs[0];
        o.segs[1] = a[0]->segs[1];
        break;
      case Op::Enlarge: {
        const std::vector<int64_t>& k = app.node.attrs.ints(AttrKey::kernel);
        Exprs ke{ShapeExpr::lit(k[0]), ShapeExpr::lit(k[1])};
        for (const GenVar* g : vars_)
          if (g->type.shape.rank() == 4 && g->type.shape[2] == k[0] && g->type.shape[3] == k[1] &&
              !(a[0]->dims[0] == ShapeExpr::dim(g->name, 0))) {
            ke = {ShapeExpr::dim(g->name, 2), ShapeExpr::dim(g->name, 3)};
            break;
          }
        o.dims = {a[0]->dims[0], a[0]->dims[1], ke[0], ke[1]};
        o.segs[0] = a[0]->segs[0];
        o.segs[1] = a[0]->segs[1];
        exprs->push_back({AttrKey::kernel, ke});
        break;
      }
      case Op::Transpose: {
        const std::vector<int64_t>& perm = app.node.attrs.ints(AttrKey::perm);
        for (size_t d = 0; d < perm.size(); ++d) {
          o.dims.push_back(a[0]->dims[perm[d]]);
          o.segs[d] = a[0]->segs[perm[d]];
        }
        break;
      }
      case Op::Concat: {
        int axis = static_cast<int>(app.node.attrs.i(AttrKey::axis));
        o.dims = a[0]->dims;
        keep(o, app.out_kinds[0], *a[0]);
        Exprs p = pieces(*a[0], axis), q = pieces(*a[1], axis);
        p.insert(p.end(), q.begin(), q.end());
        o.dims[axis] = sum(p, p.size());
        o.segs[axis] = p;
        break;
      }
      case Op::Split: {
        int axis = static_cast<int>(app.node.attrs.i(AttrKey::axis));
        Exprs p = pieces(*a[0], axis);
        ShapeExpr left = sum(p, p.size() - 1), right = p.back();
        for (size_t i = 0; i < out.size(); ++i) {
          out[i].dims = a[0]->dims;
          keep(out[i], app.out_kinds[i], *a[0]);
        }
        out[0].dims[axis] = left;
        out[1].dims[axis] = right;
        out[0].segs[axis] = p.size() > 2 ? Exprs(p.begin(), p.end() - 1) : Exprs{};
        out[1].segs[axis] = {};
        exprs->push_back({AttrKey::sizes, {left, right}});
        break;
      }
      case Op::ConstOnes:
      case Op::ConstEye:
      case Op::ConstEyeConv:
      case Op::ConstPool: {
        o.dims = constant_shape(app.node.attrs.ints(AttrKey::shape));
        exprs->push_back({AttrKey::shape, o.dims});
        break;
      }
      default:
        TSO_CHECK(false, "operator the generator does not apply: " + t.text);
    }
    return out;
  }

  void require_pieces_equal(const Exprs& x, const Exprs& y) {
    TSO_CHECK(x.size() == y.size(), "pieces kept by the kinds differ in number");
    for (size_t i = 0; i < x.size(); ++i) require_equal(x[i], y[i]);
  }

  // A grouped conv over channels cut into one piece per group (the merge of
  // convolutions into a grouped one) holds where the groups are the pieces:
  // pieces of equal extent.
  void require_equal_widths(const Exprs& pieces, int64_t groups) {
    if (static_cast<int64_t>(pieces.size()) != groups) return;
    for (size_t i = 1; i < pieces.size(); ++i) require_equal(pieces[0], pieces[i]);
  }

  // A depthwise conv over input channel pieces with as many weight pieces:
  // each part keeps its channel multiplier where they are equal,
  // out_i * in_0 == out_0 * in_i.
  void require_equal_multipliers(const Exprs& in, const Exprs& out) {
    if (in.size() < 2 || in.size() != out.size()) return;
    using K = ShapeExpr::Kind;
    for (size_t i = 1; i < in.size(); ++i)
      require_equal(ShapeExpr::binary(K::kMul, out[i], in[0]),
                    ShapeExpr::binary(K::kMul, out[0], in[i]));
  }

  void require_equal(const ShapeExpr& x, const ShapeExpr& y) {
    if (x == y) return;
    for (const Condition& c : *where_)
      if ((c.lhs == x && c.rhs == y) || (c.lhs == y && c.rhs == x)) return;
    where_->push_back({Condition::Kind::kEq, x, y});
  }

  KindTable& table_;
  std::vector<Condition>* where_;
  std::map<int, int> var_index_;
  std::vector<const GenVar*> vars_;
};

// A sum of extents and literals as (extent -> coefficient, constant);
// nullopt for other expressions.
using Linear = std::pair<std::map<std::pair<std::string, int64_t>, int64_t>, int64_t>;
std::optional<Linear> linear(const ShapeExpr& e) {
  switch (e.kind) {
    case ShapeExpr::Kind::kLit:
      return Linear{{}, e.value};
    case ShapeExpr::Kind::kDim:
      return Linear{{{{e.var, e.value}, 1}}, 0};
    case ShapeExpr::Kind::kAdd: {
      std::optional<Linear> a = linear(e.args[0]), b = linear(e.args[1]);
      if (!a || !b) return std::nullopt;
      for (const auto& [k, c] : b->first) a->first[k] += c;
      a->second += b->second;
      return a;
    }
    default:
      return std::nullopt;
  }
}

// Drops the conditions that the others imply: an extent equal to one already
// known equal to it, or a sum equal to another once equal extents are
// identified.
std::vector<Condition> minimal(const std::vector<Condition>& where) {
  std::map<std::pair<std::string, int64_t>, std::pair<std::string, int64_t>> parent;
  std::function<std::pair<std::string, int64_t>(const std::pair<std::string, int64_t>&)> find =
      [&](const std::pair<std::string, int64_t>& x) {
        auto it = parent.find(x);
        return it == parent.end() || it->second == x ? x : find(it->second);
      };
  auto normal = [&](const ShapeExpr& e) -> std::optional<Linear> {
    std::optional<Linear> l = linear(e);
    if (!l) return std::nullopt;
    Linear n{{}, l->second};
    for (const auto& [k, c] : l->first) n.first[find(k)] += c;
    std::erase_if(n.first, [](const auto& kc) { return kc.second == 0; });
    return n;
  };
  std::vector<Condition> out, sums;
  for (const Condition& c : where) {
    if (c.kind != Condition::Kind::kEq || c.lhs.kind != ShapeExpr::Kind::kDim ||
        c.rhs.kind != ShapeExpr::Kind::kDim) {
      sums.push_back(c);
      continue;
    }
    auto x = find({c.lhs.var, c.lhs.value}), y = find({c.rhs.var, c.rhs.value});
    if (x == y) continue;
    parent[x] = y;
    out.push_back(c);
  }
  std::vector<std::pair<Linear, Linear>> kept;
  for (const Condition& c : sums) {
    std::optional<Linear> a = normal(c.lhs), b = normal(c.rhs);
    if (c.kind == Condition::Kind::kEq && a && b) {
      if (*a == *b) continue;
      auto same = [&](const std::pair<Linear, Linear>& k) {
        return (k.first == *a && k.second == *b) || (k.first == *b && k.second == *a);
      };
      if (std::any_of(kept.begin(), kept.end(), same)) continue;
      kept.push_back({*a, *b});
    }
    out.push_back(c);
  }
  return out;
}

// The variables a candidate reads, in order of first use (source, then
// target).
std::vector<int> rule_vars(const OpSet& set, const Candidate& c) {
  std::vector<int> out;
  auto use = [&](int t) {
    if (t < static_cast<int>(set.vars.size()) && std::find(out.begin(), out.end(), t) == out.end())
      out.push_back(t);
  };
  for (const Program* p : {&c.a, &c.b}) {
    for (const ProgOp& op : p->ops)
      for (int j = 0; j < set.ops[op.tmpl].arity; ++j) use(op.args[j]);
    for (int t : p == &c.a ? c.a_out : c.b_out) use(t);
  }
  return out;
}

// Renames the variables within their classes to the class's first names, in
// order of first use, so each renaming class prints one way.
std::vector<int> canonical_names(const OpSet& set, const std::vector<int>& vars) {
  std::map<int, int> next;  // class -> variables of the class named so far
  std::vector<int> names;
  for (int v : vars) {
    int cls = set.vars[v].renaming_class, skip = next[cls]++;
    for (size_t u = 0; u < set.vars.size(); ++u)
      if (set.vars[u].renaming_class == cls && skip-- == 0) names.push_back(static_cast<int>(u));
  }
  return names;
}

}  // namespace

Rule make_rule(KindTable& table, const Candidate& c, std::string name, const RuleOrigin& origin) {
  const OpSet& set = table.set();
  Rule rule;
  rule.name = std::move(name);
  rule.origin = origin;
  rule.status.kind = RuleStatus::Kind::kUnverified;
  std::vector<int> vars = rule_vars(set, c);
  std::vector<int> names = canonical_names(set, vars);
  // Declared in name order.
  std::vector<size_t> order(vars.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return names[x] < names[y]; });
  std::vector<int> sorted_vars, sorted_names;
  for (size_t i : order) {
    sorted_vars.push_back(vars[i]);
    sorted_names.push_back(names[i]);
    rule.inputs.push_back({set.vars[names[i]].name, set.vars[names[i]].type});
  }
  SideWriter w(table, sorted_vars, sorted_names, &rule.where);
  rule.source = w.write(c.a, c.a_out);
  rule.target = w.write(c.b, c.b_out);
  rule.where = minimal(rule.where);
  return rule;
}

}  // namespace tso::gen
