// The generation pipeline: enumerate, pair, prune, re-test, write.
#include "generator/generator.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "generator/candidates.h"
#include "generator/lift.h"
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
  return "not-first-use=" + std::to_string(not_first_use) + " graphs=" + std::to_string(graphs) + " fingerprints=" + std::to_string(fingerprints) +
         " candidates=" + std::to_string(candidates) + " common=" + std::to_string(common) +
         " values=" + std::to_string(values) + " renaming=" + std::to_string(renaming) +
         " bindable=" + std::to_string(bindable) +
         " independent=" + std::to_string(independent) + " float=" + std::to_string(float_ok) +
         " implied=" + std::to_string(implied) +
         (lifted > 0 ? " lifted=" + std::to_string(lifted) : "") +
         " written=" + std::to_string(implied + lifted);
}

uint64_t op_set_hash(const OpSet& set) {
  auto text = [](uint64_t h, const std::string& t) {
    for (unsigned char c : t) h = hash_mix(h, c);
    return hash_mix(h, t.size());
  };
  uint64_t h = text(text(0x0b5e7ull, set.name), set.rule_prefix);
  for (const GenVar& v : set.vars) {
    h = text(h, v.name);
    h = hash_mix(hash_mix(h, hash_of(v.type.shape)), v.weight);
    h = hash_mix(h, static_cast<uint64_t>(v.renaming_class));
  }
  for (const OpTemplate& t : set.ops) h = text(h, t.text);
  for (AttrKey k : set.lift_conv2d) h = hash_mix(h, 0x11f7ull + static_cast<uint64_t>(k));
  return h;
}

namespace {

Status check_options(const OpSet& set, const GenerateOptions& opt) {
  if (opt.max_ops < 1 || opt.max_ops > kMaxOps)
    return Error{"--max-ops must be in 1.." + std::to_string(kMaxOps) + ", got " +
                 std::to_string(opt.max_ops)};
  if (opt.sets < 2) return Error{"fingerprints need at least 2 random input sets"};
  if (opt.num_shards < 1 || opt.shard < 0 || opt.shard >= opt.num_shards)
    return Error{"--shard must be i/n with 0 <= i < n, got " + std::to_string(opt.shard) + "/" +
                 std::to_string(opt.num_shards)};
  if (opt.max_ops > max_ops_for(set))
    return Error{"--max-ops must be at most " + std::to_string(max_ops_for(set)) +
                 " with 3-argument templates (a graph's record holds " +
                 std::to_string(max_ops_for(set)) + " of them), got " +
                 std::to_string(opt.max_ops)};
  if (set.vars.size() + 2 * static_cast<size_t>(opt.max_ops) >= 256)
    return Error{"too many variables for " + std::to_string(opt.max_ops) + " operators"};
  std::vector<int> per_class;
  for (const GenVar& v : set.vars) {
    if (v.renaming_class >= static_cast<int>(per_class.size()))
      per_class.resize(v.renaming_class + 1);
    if (++per_class[v.renaming_class] > 32)
      return Error{"at most 32 variables of one kind and type (at '" + v.name + "')"};
  }
  return Status::Ok();
}

}  // namespace

Expected<Part> enumerate_part(const OpSet& set, const GenerateOptions& opt,
                              EnumProgress* progress) {
  TSO_RETURN_IF_ERROR(check_options(set, opt));
  EnumerateOptions eo;
  eo.max_ops = opt.max_ops;
  eo.sets = opt.sets;
  eo.seed = opt.seed;
  eo.shard = opt.shard;
  eo.num_shards = opt.num_shards;
  EnumerateResult en = enumerate(set, eo, progress);
  Part p;
  p.ops_name = set.name;
  p.op_set_hash = op_set_hash(set);
  p.max_ops = opt.max_ops;
  p.sets = opt.sets;
  p.seed = opt.seed;
  p.shard = opt.shard;
  p.num_shards = opt.num_shards;
  p.graphs_by_ops.assign(en.graphs_by_ops.begin(), en.graphs_by_ops.begin() + opt.max_ops + 1);
  p.not_first_use = en.not_first_use;
  p.records = std::move(en.records);
  return p;
}

Expected<Part> merge_parts(std::vector<Part> parts) {
  if (parts.empty()) return Error{"no parts to merge"};
  const Part& first = parts.front();
  std::vector<bool> seen(first.num_shards);
  for (const Part& p : parts) {
    if (p.op_set_hash != first.op_set_hash || p.max_ops != first.max_ops ||
        p.sets != first.sets || p.seed != first.seed || p.num_shards != first.num_shards)
      return Error{"part " + std::to_string(p.shard) + "/" + std::to_string(p.num_shards) +
                   " comes from another run (operator set, max-ops, seed or shard count differ)"};
    if (seen[p.shard])
      return Error{"part " + std::to_string(p.shard) + "/" + std::to_string(p.num_shards) +
                   " given twice"};
    seen[p.shard] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      return Error{"part " + std::to_string(i) + "/" + std::to_string(seen.size()) + " is missing"};
  Part whole = std::move(parts.front());
  whole.shard = 0;
  whole.num_shards = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    for (size_t d = 0; d < whole.graphs_by_ops.size(); ++d)
      whole.graphs_by_ops[d] += parts[i].graphs_by_ops[d];
    whole.not_first_use += parts[i].not_first_use;
    const size_t mid = whole.records.size();
    whole.records.insert(whole.records.end(), parts[i].records.begin(), parts[i].records.end());
    std::vector<Record>().swap(parts[i].records);
    std::inplace_merge(whole.records.begin(), whole.records.begin() + mid, whole.records.end());
  }
  return whole;
}

