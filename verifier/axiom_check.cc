#include "verifier/axiom_check.h"

#include <optional>
#include <random>

#include "runtime/reference/executor.h"

#include "verifier/numeric.h"
#include "verifier/term_graph.h"

namespace tso::verifier {

namespace {

using specs::TestValue;

// One test of an axiom, after substituting the test values for the bound
// variables: the optional guard and the two sides.
struct Instance {
  std::optional<z3::expr> guard;
  std::optional<z3::expr> lhs, rhs;  // a tensor equation
  std::optional<z3::expr> law;       // or a shape law: a formula over rank and dim
  std::map<std::string, TensorType> tensors;
};

Expected<Instance> instantiate_axiom(const specs::Axiom& ax, const specs::AxiomTest& test,
                                     const specs::OpFunctions& fns) {
  z3::context& ctx = fns.ctx();
  const z3::expr& q = ax.formula;
  if (!q.is_quantifier() || !q.is_forall())
    return Error{"an axiom must be (forall (...) (= lhs rhs)) or (forall (...) (=> guard (= lhs rhs)))"};
  unsigned n = Z3_get_quantifier_num_bound(ctx, q);
  z3::expr_vector values(ctx);
  std::map<std::string, TensorType> tensors;
  std::vector<z3::expr> by_position;
  for (unsigned i = 0; i < n; ++i) {
    std::string name = z3::symbol(ctx, Z3_get_quantifier_bound_name(ctx, q, i)).str();
    z3::sort sort(ctx, Z3_get_quantifier_bound_sort(ctx, q, i));
    auto it = test.values.find(name);
    if (it == test.values.end()) return Error{"the test gives no value for '" + name + "'"};
    const TestValue& v = it->second;
    bool ok = false;
    if (sort.is_int() && v.kind == TestValue::Kind::kInt) {
      by_position.push_back(ctx.int_val(v.value));
      ok = true;
    } else if (sort.is_real() && v.kind == TestValue::Kind::kInt) {
      by_position.push_back(ctx.real_val(v.value));
      ok = true;
    } else if (Z3_is_eq_sort(ctx, sort, fns.ints()) && v.kind == TestValue::Kind::kInts) {
      std::vector<z3::expr> items;
      for (int64_t x : v.list) items.push_back(ctx.int_val(x));
      by_position.push_back(specs::int_seq(ctx, items));
      ok = true;
    } else if (Z3_is_eq_sort(ctx, sort, fns.tensor()) && v.kind == TestValue::Kind::kTensor) {
      by_position.push_back(ctx.constant(name.c_str(), fns.tensor()));
      tensors[name] = v.type;
      ok = true;
    }
    if (!ok) return Error{"the value of '" + name + "' does not fit its sort " + sort.to_string()};
  }
  if (test.values.size() != n) return Error{"the test names a variable the axiom does not bind"};
  // Bound variable i is de Bruijn index n-1-i.
  for (unsigned j = 0; j < n; ++j) values.push_back(by_position[n - 1 - j]);
  z3::expr body = q.body().substitute(values);
  std::optional<z3::expr> guard;
  if (body.is_app() && body.decl().decl_kind() == Z3_OP_IMPLIES) {
    guard = body.arg(0);
    body = body.arg(1);
  }
  if (body.is_app() && body.decl().decl_kind() == Z3_OP_EQ &&
      Z3_is_eq_sort(ctx, body.arg(0).get_sort(), fns.tensor()))
    return Instance{guard, body.arg(0), body.arg(1), {}, std::move(tensors)};
  if (body.is_bool()) return Instance{guard, std::nullopt, std::nullopt, body, std::move(tensors)};
  return Error{"an axiom must state an equation between tensors or a shape law, possibly under a "
               "guard"};
}

// Replaces (rank t) and (dim t i) by their values at the test's shapes.
Expected<z3::expr> eval_shapes(const z3::expr& e, const specs::OpFunctions& fns,
                               TermGraphBuilder& b) {
  if (!e.is_app()) return e;
  z3::func_decl d = e.decl();
  if (Z3_is_eq_func_decl(e.ctx(), d, fns.rank()) || Z3_is_eq_func_decl(e.ctx(), d, fns.dim())) {
    Expected<TensorRef> t = b.add(e.arg(0));
    if (!t) return t.error();
    const Shape& s = b.type(*t).shape;
    if (e.num_args() == 1) return e.ctx().int_val(s.rank());
    Expected<int64_t> i = decode_int(e.arg(1));
    // An axis that is no number (seq.nth past the end) sits in a branch the
    // rank rules out: any value will do.
    if (!i) return e.ctx().int_const("unspecified_extent");
    return e.ctx().int_val(*i >= 0 && *i < s.rank() ? s[*i] : 0);
  }
  z3::expr_vector args(e.ctx());
  for (unsigned i = 0; i < e.num_args(); ++i) {
    Expected<z3::expr> a = eval_shapes(e.arg(i), fns, b);
    if (!a) return a.error();
    args.push_back(*a);
  }
  return d(args);
}

Expected<double> run_test(const specs::Axiom& ax, const specs::AxiomTest& test,
                          const specs::OpFunctions& fns, std::mt19937_64& rng, int trials) {
  Expected<Instance> inst = instantiate_axiom(ax, test, fns);
  if (!inst) return inst.error();
  TermGraphBuilder b(fns, inst->tensors);
  if (inst->guard) {
    Expected<z3::expr> g = eval_shapes(*inst->guard, fns, b);
    if (!g) return Error{"guard: " + g.error().message};
    z3::expr v = g->simplify();
    if (v.is_false()) return Error{"the test does not satisfy the axiom's guard"};
    if (!v.is_true()) return Error{"the guard does not evaluate to a truth value: " + v.to_string()};
  }
  if (inst->law) {
    Expected<z3::expr> law = eval_shapes(*inst->law, fns, b);
    if (!law) return Error{"shape law: " + law.error().message};
    if (!law->simplify().is_true()) return Error{"the shape law does not hold at these shapes"};
    return 0.0;
  }
  // Sides may name extents of their variables (a reshape to [1,C,1,1]).
  Expected<z3::expr> lhs = eval_shapes(*inst->lhs, fns, b);
  if (!lhs) return Error{"left side: " + lhs.error().message};
  Expected<z3::expr> rhs = eval_shapes(*inst->rhs, fns, b);
  if (!rhs) return Error{"right side: " + rhs.error().message};
  Expected<TensorRef> l = b.add(*lhs);
  if (!l) return Error{"left side: " + l.error().message};
  Expected<TensorRef> r = b.add(*rhs);
  if (!r) return Error{"right side: " + r.error().message};
  if (b.type(*l) != b.type(*r))
    return Error{"the sides have types " + to_string(b.type(*l)) + " and " +
                 to_string(b.type(*r))};
  Expected<Graph> g = b.finish({*l, *r});
  if (!g) return g.error();
  // The two outputs of one graph, compared as two single-output graphs.
  double worst = 0;
  for (int t = 0; t < trials; ++t) {
    Expected<double> err = [&]() -> Expected<double> {
      std::map<std::string, ref::Tensor<double>> feeds = random_feeds(*g, rng);
      Expected<std::vector<ref::Tensor<double>>> out = ref::evaluate<double>(*g, feeds);
      if (!out) return out.error();
      return relative_error((*out)[0], (*out)[1]);
    }();
    if (!err) return err.error();
    worst = std::max(worst, *err);
  }
  return worst;
}

}  // namespace

std::vector<AxiomTestResult> check_axioms(const std::vector<specs::Axiom>& axioms,
                                          const specs::OpFunctions& fns,
                                          const AxiomCheckOptions& options) {
  std::vector<AxiomTestResult> results;
  std::mt19937_64 rng(options.seed);
  for (const specs::Axiom& ax : axioms) {
    for (const specs::AxiomTest& test : ax.tests) {
      AxiomTestResult r;
      r.axiom = ax.name;
      r.where = ax.file + ":" + std::to_string(test.line);
      Expected<double> err = run_test(ax, test, fns, rng, options.trials);
      if (!err) {
        r.message = err.error().message;
      } else {
        r.error = *err;
        r.passed = *err <= kDoubleTolerance;
        if (!r.passed) r.message = "the sides differ: relative error " + std::to_string(*err);
      }
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace tso::verifier
