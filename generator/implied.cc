// Rules implied by smaller rules: one rewrite of one side gives the other,
// or one rewrite of each side gives the same graph (a -> x <- b). Compared structurally: the combined
// structural hashes of the rewritten outputs.
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

class Rewriter {
 public:
  Rewriter(const OpSet& set, const Program& g, Side pat, Side rep)
      : set_(set), g_(g), pat_(pat), rep_(rep) {
    nv_ = static_cast<int>(set.vars.size());
    // Tensor -> producing operator of g.
    prod_.assign(nv_, -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      first_out_.push_back(static_cast<int>(prod_.size()));
      for (int o = 0; o < outputs_of(set.ops[g.ops[i].tmpl]); ++o)
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

  // The rewritten graph's hashes of tensors `outs` of g (nullopt on a cycle
  // or an ill-formed match).
  std::optional<std::vector<uint64_t>> rewritten(const std::vector<int>& outs) {
    // Tensors of g that the match replaces, and those it consumes.
    std::vector<int> replaced(prod_.size(), -1);
    std::vector<bool> matched(g_.ops.size());
    for (int k : assign_) matched[k] = true;
    for (size_t i = 0; i < pat_.out->size(); ++i) {
      int pt = (*pat_.out)[i];
      if (pt < nv_) return std::nullopt;  // a pattern whose output is a variable
      replaced[image(pt)] = static_cast<int>(i);
    }
    // Internal tensors of the match may not be read outside it or be outputs.
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (matched[i]) continue;
      const OpTemplate& t = set_.ops[g_.ops[i].tmpl];
      for (int j = 0; j < t.arity; ++j) {
        int a = g_.ops[i].args[j];
        if (prod_[a] >= 0 && matched[prod_[a]] && replaced[a] < 0) return std::nullopt;
      }
    }
    for (int t : outs)
      if (prod_[t] >= 0 && matched[prod_[t]] && replaced[t] < 0) return std::nullopt;
    for (int v : bind_)
      if (v >= 0 && prod_[v] >= 0 && matched[prod_[v]]) return std::nullopt;

    memo_.assign(prod_.size(), 0);
    state_.assign(prod_.size(), 0);
    replaced_ = &replaced;
    std::vector<uint64_t> h;
    for (int t : outs) {
      std::optional<uint64_t> x = hash(t);
      if (!x) return std::nullopt;
      h.push_back(*x);
    }
    return h;
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
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (g_.ops[i].tmpl != po.tmpl ||
          std::find(assign_.begin(), assign_.end(), static_cast<int>(i)) != assign_.end())
        continue;
      const int orders = commutative(t) ? 2 : 1;
      for (int ord = 0; ord < orders; ++ord) {
        std::vector<int> saved = bind_;
        bool ok = true;
        for (int j = 0; j < t.arity && ok; ++j) {
          int pa = po.args[j], ga = g_.ops[i].args[ord ? 1 - j : j];
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

  // Structural hash of tensor t of g after the rewrite.
  std::optional<uint64_t> hash(int t) {
    if (state_[t] == 2) return memo_[t];
    if (state_[t] == 1) return std::nullopt;  // a cycle through the replacement
    state_[t] = 1;
    std::optional<uint64_t> r;
    if ((*replaced_)[t] >= 0) {
      r = rep_hash((*rep_.out)[(*replaced_)[t]]);
    } else if (t < nv_) {
      r = var_hash(t);
    } else {
      const ProgOp& op = g_.ops[prod_[t]];
      const OpTemplate& tm = set_.ops[op.tmpl];
      std::array<uint64_t, 2> a{};
      for (int j = 0; j < tm.arity; ++j) {
        std::optional<uint64_t> x = hash(op.args[j]);
        if (!x) return std::nullopt;
        a[j] = *x;
      }
      r = output_hash(op_hash(op.tmpl, commutative(tm), std::span(a.data(), tm.arity)),
                      t - first_out_[prod_[t]]);
    }
    if (!r) return std::nullopt;
    state_[t] = 2;
    memo_[t] = *r;
    return r;
  }

  // Hash of tensor rt of the replacement side, its variables bound into g.
  std::optional<uint64_t> rep_hash(int rt) {
    std::vector<uint64_t> vh(nv_, 0);
    for (int v = 0; v < nv_; ++v) {
      if (bind_[v] < 0) continue;
      std::optional<uint64_t> x = hash(bind_[v]);
      if (!x) return std::nullopt;
      vh[v] = *x;
    }
    const Program& rp = *rep_.p;
    for (const ProgOp& op : rp.ops)
      for (int j = 0; j < set_.ops[op.tmpl].arity; ++j)
        if (op.args[j] < nv_ && bind_[op.args[j]] < 0) return std::nullopt;  // unbound
    if (rt < nv_ && bind_[rt] < 0) return std::nullopt;
    return tensor_hashes(set_, rp, vh)[rt];
  }

  const OpSet& set_;
  const Program& g_;
  Side pat_, rep_;
  int nv_ = 0;
  std::vector<int> prod_, first_out_, pat_first_out_;
  std::vector<int> assign_, bind_;
  std::vector<uint64_t> memo_;
  std::vector<int> state_;
  const std::vector<int>* replaced_ = nullptr;
};

uint64_t combined(const std::vector<uint64_t>& hashes) {
  uint64_t h = 0x51de5ull;
  for (uint64_t x : hashes) h = hash_mix(h, x);
  return h;
}

// Calls `found` with the combined output hashes of every graph that one
// rewrite of `g` (outputs `outs`) with `pat` -> `rep` gives; stops when it
// returns true.
bool rewrites(const OpSet& set, const Program& g, const std::vector<int>& outs, Side pat, Side rep,
              const std::function<bool(uint64_t)>& found) {
  if (pat.p->ops.empty() || pat.p->ops.size() > g.ops.size()) return false;
  Rewriter rw(set, g, pat, rep);
  return rw.search([&] {
    std::optional<std::vector<uint64_t>> got = rw.rewritten(outs);
    return got && found(combined(*got));
  });
}

// Whether the pattern side (p, p2, np) can match a side (s, s2, ns) on
// templates alone.
bool may_match(uint64_t s, uint64_t s2, int ns, uint64_t p, uint64_t p2, int np) {
  return np <= ns && (p & ~s) == 0 && (p2 & ~s2) == 0;
}

uint64_t side_hash(const OpSet& set, const Program& p, const std::vector<int>& outs) {
  std::vector<uint64_t> vh;
  for (size_t v = 0; v < set.vars.size(); ++v) vh.push_back(var_hash(static_cast<int>(v)));
  std::vector<uint64_t> all = tensor_hashes(set, p, vh);
  std::vector<uint64_t> h;
  for (int t : outs) h.push_back(all[t]);
  return combined(h);
}

}  // namespace

bool implied(const OpSet& set, const Candidate& c, const Masks& cm,
             std::span<const Candidate* const> rules, std::span<const Masks* const> masks) {
  const uint64_t ha = side_hash(set, c.a, c.a_out), hb = side_hash(set, c.b, c.b_out);
  // One rewrite of either side, with either direction of each rule.
  auto neighbours = [&](const Program& g, const std::vector<int>& outs, uint64_t s, uint64_t s2,
                        int ns, const std::function<bool(uint64_t)>& found) {
    for (size_t r = 0; r < rules.size(); ++r) {
      const Candidate& rule = *rules[r];
      const Masks& m = *masks[r];
      if (may_match(s, s2, ns, m.a, m.a2, m.na) &&
          rewrites(set, g, outs, {&rule.a, &rule.a_out}, {&rule.b, &rule.b_out}, found))
        return true;
      if (may_match(s, s2, ns, m.b, m.b2, m.nb) &&
          rewrites(set, g, outs, {&rule.b, &rule.b_out}, {&rule.a, &rule.a_out}, found))
        return true;
    }
    return false;
  };
  std::unordered_set<uint64_t> from_a;
  if (neighbours(c.a, c.a_out, cm.a, cm.a2, cm.na, [&](uint64_t h) {
        from_a.insert(h);
        return h == hb;
      }))
    return true;
  return neighbours(c.b, c.b_out, cm.b, cm.b2, cm.nb,
                    [&](uint64_t h) { return h == ha || from_a.count(h) > 0; });
}

Masks masks_of(const Candidate& c) {
  Masks m;
  auto side = [](const Program& p, uint64_t* once, uint64_t* twice) {
    for (const ProgOp& op : p.ops) {
      const uint64_t bit = op.tmpl < 64 ? uint64_t{1} << op.tmpl : ~uint64_t{0};
      *twice |= *once & bit;
      *once |= bit;
    }
  };
  side(c.a, &m.a, &m.a2);
  side(c.b, &m.b, &m.b2);
  m.na = static_cast<int>(c.a.ops.size());
  m.nb = static_cast<int>(c.b.ops.size());
  return m;
}

}  // namespace tso::gen
