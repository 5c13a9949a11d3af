// Rules implied by smaller rules: the graphs a few rewrites with them reach
// from each side meet. Graphs are compared by the structural hashes of their
// outputs; every graph on the way is shape-valid.
#include <algorithm>
#include <functional>
#include <span>
#include <unordered_set>

#include "generator/candidates.h"

namespace tso::gen {

namespace {

struct Side {
  const Program* p;
  const std::vector<int>* out;
};

// A graph on the way: a program and its outputs, matched to the candidate's.
struct State {
  Program p;
  std::vector<int> out;
};

// Matches of one rule side (the pattern) in a graph, and the graph each
// match rewrites into with the other side (the replacement).
class Rewriter {
 public:
  Rewriter(const OpSet& set, const State& g, Side pat, Side rep)
      : set_(set), g_(g), pat_(pat), rep_(rep) {
    nv_ = static_cast<int>(set.vars.size());
    // Tensor -> producing operator of g.
    prod_.assign(nv_, -1);
    for (size_t i = 0; i < g.p.ops.size(); ++i) {
      first_out_.push_back(static_cast<int>(prod_.size()));
      for (int o = 0; o < outputs_of(set.ops[g.p.ops[i].tmpl]); ++o)
        prod_.push_back(static_cast<int>(i));
    }
    int n = nv_;
    for (const ProgOp& op : pat.p->ops) {
      pat_first_out_.push_back(n);
      n += outputs_of(set.ops[op.tmpl]);
    }
  }

  // Calls `done` for every complete match; stops when it returns true.
  bool search(const std::function<bool()>& done) {
    assign_.assign(pat_.p->ops.size(), -1);
    bind_.assign(nv_, -1);
    return step(0, done);
  }

  // The graph the current match rewrites g into, its dead operators dropped;
  // nullopt when the match may not be replaced (a variable as a pattern
  // output, an internal tensor read outside it) or the result has a cycle.
  std::optional<State> rewritten() const {
    const int ng = static_cast<int>(prod_.size());
    std::vector<int> replaced(ng, -1);
    std::vector<bool> matched(g_.p.ops.size());
    for (int k : assign_) matched[k] = true;
    for (size_t i = 0; i < pat_.out->size(); ++i) {
      int pt = (*pat_.out)[i];
      if (pt < nv_) return std::nullopt;
      replaced[image(pt)] = static_cast<int>(i);
    }
    auto internal = [&](int t) { return prod_[t] >= 0 && matched[prod_[t]] && replaced[t] < 0; };
    for (size_t i = 0; i < g_.p.ops.size(); ++i) {
      if (matched[i]) continue;
      for (int j = 0; j < arity(g_.p.ops[i]); ++j)
        if (internal(g_.p.ops[i].args[j])) return std::nullopt;
    }
    for (int t : g_.out)
      if (internal(t)) return std::nullopt;
    for (int v : bind_)
      if (v >= 0 && prod_[v] >= 0 && matched[prod_[v]]) return std::nullopt;

    // References: g's tensors are 0..ng-1, the replacement's ng + r. A
    // reference resolves to the tensor that computes it after the rewrite.
    const Program& rp = *rep_.p;
    std::vector<int> rep_first_out, rep_prod(nv_, -1);
    for (size_t j = 0; j < rp.ops.size(); ++j) {
      rep_first_out.push_back(static_cast<int>(rep_prod.size()));
      for (int o = 0; o < outputs_of(set_.ops[rp.ops[j].tmpl]); ++o)
        rep_prod.push_back(static_cast<int>(j));
    }
    auto resolve = [&](int ref) {
      if (ref < ng && replaced[ref] >= 0) ref = ng + (*rep_.out)[replaced[ref]];
      if (ref >= ng && ref - ng < nv_) ref = bind_[ref - ng];
      return ref;  // -1: an unbound variable of the replacement
    };
    // Operators: g's i, the replacement's g.ops + j; emitted depth first
    // from the outputs, so dead ones are dropped.
    const int gops = static_cast<int>(g_.p.ops.size());
    std::vector<uint8_t> state(gops + rp.ops.size(), 0);
    std::vector<int> index(ng + rep_prod.size(), -1);
    for (int v = 0; v < nv_; ++v) index[v] = v;
    State out;
    int next = nv_;
    std::function<bool(int)> emit = [&](int ref) {
      if (ref < 0) return false;
      if (index[ref] >= 0) return true;
      const bool in_g = ref < ng;
      const int op = in_g ? prod_[ref] : gops + rep_prod[ref - ng];
      if (state[op] == 1) return false;
      state[op] = 1;
      const ProgOp& po = in_g ? g_.p.ops[op] : rp.ops[op - gops];
      ProgOp copy = po;
      for (int j = 0; j < arity(po); ++j) {
        int a = resolve(in_g ? po.args[j] : ng + po.args[j]);
        if (!emit(a)) return false;
        copy.args[j] = static_cast<uint8_t>(index[a]);
      }
      const int first = in_g ? first_out_[op] : ng + rep_first_out[op - gops];
      for (int o = 0; o < outputs_of(set_.ops[po.tmpl]); ++o) index[first + o] = next++;
      out.p.ops.push_back(copy);
      state[op] = 2;
      return true;
    };
    for (int t : g_.out) {
      int r = resolve(t);
      if (!emit(r)) return std::nullopt;
      out.out.push_back(index[r]);
    }
    return out;
  }

