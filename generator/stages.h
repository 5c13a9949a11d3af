// Internal to generator/: the steps after the enumeration, each over a slice
// of the run. One process runs them all in order (rules_from in
// generator.cc); the ranks of a job (job.h) run the local ones on their own
// slices and combine the global ones. Every step is a pure function of its
// input, and candidates carry their place in the whole run's order, so any
// split of the work writes the same rules.
#pragma once

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "generator/candidates.h"
#include "generator/enumerate.h"
#include "generator/generator.h"

namespace tso::gen {

using Tables = tbb::enumerable_thread_specific<KindTable>;

// Keeps the items for which keep(i) holds, in order; keep runs in parallel.
template <class T, class F>
std::vector<T> filter(std::vector<T> items, F keep) {
  std::vector<uint8_t> ok(items.size());
  tbb::parallel_for(size_t{0}, items.size(), [&](size_t i) { ok[i] = keep(items[i]); });
  std::vector<T> out;
  for (size_t i = 0; i < items.size(); ++i)
    if (ok[i]) out.push_back(std::move(items[i]));
  return out;
}

// A candidate and its place in the whole run's order: the key, then the code
// of the pair's second graph (the first is its key's first graph).
struct Placed {
  uint64_t key = 0;
  Code second{};
  Candidate cand;
};
inline bool placed_before(const Placed& x, const Placed& y) {
  return x.key != y.key ? x.key < y.key : x.second < y.second;
}

// Seconds since the previous call (or construction).
class Lap {
 public:
  double operator()() {
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(now - std::exchange(last_, now)).count();
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Wall seconds by step; a step timed again adds up.
struct StepTimes {
  std::vector<std::pair<std::string, double>> seconds;
  void add(const std::string& step, double s);
};

// Pairs each graph of `records` (sorted, whole keys) with its key's first
// graph, drops the pairs that share an operator and those whose values differ
// (candidates.h); adds to the fingerprints, candidates, common and values
// counts. The candidates come out in order.
std::vector<Placed> pair_records(const OpSet& set, Tables& tables,
                                 const std::vector<ValuePtr>& inputs,
                                 std::span<const Record> records, GenerateCounts* n,
                                 StepTimes* times);

// Each candidate's variable-renaming class.
std::vector<uint64_t> renaming_classes(const OpSet& set, std::span<const Placed> cands);
// Keeps the first candidate (in the vector's order) of each class; `classes`
// follows.
void keep_first_of_class(std::vector<Placed>* cands, std::vector<uint64_t>* classes);

// The local checks after the renaming step, in order: bindable, independent
// parts, the double re-test (orienting each candidate); adds to their counts.
void check_candidates(Tables& tables, uint64_t seed, std::vector<Placed>* cands, GenerateCounts* n,
                      StepTimes* times);

// Whether each candidate (all of the run's, in order) is kept: not implied by
// the kept strictly smaller ones (implied.cc). Candidates are decided smaller
// first, one size at a time; of each size this process decides the k-th when
// k % parts == part, and `combine` (a max over the processes; nothing for
// one) fills in the others' decisions before the next size.
std::vector<uint8_t> not_implied(Tables& tables, std::span<const Placed> cands, int part, int parts,
                                 const std::function<void(std::span<uint8_t>)>& combine);

// The rules of the kept candidates, named in order, with the header lines;
// sets n.implied and n.lifted.
GenerateResult write_rules(const OpSet& set, KindTable& table, std::span<const Placed> cands,
                           std::span<const uint8_t> keep, int max_ops, uint64_t seed,
                           GenerateCounts n);

}  // namespace tso::gen
