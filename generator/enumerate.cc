// The depth-first enumeration (see enumerate.h).
#include "generator/enumerate.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "generator/values.h"

namespace tso::gen {

namespace {

// Values by structural hash: the same expression recurs in many graphs (next
// to different independent operators), and is evaluated once per thread.
// Direct-mapped: a lookup is one memory access; a collision evicts.
class ValueCache {
 public:
  static constexpr size_t kSize = 1 << 15;
  ValueCache() : entries_(kSize) {}
  const std::vector<ValuePtr>* find(uint64_t h) const {
    const Entry& e = entries_[h & (kSize - 1)];
    return e.hash == h && !e.values.empty() ? &e.values : nullptr;
  }
  const std::vector<ValuePtr>* put(uint64_t h, std::vector<ValuePtr> v) {
    Entry& e = entries_[h & (kSize - 1)];
    e.hash = h;
    e.values = std::move(v);
    return &e.values;
  }

 private:
  struct Entry {
    uint64_t hash = 0;
    std::vector<ValuePtr> values;
  };
  std::vector<Entry> entries_;
};

struct ThreadState {
  explicit ThreadState(const OpSet& set) : table(set) {}
  KindTable table;
  ValueCache cache;
  std::vector<Record> records;
  std::array<uint64_t, kMaxOps + 1> graphs{};
  uint64_t repeated = 0;
  std::array<uint64_t, kMaxOps + 1> flushed{};  // graphs already added to the progress counters
  uint64_t not_first_use = 0;
};

// Interchangeable variables are used in first-use order: within each
// renaming class, the variables a graph reads are the class's first ones.
// A graph's position in its class and a bit per class track this.
class FirstUse {
 public:
  explicit FirstUse(const OpSet& set) {
    std::vector<int> next;
    for (const GenVar& v : set.vars) {
      if (v.renaming_class >= static_cast<int>(next.size())) next.resize(v.renaming_class + 1, 0);
      cls_.push_back(v.renaming_class);
      bit_.push_back(uint32_t{1} << next[v.renaming_class]++);
    }
    masks_.assign(next.size(), 0);
  }
  void use(int var) { masks_[cls_[var]] |= bit_[var]; }
  void unuse(int var) { masks_[cls_[var]] &= ~bit_[var]; }
  // Unused variables of var's class before it.
  int unused_before(int var) const { return std::popcount(~masks_[cls_[var]] & (bit_[var] - 1)); }
  // Variables a graph would still have to read for its used variables to be
  // the first ones of their classes.
  int gaps() const {
    int n = 0;
    for (uint32_t m : masks_) n += std::bit_width(m) - std::popcount(m);
    return n;
  }

 private:
  std::vector<int> cls_;
  std::vector<uint32_t> bit_;
  std::vector<uint32_t> masks_;
};

struct Slot {
  int kind;
  ValuePtr value;
  uint64_t shash;
  int producer;
  int uses;
  bool constant;  // computed from constant operators only
};

using Args = std::array<uint8_t, kMaxArgs>;

struct Branch {
  uint8_t tmpl;
  Args args;
};

void hand_over(const EnumerateOptions& opt, std::vector<Record>& records) {
  std::sort(records.begin(), records.end());
  opt.sink(records);
  TSO_CHECK(records.empty(), "a record sink must take every record");
}

class Dfs {
  // Per depth: the argument slots grouped by kind (start[i]..start[i+1]).
  struct Groups {
    std::vector<int> kinds, start;
    std::vector<uint8_t> slots;
  };

 public:
  Dfs(const OpSet& set, ThreadState& ts, const std::vector<ValuePtr>& inputs,
      const EnumerateOptions& opt, EnumProgress* progress)
      : set_(set), ts_(ts), opt_(opt), progress_(progress), first_use_(set) {
    num_vars_ = static_cast<int>(inputs.size());
    if (opt.sink) ts.records.reserve(opt.sink_records);
    max_arity_ = std::max(max_arity(set), 2);
    for (size_t v = 0; v < inputs.size(); ++v) {
      slots_.push_back({ts.table.var_kind(static_cast<int>(v)), inputs[v],
                        var_hash(static_cast<int>(v)), -1, 0, false});
      key_ += inputs[v]->hash;
    }
  }