Expected<GenerateResult> generate(const OpSet& set, const GenerateOptions& opt,
                                  EnumProgress* progress) {
  GenerateOptions whole = opt;
  whole.shard = 0;
  whole.num_shards = 1;
  Expected<Part> p = enumerate_part(set, whole, progress);
  if (!p) return p.error();
  return rules_from(set, std::move(*p));
}

Expected<GenerateResult> rules_from(const OpSet& set, Part whole) {
  if (whole.op_set_hash != op_set_hash(set))
    return Error{"the parts were enumerated over another operator set than '" + set.name + "'"};
  if (whole.num_shards != 1) return Error{"rules_from needs a whole enumeration, not a part"};
  GenerateResult res;
  GenerateCounts& n = res.counts;
  auto last = std::chrono::steady_clock::now();
  auto lap = [&](const char* step) {
    auto now = std::chrono::steady_clock::now();
    res.seconds.emplace_back(step, std::chrono::duration<double>(now - last).count());
    last = now;
  };
  n.graphs = whole.records.size();
  n.not_first_use = whole.not_first_use;
  n.graphs_by_ops = whole.graphs_by_ops;
  // Each graph with the first graph of its key (fewest operators first).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  const std::vector<Record>& rec = whole.records;
  for (size_t i = 0; i < rec.size();) {
    size_t j = i + 1;
    while (j < rec.size() && rec[j].key == rec[i].key) ++j;
    ++n.fingerprints;
    for (size_t k = i + 1; k < j; ++k) pairs.emplace_back(i, k);
    i = j;
  }
  n.candidates = pairs.size();
  lap("pair");

  Tables tables([&] { return KindTable(set); });
  pairs = filter(std::move(pairs), [&](const std::pair<uint32_t, uint32_t>& p) {
    return !share_operator(set, decode(set, rec[p.first].code), decode(set, rec[p.second].code));
  });
  n.common = pairs.size();
  lap("common subgraph");

  const std::vector<ValuePtr> inputs = input_values(set, whole.sets, whole.seed);
  std::vector<std::optional<Candidate>> matched(pairs.size());
  tbb::parallel_for(size_t{0}, pairs.size(), [&](size_t i) {
    matched[i] = match_outputs(tables.local(), inputs, decode(set, rec[pairs[i].first].code),
                               decode(set, rec[pairs[i].second].code));
  });
  std::vector<Candidate> cands;
  for (auto& m : matched)
    if (m) cands.push_back(std::move(*m));
  matched.clear();
  n.values = cands.size();
  lap("values");
  whole.records.clear();
  whole.records.shrink_to_fit();

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
  lap("renaming");

  cands = filter(std::move(cands), [&](Candidate& c) { return orient(tables.local(), &c); });
  n.bindable = cands.size();
  lap("bindable");

  cands = filter(std::move(cands), [&](const Candidate& c) { return !independent_parts(set, c); });
  n.independent = cands.size();
  lap("independent");

  cands = filter(std::move(cands), [&](const Candidate& c) {
    return float_equal(tables.local(), c, whole.seed ^ 0xf10a7ull);
  });
  n.float_ok = cands.size();
  lap("double re-test");

  // Smaller rules first; a rule is checked against the kept strictly smaller ones.
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return cands[x].size() < cands[y].size(); });
  std::vector<Masks> masks(cands.size());
  for (size_t i = 0; i < cands.size(); ++i)
    masks[i] = masks_of(cands[i]);
  std::vector<uint8_t> keep(cands.size(), 0);
  std::vector<const Candidate*> kept;
  std::vector<const Masks*> kept_masks;
  for (size_t lo = 0; lo < order.size();) {
    size_t hi = lo;
    while (hi < order.size() && cands[order[hi]].size() == cands[order[lo]].size()) ++hi;
    tbb::parallel_for(lo, hi, [&](size_t k) {
      keep[order[k]] = !implied(tables.local(), cands[order[k]], kept, kept_masks);
    });
    for (size_t k = lo; k < hi; ++k)
      if (keep[order[k]]) {
        kept.push_back(&cands[order[k]]);
        kept_masks.push_back(&masks[order[k]]);
      }
    lo = hi;
  }
  n.implied = kept.size();
  lap("implied");

  RuleOrigin origin;
  origin.kind = RuleOrigin::Kind::kGenerated;
  origin.version = kGeneratorVersion;
  origin.ops = set.name;
  origin.seed = whole.seed;
  res.rules.header.push_back(std::string("generator: tso ") + kGeneratorVersion + ", ops: " +
                             set.name + ", seed: " + std::to_string(whole.seed) +
                             ", max-ops: " + std::to_string(whole.max_ops));
  KindTable& table = tables.local();
  int index = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!keep[i]) continue;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%d_%06d", whole.max_ops, index++);
    res.rules.rules.push_back(make_rule(table, cands[i], set.rule_prefix + suffix, origin));
    if (std::optional<Rule> l = lift_rule(res.rules.rules.back(), set.lift_conv2d)) {
      res.rules.rules.push_back(std::move(*l));
      ++n.lifted;
    }
  }
  res.rules.header.push_back("counts: " + n.text());
  lap("write");
  return res;
}

}  // namespace tso::gen