 private:
  int image(int pt) const {
    if (pt < nv_) return bind_[pt];
    int op = 0;
    while (op + 1 < static_cast<int>(pat_first_out_.size()) && pat_first_out_[op + 1] <= pt) ++op;
    return first_out_[assign_[op]] + (pt - pat_first_out_[op]);
  }

  bool step(size_t k, const std::function<bool()>& done) {
    if (k == pat_.p->ops.size()) return done();
    const ProgOp& po = pat_.p->ops[k];
    const OpTemplate& t = set_.ops[po.tmpl];
    for (size_t i = 0; i < g_.p.ops.size(); ++i) {
      if (g_.p.ops[i].tmpl != po.tmpl ||
          std::find(assign_.begin(), assign_.end(), static_cast<int>(i)) != assign_.end())
        continue;
      const int orders = commutative(t) ? 2 : 1;
      for (int ord = 0; ord < orders; ++ord) {
        std::vector<int> saved = bind_;
        bool ok = true;
        for (int j = 0; j < t.arity && ok; ++j) {
          int pa = po.args[j], ga = g_.p.ops[i].args[ord ? 1 - j : j];
          if (pa < nv_) {
            if (bind_[pa] < 0) bind_[pa] = ga;
            ok = bind_[pa] == ga;
          } else {
            assign_[k] = -1;
            ok = image(pa) == ga;
          }
        }
        assign_[k] = static_cast<int>(i);
        if (ok && step(k + 1, done)) return true;
        assign_[k] = -1;
        bind_ = saved;
      }
    }
    return false;
  }

  int arity(const ProgOp& op) const { return set_.ops[op.tmpl].arity; }