  // Calls f(tmpl, args, applied) for every application the enumeration
  // tries. Applicability depends on argument kinds only, so it is looked up
  // once per template and tuple of kinds over the slots grouped by kind (a
  // third kind only where the first two admit one). Variables out of
  // first-use order by more than this operator and the ones left after it
  // can fix (each reads at most max_arity) are not offered at all.
  template <class F>
  void for_each_application(F&& f) {
    const int depth = static_cast<int>(letters_.size());
    const int left = opt_.max_ops - depth - 1;
    Groups& g = groups_[depth];
    g.kinds.clear();
    g.start.clear();
    g.slots.clear();
    std::array<int, 256> group_of{};
    const int n = static_cast<int>(slots_.size());
    std::vector<int>& count = g.start;
    for (int j = 0; j < n; ++j) {
      group_of[j] = -1;
      if (j < num_vars_ && slots_[j].uses == 0 &&
          first_use_.unused_before(j) > max_arity_ - 1 + max_arity_ * left)
        continue;
      auto it = std::find(g.kinds.begin(), g.kinds.end(), slots_[j].kind);
      group_of[j] = static_cast<int>(it - g.kinds.begin());
      if (it == g.kinds.end()) {
        g.kinds.push_back(slots_[j].kind);
        count.push_back(0);
      }
      ++count[group_of[j]];
    }
    const int ng = static_cast<int>(g.kinds.size());
    int sum = 0;
    for (int& c : count) sum += std::exchange(c, sum);
    count.push_back(sum);
    g.slots.resize(sum);
    std::vector<int> fill(count.begin(), count.end() - 1);
    for (int j = 0; j < n; ++j)
      if (group_of[j] >= 0) g.slots[fill[group_of[j]]++] = static_cast<uint8_t>(j);

    for (size_t ti = 0; ti < set_.ops.size(); ++ti) {
      const OpTemplate& t = set_.ops[ti];
      const uint8_t tmpl = static_cast<uint8_t>(ti);
      if (t.arity == 0) {
        if (const Applied* app = ts_.table.apply2(tmpl, 0, 0, 0)) f(tmpl, Args{}, app);
        continue;
      }
      for (int a = 0; a < ng; ++a) {
        if (t.arity == 1) {
          const Applied* app = ts_.table.apply2(tmpl, 1, g.kinds[a], 0);
          if (app == nullptr) continue;
          for (int x = g.start[a]; x < g.start[a + 1]; ++x) f(tmpl, Args{g.slots[x], 0}, app);
          continue;
        }
        if (t.arity == 3) {
          for_each_ternary(tmpl, g, a, f);
          continue;
        }
        const bool comm = commutative(t);
        for (int b = comm ? a : 0; b < ng; ++b) {
          const Applied* app = ts_.table.apply2(tmpl, 2, g.kinds[a], g.kinds[b]);
          if (app == nullptr) continue;
          for (int x = g.start[a]; x < g.start[a + 1]; ++x)
            for (int y = comm && a == b ? x + 1 : g.start[b]; y < g.start[b + 1]; ++y) {
              uint8_t j = g.slots[x], k = g.slots[y];
              if (j == k) continue;
              // Commutative operators take their arguments in slot order
              // (their applicability is symmetric).
              if (comm && k < j) std::swap(j, k);
              f(tmpl, Args{j, k}, app);
            }
        }
      }
    }
  }

