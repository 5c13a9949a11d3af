// The generation pipeline: enumerate, pair, prune, re-test, write.
#include "generator/generator.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "generator/candidates.h"
#include "generator/rule_writer.h"

namespace tso::gen {

namespace {

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

}  // namespace

std::string GenerateCounts::text() const {
  return "graphs=" + std::to_string(graphs) + " fingerprints=" + std::to_string(fingerprints) +
         " candidates=" + std::to_string(candidates) + " common=" + std::to_string(common) +
         " values=" + std::to_string(values) + " renaming=" + std::to_string(renaming) +
         " bindable=" + std::to_string(bindable) + " float=" + std::to_string(float_ok) +
         " implied=" + std::to_string(implied) + " written=" + std::to_string(implied);
}

Expected<GenerateResult> generate(const OpSet& set, const GenerateOptions& opt,
                                  EnumProgress* progress) {
  if (opt.max_ops < 1 || opt.max_ops > kMaxOps)
    return Error{"--max-ops must be in 1.." + std::to_string(kMaxOps) + ", got " +
                 std::to_string(opt.max_ops)};
  if (opt.sets < 2) return Error{"fingerprints need at least 2 random input sets"};
  if (set.vars.size() + 2 * static_cast<size_t>(opt.max_ops) >= 256)
    return Error{"too many variables for " + std::to_string(opt.max_ops) + " operators"};
  GenerateResult res;
  GenerateCounts& n = res.counts;

  EnumerateOptions eo;
  eo.max_ops = opt.max_ops;
  eo.sets = opt.sets;
  eo.seed = opt.seed;
  EnumerateResult en = enumerate(set, eo, progress);
  n.graphs = en.records.size();
  n.graphs_by_ops.assign(en.graphs_by_ops.begin(), en.graphs_by_ops.begin() + opt.max_ops + 1);

  // Each graph with the first graph of its key (fewest operators first).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  const std::vector<Record>& rec = en.records;
  for (size_t i = 0; i < rec.size();) {
    size_t j = i + 1;
    while (j < rec.size() && rec[j].key == rec[i].key) ++j;
    ++n.fingerprints;
    for (size_t k = i + 1; k < j; ++k) pairs.emplace_back(i, k);
    i = j;
  }
  n.candidates = pairs.size();

  Tables tables([&] { return KindTable(set); });
  pairs = filter(std::move(pairs), [&](const std::pair<uint32_t, uint32_t>& p) {
    return !share_operator(tables.local(), decode(rec[p.first].code), decode(rec[p.second].code));
  });
  n.common = pairs.size();

  const std::vector<ValuePtr> inputs = input_values(set, opt.sets, opt.seed);
  std::vector<std::optional<Candidate>> matched(pairs.size());
  tbb::parallel_for(size_t{0}, pairs.size(), [&](size_t i) {
    matched[i] = match_outputs(tables.local(), inputs, decode(rec[pairs[i].first].code),
                               decode(rec[pairs[i].second].code));
  });
  std::vector<Candidate> cands;
  for (auto& m : matched)
    if (m) cands.push_back(std::move(*m));
  matched.clear();
  n.values = cands.size();
  en.records.clear();
  en.records.shrink_to_fit();

  std::vector<uint64_t> cls(cands.size());
  tbb::parallel_for(size_t{0}, cands.size(), [&](size_t i) { cls[i] = renaming_class(set, cands[i]); });
  {
    std::unordered_set<uint64_t> seen;
    std::vector<Candidate> kept;
    for (size_t i = 0; i < cands.size(); ++i)
      if (seen.insert(cls[i]).second) kept.push_back(std::move(cands[i]));
    cands.swap(kept);
  }
  n.renaming = cands.size();

  cands = filter(std::move(cands), [&](Candidate& c) { return orient(tables.local(), &c); });
  n.bindable = cands.size();

  cands = filter(std::move(cands), [&](const Candidate& c) {
    return float_equal(set, c, opt.seed ^ 0xf10a7ull);
  });
  n.float_ok = cands.size();

  // Smaller rules first; a rule is checked against the kept strictly smaller ones.
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return cands[x].size() < cands[y].size(); });
  std::vector<uint8_t> keep(cands.size(), 0);
  std::vector<size_t> kept;
  for (size_t lo = 0; lo < order.size();) {
    size_t hi = lo;
    while (hi < order.size() && cands[order[hi]].size() == cands[order[lo]].size()) ++hi;
    tbb::parallel_for(lo, hi, [&](size_t k) {
      const Candidate& c = cands[order[k]];
      bool implied = false;
      for (size_t r : kept)
        if (implied_by(set, c, cands[r])) {
          implied = true;
          break;
        }
      keep[order[k]] = !implied;
    });
    for (size_t k = lo; k < hi; ++k)
      if (keep[order[k]]) kept.push_back(order[k]);
    lo = hi;
  }
  n.implied = kept.size();

  RuleOrigin origin;
  origin.kind = RuleOrigin::Kind::kGenerated;
  origin.version = kGeneratorVersion;
  origin.ops = set.name;
  origin.seed = opt.seed;
  res.rules.header.push_back(std::string("generator: tso ") + kGeneratorVersion + ", ops: " +
                             set.name + ", seed: " + std::to_string(opt.seed) +
                             ", max-ops: " + std::to_string(opt.max_ops));
  res.rules.header.push_back("counts: " + n.text());
  KindTable& table = tables.local();
  int index = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!keep[i]) continue;
    char name[32];
    std::snprintf(name, sizeof name, "g%d_%06d", opt.max_ops, index++);
    res.rules.rules.push_back(make_rule(table, cands[i], name, origin));
  }
  return res;
}

}  // namespace tso::gen
