// The steps after the enumeration (see stages.h).
#include "generator/stages.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_set>

#include "generator/lift.h"
#include "generator/rule_class.h"
#include "generator/rule_writer.h"

namespace tso::gen {

void StepTimes::add(const std::string& step, double s) {
  for (auto& [name, secs] : seconds)
    if (name == step) {
      secs += s;
      return;
    }
  seconds.emplace_back(step, s);
}

std::vector<Placed> pair_records(const OpSet& set, Tables& tables,
                                 const std::vector<ValuePtr>& inputs, std::span<const Record> rec,
                                 GenerateCounts* n, StepTimes* times) {
  TSO_CHECK(rec.size() <= UINT32_MAX, "pair_records takes at most 2^32 records at a time");
  Lap lap;
  // Each graph with the first graph of its key (fewest operators first).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (size_t i = 0; i < rec.size();) {
    size_t j = i + 1;
    while (j < rec.size() && rec[j].key == rec[i].key) ++j;
    ++n->fingerprints;
    for (size_t k = i + 1; k < j; ++k) pairs.emplace_back(i, k);
    i = j;
  }
  n->candidates += pairs.size();
  times->add("pair", lap());

  pairs = filter(std::move(pairs), [&](const std::pair<uint32_t, uint32_t>& p) {
    return !share_operator(set, decode(set, rec[p.first].code), decode(set, rec[p.second].code));
  });
  n->common += pairs.size();
  times->add("common subgraph", lap());

  std::vector<std::optional<Candidate>> matched(pairs.size());
  tbb::parallel_for(size_t{0}, pairs.size(), [&](size_t i) {
    matched[i] = match_outputs(tables.local(), inputs, decode(set, rec[pairs[i].first].code),
                               decode(set, rec[pairs[i].second].code));
  });
  std::vector<Placed> out;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (matched[i])
      out.push_back({rec[pairs[i].second].key, rec[pairs[i].second].code, std::move(*matched[i])});
  n->values += out.size();
  times->add("values", lap());
  return out;
}

std::vector<uint64_t> renaming_classes(const OpSet& set, std::span<const Placed> cands) {
  std::vector<uint64_t> cls(cands.size());
  tbb::parallel_for(size_t{0}, cands.size(),
                    [&](size_t i) { cls[i] = renaming_class(set, cands[i].cand); });
  return cls;
}

void keep_first_of_class(std::vector<Placed>* cands, std::vector<uint64_t>* classes) {
  std::unordered_set<uint64_t> seen;
  std::vector<Placed> kept;
  std::vector<uint64_t> kept_classes;
  for (size_t i = 0; i < cands->size(); ++i)
    if (seen.insert((*classes)[i]).second) {
      kept.push_back(std::move((*cands)[i]));
      kept_classes.push_back((*classes)[i]);
    }
  cands->swap(kept);
  classes->swap(kept_classes);
}

void check_candidates(Tables& tables, uint64_t seed, std::vector<Placed>* cands, GenerateCounts* n,
                      StepTimes* times) {
  Lap lap;
  *cands = filter(std::move(*cands), [&](Placed& c) { return orient(tables.local(), &c.cand); });
  n->bindable += cands->size();
  times->add("bindable", lap());

  *cands = filter(std::move(*cands), [&](const Placed& c) {
    return !independent_parts(tables.local().set(), c.cand);
  });
  n->independent += cands->size();
  times->add("independent", lap());

  *cands = filter(std::move(*cands), [&](const Placed& c) {
    return float_equal(tables.local(), c.cand, seed ^ 0xf10a7ull);
  });
  n->float_ok += cands->size();
  times->add("double re-test", lap());
}

std::vector<uint8_t> not_implied(Tables& tables, std::span<const Placed> cands, int part, int parts,
                                 const std::function<void(std::span<uint8_t>)>& combine) {
  // Smaller rules first; a rule is checked against the kept strictly smaller ones.
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return cands[x].cand.size() < cands[y].cand.size(); });
  std::vector<Masks> masks(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) masks[i] = masks_of(cands[i].cand);
  std::vector<uint8_t> keep(cands.size(), 0), level;
  std::vector<const Candidate*> kept;
  std::vector<const Masks*> kept_masks;
  for (size_t lo = 0; lo < order.size();) {
    size_t hi = lo;
    while (hi < order.size() && cands[order[hi]].cand.size() == cands[order[lo]].cand.size()) ++hi;
    level.assign(hi - lo, 0);
    tbb::parallel_for(lo, hi, [&](size_t k) {
      if (static_cast<int>((k - lo) % parts) == part)
        level[k - lo] = !implied(tables.local(), cands[order[k]].cand, kept, kept_masks);
    });
    combine(level);
    for (size_t k = lo; k < hi; ++k) {
      keep[order[k]] = level[k - lo];
      if (keep[order[k]]) {
        kept.push_back(&cands[order[k]].cand);
        kept_masks.push_back(&masks[order[k]]);
      }
    }
    lo = hi;
  }
  return keep;
}

GenerateResult write_rules(const OpSet& set, KindTable& table, std::span<const Placed> cands,
                           std::span<const uint8_t> keep, int max_ops, uint64_t seed,
                           GenerateCounts n) {
  GenerateResult res;
  n.implied = std::count(keep.begin(), keep.end(), uint8_t{1});
  n.lifted = 0;
  RuleOrigin origin;
  origin.kind = RuleOrigin::Kind::kGenerated;
  origin.version = kGeneratorVersion;
  origin.ops = set.name;
  origin.seed = seed;
  res.rules.header.push_back(std::string("generator: tso ") + kGeneratorVersion +
                             ", ops: " + set.name + ", seed: " + std::to_string(seed) +
                             ", max-ops: " + std::to_string(max_ops));
  // Originals found on different axes or attributes can lift to one copy
  // (a concat on axis 0 and one on axis 1 both become axis=?a), up to a
  // renaming within classes: only the first of each renaming class is
  // written, as the renaming stage keeps one original per class.
  std::unordered_set<std::string> copies;
  int index = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!keep[i]) continue;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%d_%06d", max_ops, index++);
    res.rules.rules.push_back(make_rule(table, cands[i].cand, set.rule_prefix + suffix, origin));
    std::optional<Rule> l =
        lift_rule(res.rules.rules.back(), set.lift_conv2d, set.lift_layout, set.lift_pool);
    if (l && copies.insert(renaming_class_key(set, *l)).second) {
      res.rules.rules.push_back(std::move(*l));
      ++n.lifted;
    }
  }
  res.rules.header.push_back("counts: " + n.text());
  res.counts = std::move(n);
  return res;
}

}  // namespace tso::gen