  // The 3-argument applications whose first argument has group a's kind:
  // every slot tuple of distinct slots.
  template <class F>
  void for_each_ternary(uint8_t tmpl, const Groups& g, int a, F& f) {
    const int ng = static_cast<int>(g.kinds.size());
    for (int b = 0; b < ng; ++b) {
      if (!ts_.table.admits_prefix(tmpl, g.kinds[a], g.kinds[b])) continue;
      for (int c = 0; c < ng; ++c) {
        std::array<int, 3> k{g.kinds[a], g.kinds[b], g.kinds[c]};
        const Applied* app = ts_.table.apply(tmpl, k);
        if (app == nullptr) continue;
        for (int x = g.start[a]; x < g.start[a + 1]; ++x)
          for (int y = g.start[b]; y < g.start[b + 1]; ++y)
            for (int z = g.start[c]; z < g.start[c + 1]; ++z) {
              const uint8_t i = g.slots[x], j = g.slots[y], k = g.slots[z];
              if (i != j && i != k && j != k) f(tmpl, Args{i, j, k}, app);
            }
      }
    }
  }

  std::vector<Branch> branches() {
    std::vector<Branch> out;
    for_each_application([&](uint8_t tmpl, Args args, const Applied*) {
      out.push_back({tmpl, args});
    });
    return out;
  }

  void record_empty() { record(false); }

  void run_branch(const Branch& b) { try_apply(b.tmpl, b.args, applicable(b.tmpl, b.args)); }

 private:
  const Applied* applicable(uint8_t tmpl, Args args) {
    const int arity = set_.ops[tmpl].arity;
    std::array<int, kMaxArgs> k{};
    for (int i = 0; i < arity; ++i) k[i] = slots_[args[i]].kind;
    return ts_.table.apply(tmpl, std::span(k.data(), arity));
  }

  void try_apply(uint8_t tmpl, Args args, const Applied* app) {
    const OpTemplate& t = set_.ops[tmpl];
    std::array<uint64_t, kMaxArgs> hashes{};
    int last_dep = -1;
    bool constant = true;
    for (int i = 0; i < t.arity; ++i) constant = constant && slots_[args[i]].constant;
    if (constant && t.arity > 0) return;  // folds to a constant: never part of a useful rule
    for (int i = 0; i < t.arity; ++i) {
      hashes[i] = slots_[args[i]].shash;
      last_dep = std::max(last_dep, slots_[args[i]].producer);
    }
    const uint64_t letter = op_hash(tmpl, commutative(t), std::span(hashes.data(), t.arity));
    for (size_t i = last_dep + 1; i < letters_.size(); ++i)
      if (letter <= letters_[i]) return;  // not the canonical order (or a repeated operator)

    // Each operator reads at most max_arity variables it has not read yet: a
    // graph with more gaps in first-use order than its remaining operators
    // can fill is neither recorded nor extended.
    const int left = opt_.max_ops - static_cast<int>(letters_.size()) - 1;
    for (int i = 0; i < t.arity; ++i)
      if (args[i] < num_vars_ && slots_[args[i]].uses == 0) first_use_.use(args[i]);
    const int gaps = first_use_.gaps();
    if (gaps > max_arity_ * left) {
      for (int i = 0; i < t.arity; ++i)
        if (args[i] < num_vars_ && slots_[args[i]].uses == 0) first_use_.unuse(args[i]);
      ++ts_.not_first_use;
      return;
    }

    const std::vector<ValuePtr>* outs = ts_.cache.find(letter);
    if (outs == nullptr) {
      std::array<const Value*, kMaxArgs> a{};
      for (int i = 0; i < t.arity; ++i) a[i] = slots_[args[i]].value.get();
      outs = ts_.cache.put(letter, eval_applied(*app, std::span(a.data(), t.arity), opt_.sets));
    }

    // Push.
    const uint64_t saved_key = key_;
    for (int i = 0; i < t.arity; ++i)
      if (slots_[args[i]].uses++ == 0) key_ -= slots_[args[i]].value->hash;
    bool repeated = false;
    const int first_new = static_cast<int>(slots_.size());
    // Copied into the slots before recursing: the cache entry may be evicted.
    for (size_t o = 0; o < outs->size(); ++o) {
      const ValuePtr& v = (*outs)[o];
      for (const Slot& s : slots_)
        if (same_value(*s.value, *v)) repeated = true;
      key_ += v->hash;
      slots_.push_back({app->out_kinds[o], v, output_hash(letter, static_cast<int>(o)),
                        static_cast<int>(letters_.size()), 0, constant});
    }
    letters_.push_back(letter);
    program_.ops.push_back({tmpl, args});

    if (gaps == 0)
      record(repeated);
    else
      ++ts_.not_first_use;
    if (!repeated && left > 0)
      for_each_application([&](uint8_t tm, Args a, const Applied* ap) { try_apply(tm, a, ap); });

    // Pop.
    program_.ops.pop_back();
    letters_.pop_back();
    slots_.resize(first_new);
    for (int i = 0; i < t.arity; ++i)
      if (--slots_[args[i]].uses == 0 && args[i] < num_vars_) first_use_.unuse(args[i]);
    key_ = saved_key;
  }

