// The generation pipeline: enumerate, pair, prune, re-test, write.
#include "generator/generator.h"

#include <algorithm>
#include <chrono>

#include "generator/stages.h"

namespace tso::gen {

std::string GenerateCounts::text() const {
  return "not-first-use=" + std::to_string(not_first_use) + " graphs=" + std::to_string(graphs) +
         " fingerprints=" + std::to_string(fingerprints) +
         " candidates=" + std::to_string(candidates) + " common=" + std::to_string(common) +
         " values=" + std::to_string(values) + " renaming=" + std::to_string(renaming) +
         " bindable=" + std::to_string(bindable) + " independent=" + std::to_string(independent) +
         " float=" + std::to_string(float_ok) + " implied=" + std::to_string(implied) +
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
  for (AttrKey k : set.lift_pool) h = hash_mix(h, 0x9001ull + static_cast<uint64_t>(k));
  const LayoutLift& l = set.lift_layout;
  if (l.rank_lo != 0)
    h = hash_mix(hash_mix(h, 0x1a70ull + l.perm + 2 * l.concat_axis + 4 * l.split_axis),
                 static_cast<uint64_t>(l.rank_lo * 16 + l.rank_hi));
  return h;
}

Status check_generate_options(const OpSet& set, const GenerateOptions& opt) {
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

Expected<Part> enumerate_part(const OpSet& set, const GenerateOptions& opt,
                              EnumProgress* progress) {
  TSO_RETURN_IF_ERROR(check_generate_options(set, opt));
  EnumerateOptions eo;
  eo.max_ops = opt.max_ops;
  eo.sets = opt.sets;
  eo.seed = opt.seed;
  eo.shard = opt.shard;
  eo.num_shards = opt.num_shards;
  eo.sink = opt.sink;
  eo.sink_records = opt.sink_records;
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
    if (p.op_set_hash != first.op_set_hash || p.max_ops != first.max_ops || p.sets != first.sets ||
        p.seed != first.seed || p.num_shards != first.num_shards)
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
  GenerateCounts n;
  StepTimes times;
  n.graphs = whole.records.size();
  n.not_first_use = whole.not_first_use;
  n.graphs_by_ops = whole.graphs_by_ops;
  Tables tables([&] { return KindTable(set); });
  const std::vector<ValuePtr> inputs = input_values(set, whole.sets, whole.seed);
  std::vector<Placed> cands = pair_records(set, tables, inputs, whole.records, &n, &times);
  std::vector<Record>().swap(whole.records);

  auto start = std::chrono::steady_clock::now();
  auto lap = [&](const char* step) {
    auto now = std::chrono::steady_clock::now();
    times.add(step, std::chrono::duration<double>(now - start).count());
    start = now;
  };
  std::vector<uint64_t> classes = renaming_classes(set, cands);
  keep_first_of_class(&cands, &classes);
  n.renaming = cands.size();
  lap("renaming");

  check_candidates(tables, whole.seed, &cands, &n, &times);
  start = std::chrono::steady_clock::now();
  const std::vector<uint8_t> keep = not_implied(tables, cands, 0, 1, [](std::span<uint8_t>) {});
  lap("implied");

  GenerateResult res =
      write_rules(set, tables.local(), cands, keep, whole.max_ops, whole.seed, std::move(n));
  lap("write");
  res.seconds = std::move(times.seconds);
  return res;
}

}  // namespace tso::gen