  const OpSet& set_;
  const State& g_;
  Side pat_, rep_;
  int nv_ = 0;
  std::vector<int> prod_, first_out_, pat_first_out_;
  std::vector<int> assign_, bind_;
};

uint64_t combined(const std::vector<uint64_t>& hashes) {
  uint64_t h = 0x51de5ull;
  for (uint64_t x : hashes) h = hash_mix(h, x);
  return h;
}

uint64_t state_hash(const OpSet& set, const State& g) {
  std::vector<uint64_t> vh;
  for (size_t v = 0; v < set.vars.size(); ++v) vh.push_back(var_hash(static_cast<int>(v)));
  std::vector<uint64_t> all = tensor_hashes(set, g.p, vh);
  std::vector<uint64_t> h;
  for (int t : g.out) h.push_back(all[t]);
  return combined(h);
}

// Whether every operator of the program applies to its arguments' kinds.
bool valid(KindTable& table, const Program& p) {
  const OpSet& set = table.set();
  std::vector<int> kind;
  for (size_t v = 0; v < set.vars.size(); ++v) kind.push_back(table.var_kind(static_cast<int>(v)));
  for (const ProgOp& op : p.ops) {
    const int n = set.ops[op.tmpl].arity;
    std::array<int, kMaxArgs> k{};
    for (int j = 0; j < n; ++j) k[j] = kind[op.args[j]];
    const Applied* app = table.apply(op.tmpl, std::span(k.data(), n));
    if (!app) return false;
    kind.insert(kind.end(), app->out_kinds.begin(), app->out_kinds.end());
  }
  return true;
}

// Whether a pattern with template bits p can match a graph with bits g.
bool may_match(const TemplateBits& g, const TemplateBits& p) {
  return p.n > 0 && p.n <= g.n && (p.once & ~g.once) == 0 && (p.twice & ~g.twice) == 0;
}

// Calls `found` with every valid graph that one rewrite of g with a rule of
// at most `max_size` operators (either direction) gives, and its hash; stops
// when `found` returns true.
bool for_each_rewrite(KindTable& table, const State& g, std::span<const Candidate* const> rules,
                      std::span<const Masks* const> masks, int max_size,
                      const std::function<bool(State&&, uint64_t)>& found) {
  const OpSet& set = table.set();
  const TemplateBits bits = bits_of(g.p);
  auto one = [&](Side pat, Side rep) {
    Rewriter rw(set, g, pat, rep);
    return rw.search([&] {
      std::optional<State> next = rw.rewritten();
      if (!next || !valid(table, next->p)) return false;
      uint64_t h = state_hash(set, *next);
      return found(std::move(*next), h);
    });
  };
  for (size_t r = 0; r < rules.size(); ++r) {
    const Candidate& rule = *rules[r];
    const Masks& m = *masks[r];
    if (rule.size() > max_size) continue;
    if (may_match(bits, m.a) &&
        one({&rule.a, &rule.a_out}, {&rule.b, &rule.b_out}))
      return true;
    if (may_match(bits, m.b) &&
        one({&rule.b, &rule.b_out}, {&rule.a, &rule.a_out}))
      return true;
  }
  return false;
}

// How far the search from each side goes: the first level uses every
// smaller rule, later ones only rules of at most kSmallRule operators; each
// level keeps at most kFrontier new graphs.
constexpr int kLevels = 2;
constexpr int kSmallRule = 4;
constexpr size_t kFrontier = 64;

}  // namespace

bool implied(KindTable& table, const Candidate& c, std::span<const Candidate* const> rules,
             std::span<const Masks* const> masks) {
  const OpSet& set = table.set();
  std::vector<State> front[2] = {{State{c.a, c.a_out}}, {State{c.b, c.b_out}}};
  std::unordered_set<uint64_t> seen[2] = {{state_hash(set, front[0][0])},
                                          {state_hash(set, front[1][0])}};
  for (int level = 0; level < kLevels; ++level) {
    const int max_size = level == 0 ? c.size() : kSmallRule;
    for (int side = 0; side < 2; ++side) {
      std::vector<State> next;
      for (const State& g : front[side]) {
        bool met = for_each_rewrite(table, g, rules, masks, max_size, [&](State&& s, uint64_t h) {
          if (seen[1 - side].count(h)) return true;
          if (seen[side].insert(h).second && next.size() < kFrontier) next.push_back(std::move(s));
          return false;
        });
        if (met) return true;
      }
      front[side] = std::move(next);
    }
  }
  return false;
}

TemplateBits bits_of(const Program& p) {
  TemplateBits b;
  for (const ProgOp& op : p.ops) {
    const uint64_t bit = op.tmpl < 64 ? uint64_t{1} << op.tmpl : ~uint64_t{0};
    b.twice |= b.once & bit;
    b.once |= bit;
  }
  b.n = static_cast<int>(p.ops.size());
  return b;
}

Masks masks_of(const Candidate& c) { return {bits_of(c.a), bits_of(c.b)}; }

}  // namespace tso::gen
