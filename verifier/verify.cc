#include "verifier/verify.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "verifier/instances.h"
#include "verifier/numeric.h"
#include "verifier/translate.h"

namespace tso::verifier {

namespace {

// "dim(x,0)=2 ?k=[1,1] x=T!val!0 ...; out0: source T!val!3, target T!val!4".
std::string describe_model(const z3::model& m, const Translation& t) {
  std::string s;
  for (const auto& [name, c] : t.symbols) {
    z3::expr v = m.eval(c, true);
    if (!s.empty()) s += ' ';
    s += name + "=" + v.to_string();
  }
  for (size_t i = 0; i < t.source.size(); ++i) {
    z3::expr a = m.eval(t.source[i], true), b = m.eval(t.target[i], true);
    if (z3::eq(a, b)) continue;
    s += "; out" + std::to_string(i) + ": source " + a.to_string() + ", target " + b.to_string();
  }
  return s;
}

// The two sides in double on seeded random inputs, at the example types and
// then at up to kShapes perturbed ones where the rule applies: a difference
// far beyond rounding shows the rule false (often a rule found on equal
// extents that fails on unequal ones).
std::optional<std::string> numeric_counterexample(const Rule& rule) {
  constexpr uint64_t kSeed = 1;
  constexpr int kShapes = 16, kAttempts = 256;
  constexpr double kEvidence = 1e-6;
  std::mt19937_64 rng(kSeed);
  auto differ = [&](const Graph& a, const Graph& b, const std::string& where) {
    Expected<double> err = compare_graphs(a, b, rng);
    if (!err || *err <= kEvidence) return std::optional<std::string>();
    char buf[96];
    std::snprintf(buf, sizeof buf, "relative error %.3g on uniform [-1,1] inputs, seed %llu", *err,
                  static_cast<unsigned long long>(kSeed));
    return std::optional<std::string>("the sides differ " + where + ": " + buf);
  };
  Expected<Graph> a = instantiate(rule, RuleSideKind::kSource);
  Expected<Graph> b = instantiate(rule, RuleSideKind::kTarget);
  if (!a || !b) return std::nullopt;
  if (std::optional<std::string> d = differ(*a, *b, "at the example types")) return d;
  for (const Instance& inst : perturbed_instances(rule, kShapes, kAttempts, rng))
    if (std::optional<std::string> d = differ(inst.source, inst.target, "at" + inst.shapes))
      return d;
  return std::nullopt;
}

// A Z3 context with the specs' functions and axioms, and a solver holding
// the axioms: each rule's assertions live in a push/pop scope, so the axioms
// are internalized once per prover.
struct Prover {
  z3::context ctx;
  specs::OpFunctions fns{ctx};
  std::optional<z3::solver> solver;
};

Expected<std::unique_ptr<Prover>> make_prover(const specs::SpecSource& specs,
                                              unsigned timeout_ms) {
  auto p = std::make_unique<Prover>();
  Expected<std::vector<specs::Axiom>> axioms = specs::parse_axioms(specs, p->fns);
  if (!axioms) return axioms.error();
  z3::solver& s = p->solver.emplace(p->ctx);
  z3::params params(p->ctx);
  params.set("timeout", timeout_ms);
  // E-matching on the axioms' patterns only: model-based instantiation rarely
  // finds a countermodel over these axioms and spends the whole timeout trying.
  params.set("mbqi", false);
  // No SIGINT handler of Z3's around each check: with several threads
  // checking at once each restores the handler it found, so Z3's can outlive
  // the checks and a later Ctrl-C crashes in it instead of reaching tso's
  // (cli/interrupt.h), which removes the temporaries of the files being
  // written.
  params.set("ctrl_c", false);
  s.set(params);
  // Incremental mode (a scope before the first check): the one-shot pipeline
  // preprocesses the quantifiers into a form on which E-matching is orders of
  // magnitude slower here.
  s.push();
  for (const specs::Axiom& a : *axioms) s.add(a.formula);
  return p;
}

RuleStatus check(const Rule& rule, const std::map<std::string, int64_t>& pins, z3::solver& s,
                 const specs::OpFunctions& fns, const std::string& hash, unsigned timeout_ms) {
  Expected<Translation> t = translate_rule(rule, fns, pins);
  if (!t) return {RuleStatus::Kind::kUnknown, t.error().message};
  z3::context& ctx = fns.ctx();
  struct Scope {
    z3::solver& s;
    explicit Scope(z3::solver& solver) : s(solver) { s.push(); }
    ~Scope() { s.pop(); }
  } scope(s);
  for (const z3::expr& h : t->hypotheses) s.add(h);
  z3::expr_vector differ(ctx);
  for (size_t i = 0; i < t->source.size(); ++i) differ.push_back(t->source[i] != t->target[i]);
  s.add(z3::mk_or(differ));
  switch (s.check()) {
    case z3::unsat:
      return {RuleStatus::Kind::kVerified, hash};
    case z3::sat:
      return {RuleStatus::Kind::kRefuted, describe_model(s.get_model(), *t)};
    default: {
      std::string why = s.reason_unknown();
      if (why == "canceled" || why.find("timeout") != std::string::npos)
        why = "timeout after " + std::to_string(timeout_ms) + " ms";
      else if (why.find("incomplete") != std::string::npos)
        why = "not implied by the axioms (instantiation saturated)";
      if (std::optional<std::string> c = numeric_counterexample(rule))
        return {RuleStatus::Kind::kRefuted, *c + "; z3: " + why};
      return {RuleStatus::Kind::kUnknown, why};
    }
  }
}

// check(), with an exception of Z3's (it gives up on a term it cannot
// hold, e.g. "Overflow encountered when expanding vector") as unknown: the
// rule is undecided, the run goes on, and the numeric check still looks for
// a counterexample.
RuleStatus prove_one(const Rule& rule, const std::map<std::string, int64_t>& pins,
                     z3::solver& s, const specs::OpFunctions& fns, const std::string& hash,
                     unsigned timeout_ms) {
  try {
    return check(rule, pins, s, fns, hash, timeout_ms);
  } catch (const z3::exception& e) {
    const std::string why = std::string("z3 gave up: ") + e.msg();
    if (std::optional<std::string> c = numeric_counterexample(rule))
      return {RuleStatus::Kind::kRefuted, *c + "; " + why};
    return {RuleStatus::Kind::kUnknown, why};
  }
}

// A lifted rule is proved instance by instance (instances.h): refuted by the
// first instance refuted, naming it; verified when every instance is. Z3
// stops at the first instance it cannot decide: a copy of 32 instances
// that each time out would hold a job for 32 timeouts, to end unknown
// anyway. The numeric check then goes over every instance for a
// counterexample, so a copy false at a later instance is still refuted.
RuleStatus prove(const Rule& rule, z3::solver& s, const specs::OpFunctions& fns,
                 const std::string& hash, unsigned timeout_ms) {
  std::vector<RuleInstance> instances = rule_instances(rule);
  if (instances.size() == 1 && instances[0].label.empty())
    return prove_one(rule, {}, s, fns, hash, timeout_ms);
  for (const RuleInstance& inst : instances) {
    RuleStatus st = prove_one(inst.rule, inst.pins, s, fns, hash, timeout_ms);
    if (st.kind == RuleStatus::Kind::kVerified) continue;
    st.detail = "at " + inst.label + ": " + st.detail;
    if (st.kind == RuleStatus::Kind::kUnknown)
      if (std::optional<std::string> c = numeric_counterexample(rule))
        return {RuleStatus::Kind::kRefuted, *c + "; z3 " + st.detail};
    return st;
  }
  return {RuleStatus::Kind::kVerified, hash};
}

// A rule stated for every value of a parameter or at every rank of a
// clause.
bool is_lifted(const Rule& r) { return !r.params.empty() || !r.ranks.vars.empty(); }

// The index of each rule's original, the rule `X` of a lifted copy
// `X_lifted` (generator/lift.h) in the same list, or -1.
std::vector<int> originals_of(const std::vector<Rule>& rules) {
  std::unordered_map<std::string_view, int> index;
  for (size_t i = 0; i < rules.size(); ++i) index.emplace(rules[i].name, static_cast<int>(i));
  std::vector<int> original(rules.size(), -1);
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string_view name = rules[i].name;
    if (!name.ends_with(kLiftedSuffix)) continue;
    auto it = index.find(name.substr(0, name.size() - kLiftedSuffix.size()));
    if (it != index.end()) original[i] = it->second;
  }
  return original;
}

// A copy's status from its original's, which is one of its instances (the
// copy at its parameters' and ranks' examples): a refuted original refutes
// the copy; an unknown one leaves it unknown, as Z3 would stop at that
// instance (a copy of a timed-out original would cost one more timeout);
// nullopt when the original is verified and the copy must be proved.
std::optional<RuleStatus> from_original(const Rule& original, const RuleOutcome& o) {
  switch (o.status.kind) {
    case RuleStatus::Kind::kRefuted:
    case RuleStatus::Kind::kUnknown:
      return RuleStatus{o.status.kind, "at its original " + original.name + ": " + o.status.detail};
    default:
      return std::nullopt;
  }
}

}  // namespace