  void record(bool repeated) {
    ts_.records.push_back({key_, encode(set_, program_)});
    ++ts_.graphs[program_.ops.size()];
    if (repeated) ++ts_.repeated;
    if ((ts_.records.size() & 4095) == 0) flush_progress();
    if (opt_.sink && ts_.records.size() >= opt_.sink_records) hand_over(opt_, ts_.records);
  }

 public:
  void flush_progress() {
    if (progress_ == nullptr) return;
    for (int d = 0; d <= kMaxOps; ++d) {
      progress_->graphs[d].fetch_add(ts_.graphs[d] - ts_.flushed[d], std::memory_order_relaxed);
      ts_.flushed[d] = ts_.graphs[d];
    }
  }

 private:
  const OpSet& set_;
  ThreadState& ts_;
  const EnumerateOptions& opt_;
  EnumProgress* progress_;
  std::vector<Slot> slots_;
  std::vector<uint64_t> letters_;
  Program program_;
  uint64_t key_ = 0;
  int num_vars_ = 0;
  int max_arity_ = 2;
  FirstUse first_use_;
  std::array<Groups, kMaxOps + 1> groups_;
};

}  // namespace

EnumerateResult enumerate(const OpSet& set, const EnumerateOptions& opt, EnumProgress* progress) {
  TSO_CHECK(opt.max_ops >= 1 && opt.max_ops <= kMaxOps);
  TSO_CHECK(set.vars.size() + 2 * opt.max_ops < 256);
  const std::vector<ValuePtr> inputs = input_values(set, opt.sets, opt.seed);
  tbb::enumerable_thread_specific<ThreadState> states([&] { return ThreadState(set); });

  std::vector<Branch> all;
  {
    ThreadState& ts = states.local();
    Dfs root(set, ts, inputs, opt, progress);
    all = root.branches();
    if (opt.shard == 0) root.record_empty();
    root.flush_progress();
  }
  std::vector<Branch> mine;
  for (size_t b = 0; b < all.size(); ++b)
    if (static_cast<int>(b % opt.num_shards) == opt.shard) mine.push_back(all[b]);
  if (progress != nullptr) progress->branches_total = mine.size();

  tbb::parallel_for(
      size_t{0}, mine.size(),
      [&](size_t b) {
        ThreadState& ts = states.local();
        Dfs dfs(set, ts, inputs, opt, progress);
        dfs.run_branch(mine[b]);
        dfs.flush_progress();
        if (progress != nullptr) ++progress->branches_done;
      },
      tbb::simple_partitioner());

  EnumerateResult result;
  for (ThreadState& ts : states) {
    for (int d = 0; d <= kMaxOps; ++d) result.graphs_by_ops[d] += ts.graphs[d];
    result.repeated_tensor += ts.repeated;
    result.not_first_use += ts.not_first_use;
    if (opt.sink && !ts.records.empty()) hand_over(opt, ts.records);
  }
  if (opt.sink) return result;
  size_t total = 0;
  for (ThreadState& ts : states) total += ts.records.size();
  result.records.reserve(total);
  for (ThreadState& ts : states) {
    result.records.insert(result.records.end(), ts.records.begin(), ts.records.end());
    std::vector<Record>().swap(ts.records);
  }
  tbb::parallel_sort(result.records.begin(), result.records.end());
  return result;
}

}  // namespace tso::gen