Expected<std::vector<RuleOutcome>> verify_rules(
    const std::vector<Rule>& rules, const specs::SpecSource& specs, const VerifyOptions& options,
    const std::function<void(const VerifyProgress&)>& progress) {
  {
    z3::context ctx;
    specs::OpFunctions fns(ctx);
    Expected<std::vector<specs::Axiom>> axioms = specs::parse_axioms(specs, fns);
    if (!axioms) return axioms.error();
    std::set<std::string> specified = specs::specified_functions(*axioms);
    for (const Rule& r : rules) {
      if (r.status.kind == RuleStatus::Kind::kPartial || r.status.kind == RuleStatus::Kind::kExact)
        continue;
      std::vector<std::string> missing = unspecified_operators(r, fns, specified);
      if (missing.empty()) continue;
      std::string list;
      for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
      return Error{"rule " + r.name + ": no specification for " + list};
    }
  }
  std::vector<RuleOutcome> outcomes(rules.size());
  std::vector<int> original = originals_of(rules);
  std::mutex mu;
  VerifyProgress prog;
  prog.total = static_cast<int>(rules.size());
  std::string error;
  // Decides the rules of `todo` on `jobs` threads, one z3::context each.
  auto run = [&](const std::vector<size_t>& todo) {
    std::atomic<size_t> next{0};
    auto worker = [&] {
      auto fail = [&](const Error& e) {
        std::lock_guard<std::mutex> lock(mu);
        error = e.message;
      };
      Expected<std::unique_ptr<Prover>> shared = make_prover(specs, options.timeout_ms);
      if (!shared) return fail(shared.error());
      for (size_t k; (k = next++) < todo.size();) {
        const size_t i = todo[k];
        RuleOutcome o;
        auto start = std::chrono::steady_clock::now();
        if (rules[i].status.kind == RuleStatus::Kind::kPartial ||
            rules[i].status.kind == RuleStatus::Kind::kExact) {
          o.status = rules[i].status;
        } else if (std::optional<RuleStatus> st =
                       original[i] < 0 ? std::nullopt
                                       : from_original(rules[original[i]], outcomes[original[i]])) {
          o.status = *st;
        } else if (is_lifted(rules[i])) {
          // A context of its own: what earlier rules left in a shared
          // context or solver decided some of these longer proofs, which a
          // check of the rule alone then could not repeat (README).
          Expected<std::unique_ptr<Prover>> own = make_prover(specs, options.timeout_ms);
          if (!own) return fail(own.error());
          Prover& p = **own;
          o.status = prove(rules[i], *p.solver, p.fns, specs.hash, options.timeout_ms);
        } else {
          Prover& p = **shared;
          o.status = prove(rules[i], *p.solver, p.fns, specs.hash, options.timeout_ms);
        }
        o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count();
        std::lock_guard<std::mutex> lock(mu);
        outcomes[i] = o;
        ++prog.done;
        prog.verified += o.status.kind == RuleStatus::Kind::kVerified;
        prog.refuted += o.status.kind == RuleStatus::Kind::kRefuted;
        prog.unknown += o.status.kind == RuleStatus::Kind::kUnknown;
        if (progress) progress(prog);
      }
    };
    int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(todo.size())));
    std::vector<std::thread> threads;
    for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
  };
  // Lifted copies whose original is in the file go second, when the
  // original's outcome is known.
  std::vector<size_t> passes[2];
  for (size_t i = 0; i < rules.size(); ++i) passes[original[i] >= 0].push_back(i);
  for (const std::vector<size_t>& todo : passes) {
    if (!todo.empty()) run(todo);
    if (!error.empty()) return Error{error};
  }
  return outcomes;
}

std::string z3_version() {
  unsigned major = 0, minor = 0, build = 0, revision = 0;
  Z3_get_version(&major, &minor, &build, &revision);
  return "Z3 " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(build);
}

}  // namespace tso::verifier
