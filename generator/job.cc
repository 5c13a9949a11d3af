// A generation job over the ranks of a Comm (see job.h).
#include "generator/job.h"

#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <optional>

#include "generator/part_file.h"
#include "generator/record_file.h"
#include "generator/stages.h"

namespace tso::gen {

namespace fs = std::filesystem;

namespace {

constexpr size_t kRecordBytes = sizeof(Record);
static_assert(kRecordBytes == 32 && std::is_trivially_copyable_v<Record>);

// How many records each step holds at most (per rank). Without a budget a
// rank holds the records it owns, and little else.
struct Limits {
  size_t sink = 0;      // per enumeration thread before a run is written
  size_t exchange = 0;  // read and sent per exchange round
  size_t held = 0;      // received before they are merged into a run (SIZE_MAX: never)
  size_t pair = 0;      // paired at a time
};

Limits limits_for(uint64_t budget) {
  const size_t threads = std::max(1, tbb::this_task_arena::max_concurrency());
  if (budget == 0) return {(size_t{1} << 23) / threads, size_t{1} << 22, SIZE_MAX, size_t{1} << 22};
  const size_t records = budget / kRecordBytes, least = 1 << 12;
  return {std::max(records / 4 / threads, least), std::max(records / 16, least),
          std::max(records / 4, least), std::max(records / 16, least)};
}

int owner_of_key(uint64_t key, int ranks) {
  return static_cast<int>(hash_mix(0x6b3a9c5d2e1f4087ull, key) % static_cast<uint64_t>(ranks));
}

std::string shard_path(const std::string& prefix, int shard, int shards) {
  return prefix + "-shard-" + std::to_string(shard) + "-of-" + std::to_string(shards) + ".part";
}

// What the shards of this rank add to the counts.
struct ShardTotals {
  uint64_t not_first_use = 0, reused = 0, runs = 0;
  std::vector<uint64_t> graphs_by_ops;
  void add(const Part& p) {
    not_first_use += p.not_first_use;
    for (size_t d = 0; d < graphs_by_ops.size(); ++d) graphs_by_ops[d] += p.graphs_by_ops[d];
  }
};

bool same_run(const Part& p, uint64_t set_hash, const GenerateOptions& g) {
  return p.op_set_hash == set_hash && p.max_ops == g.max_ops && p.sets == g.sets &&
         p.seed == g.seed && p.shard == g.shard && p.num_shards == g.num_shards;
}

// Enumerates shard g.shard into its part file through sorted runs of at
// most `sink_records` records a thread.
Expected<Part> enumerate_shard(const OpSet& set, GenerateOptions g, size_t sink_records,
                               const std::string& prefix, const std::string& path,
                               JobProgress* progress, uint64_t* runs_written) {
  std::mutex m;
  std::vector<std::string> runs;
  uint64_t in_runs = 0;
  Status failed;
  g.sink_records = sink_records;
  g.sink = [&](std::vector<Record>& records) {
    std::unique_lock<std::mutex> l(m);
    const std::string run = prefix + "-shard-" + std::to_string(g.shard) + "-run-" +
                            std::to_string(runs.size()) + ".records";
    runs.push_back(run);
    in_runs += records.size();
    l.unlock();
    Status s = write_run(records, run);
    records.clear();
    l.lock();
    if (!s.ok() && failed.ok()) failed = s;
  };
  Expected<Part> part = enumerate_part(set, g, &progress->enumeration);
  auto remove_runs = [&] {
    std::error_code ec;
    for (const std::string& r : runs) fs::remove(r, ec);
  };
  if (!part || !failed.ok()) {
    remove_runs();
    return part ? failed.error() : part.error();
  }
  RunMerger merger;
  for (const std::string& r : runs) {
    Expected<RowReader> reader = RowReader::open_run(r, g.max_ops);
    if (!reader) {
      remove_runs();
      return reader.error();
    }
    merger.add(std::move(*reader));
  }
  Status written = write_part(*part, in_runs, &merger, path);
  remove_runs();
  *runs_written += runs.size();
  if (!written.ok()) return written.error();
  return part;
}

// The enumerate stage: this rank's shards, enumerated or reused.
Expected<ShardTotals> enumerate_shards(const OpSet& set, const JobOptions& opt,
                                       const std::vector<int>& mine, int shards,
                                       const std::string& prefix, const Limits& lim,
                                       JobProgress* progress) {
  ShardTotals t;
  t.graphs_by_ops.assign(opt.gen.max_ops + 1, 0);
  const uint64_t set_hash = op_set_hash(set);
  for (int s : mine) {
    GenerateOptions g = opt.gen;
    g.shard = s;
    g.num_shards = shards;
    const std::string path = shard_path(prefix, s, shards);
    if (fs::exists(path)) {
      Expected<OpenPart> done = open_part(path);
      if (done && same_run(done->header, set_hash, g)) {
        t.add(done->header);
        ++t.reused;
        ++progress->shards_done;
        continue;
      }
    }
    Expected<Part> part = enumerate_shard(set, g, lim.sink, prefix, path, progress, &t.runs);
    if (!part) return part.error();
    t.add(*part);
    ++progress->shards_done;
  }
  return t;
}

// Reads this rank's shards in order, a block at a time.
class ShardStream {
 public:
  ShardStream(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  // Appends up to `max` records to `out`.
  Status read(size_t max, std::vector<Record>* out) {
    while (out->size() < max) {
      if (!open_) {
        if (next_ == paths_.size()) return Status::Ok();
        Expected<OpenPart> p = open_part(paths_[next_++]);
        if (!p) return p.error();
        open_.emplace(std::move(*p));
      }
      Expected<std::span<const Record>> block = open_->rows.next(max - out->size());
      if (!block) return block.error();
      if (block->empty()) {
        open_.reset();
        continue;
      }
      out->insert(out->end(), block->begin(), block->end());
    }
    return Status::Ok();
  }

 private:
  std::vector<std::string> paths_;
  size_t next_ = 0;
  std::optional<OpenPart> open_;
};

// The exchange stage: every record to the owner of its key. What this rank
// owns stays in memory as the sorted blocks it arrived in, or, past the
// budget, is merged into sorted runs on disk.
struct Owned {
  std::vector<std::vector<Record>> blocks;  // each sorted
  size_t in_blocks = 0;
  std::vector<std::string> runs;
  uint64_t count = 0;
};

// A merge of the blocks (which it takes).
RunMerger merge_blocks(Owned& own) {
  RunMerger merger;
  for (std::vector<Record>& b : own.blocks) merger.add(std::move(b));
  own.blocks.clear();
  own.in_blocks = 0;
  return merger;
}

Expected<Owned> exchange_records(Comm& comm, ShardStream stream, const Limits& lim,
                                 const std::string& prefix) {
  const int ranks = comm.size();
  Owned own;
  std::vector<Record> chunk;
  std::vector<char> send;
  std::vector<uint64_t> counts(ranks);
  std::vector<size_t> at(ranks);
  while (true) {
    chunk.clear();
    TSO_RETURN_IF_ERROR(stream.read(lim.exchange, &chunk));
    uint64_t any = chunk.size();
    comm.sum(std::span(&any, 1));
    if (any == 0) break;
    std::fill(counts.begin(), counts.end(), 0);
    for (const Record& r : chunk) counts[owner_of_key(r.key, ranks)] += kRecordBytes;
    std::exclusive_scan(counts.begin(), counts.end(), at.begin(), size_t{0});
    send.resize(chunk.size() * kRecordBytes);
    for (const Record& r : chunk) {
      std::memcpy(send.data() + at[owner_of_key(r.key, ranks)], &r, kRecordBytes);
      at[owner_of_key(r.key, ranks)] += kRecordBytes;
    }
    const std::vector<char> got = comm.all_to_all(send, counts);
    if (got.empty()) continue;
    std::vector<Record>& block = own.blocks.emplace_back(got.size() / kRecordBytes);
    std::memcpy(block.data(), got.data(), got.size());
    tbb::parallel_sort(block.begin(), block.end());
    own.count += block.size();
    own.in_blocks += block.size();
    if (own.in_blocks >= lim.held) {
      const std::string run = prefix + "-rank-" + std::to_string(comm.rank()) + "-run-" +
                              std::to_string(own.runs.size()) + ".records";
      RunMerger merger = merge_blocks(own);
      TSO_RETURN_IF_ERROR(write_run(&merger, run));
      own.runs.push_back(run);
    }
  }
  return own;
}

// The pair stage over the records this rank owns, whole keys at a time.
Expected<std::vector<Placed>> pair_owned(const OpSet& set, Tables& tables, const GenerateOptions& g,
                                         Owned own, const Limits& lim, GenerateCounts* n,
                                         StepTimes* times) {
  const std::vector<ValuePtr> inputs = input_values(set, g.sets, g.seed);
  std::vector<Placed> cands;
  RunMerger merger = merge_blocks(own);
  for (const std::string& r : own.runs) {
    Expected<RowReader> reader = RowReader::open_run(r, g.max_ops);
    if (!reader) return reader.error();
    merger.add(std::move(*reader));
  }
  std::vector<Record> batch;
  while (true) {
    batch.clear();
    Expected<bool> more = merger.next_keys(lim.pair, &batch);
    if (!more) return more.error();
    if (!*more) break;
    std::vector<Placed> c = pair_records(set, tables, inputs, batch, n, times);
    std::move(c.begin(), c.end(), std::back_inserter(cands));
  }
  std::error_code ec;
  for (const std::string& r : own.runs) fs::remove(r, ec);
  return cands;
}

// Candidates on the wire: key, second code, class, the sides' codes, then
// the matched outputs (tensor indices fit a byte: check_options).
void pack(const OpSet& set, const Placed& p, uint64_t cls, std::vector<char>* out) {
  auto put = [&](const void* data, size_t n) {
    const char* c = static_cast<const char*>(data);
    out->insert(out->end(), c, c + n);
  };
  const Code a = encode(set, p.cand.a), b = encode(set, p.cand.b);
  put(&p.key, 8);
  put(p.second.data(), p.second.size());
  put(&cls, 8);
  put(a.data(), a.size());
  put(b.data(), b.size());
  out->push_back(static_cast<char>(p.cand.a_out.size()));
  for (int t : p.cand.a_out) out->push_back(static_cast<char>(t));
  for (int t : p.cand.b_out) out->push_back(static_cast<char>(t));
}

void unpack(const OpSet& set, std::span<const char> bytes, std::vector<Placed>* cands,
            std::vector<uint64_t>* classes) {
  size_t at = 0;
  auto get = [&](void* data, size_t n) {
    std::memcpy(data, bytes.data() + at, n);
    at += n;
  };
  while (at < bytes.size()) {
    Placed p;
    uint64_t cls = 0;
    Code a{}, b{};
    get(&p.key, 8);
    get(p.second.data(), p.second.size());
    get(&cls, 8);
    get(a.data(), a.size());
    get(b.data(), b.size());
    p.cand.a = decode(set, a);
    p.cand.b = decode(set, b);
    const int outs = static_cast<unsigned char>(bytes[at++]);
    for (int i = 0; i < outs; ++i) p.cand.a_out.push_back(static_cast<unsigned char>(bytes[at++]));
    for (int i = 0; i < outs; ++i) p.cand.b_out.push_back(static_cast<unsigned char>(bytes[at++]));
    cands->push_back(std::move(p));
    classes->push_back(cls);
  }
}

// Sorts candidates (and their classes) into the run's order.
void sort_placed(std::vector<Placed>* cands, std::vector<uint64_t>* classes) {
  std::vector<size_t> order(cands->size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return placed_before((*cands)[x], (*cands)[y]); });
  std::vector<Placed> c;
  std::vector<uint64_t> k;
  for (size_t i : order) {
    c.push_back(std::move((*cands)[i]));
    k.push_back((*classes)[i]);
  }
  cands->swap(c);
  classes->swap(k);
}

// The renaming stage: one candidate per class, kept by the class's owner.
std::vector<Placed> one_per_class(const OpSet& set, Comm& comm, std::vector<Placed> cands) {
  const int ranks = comm.size();
  std::vector<uint64_t> classes = renaming_classes(set, cands);
  keep_first_of_class(&cands, &classes);
  std::vector<std::vector<char>> to(ranks);
  for (size_t i = 0; i < cands.size(); ++i)
    pack(set, cands[i], classes[i], &to[classes[i] % ranks]);
  std::vector<char> send;
  std::vector<uint64_t> counts;
  for (const std::vector<char>& t : to) {
    send.insert(send.end(), t.begin(), t.end());
    counts.push_back(t.size());
  }
  const std::vector<char> got = comm.all_to_all(send, counts);
  cands.clear();
  classes.clear();
  unpack(set, got, &cands, &classes);
  sort_placed(&cands, &classes);
  keep_first_of_class(&cands, &classes);
  return cands;
}

// Every rank's candidates on every rank, in the run's order.
std::vector<Placed> all_candidates(const OpSet& set, Comm& comm, const std::vector<Placed>& mine) {
  std::vector<char> bytes;
  for (const Placed& p : mine) pack(set, p, 0, &bytes);
  bytes = comm.gather(bytes, 0);
  comm.broadcast(&bytes, 0);
  std::vector<Placed> all;
  std::vector<uint64_t> classes;
  unpack(set, bytes, &all, &classes);
  sort_placed(&all, &classes);
  return all;
}

}  // namespace

const char* stage_name(int stage) {
  static const char* const kNames[] = {"start", "enumerate", "exchange", "pair", "renaming",
                                       "check", "implied",   "write",    "done"};
  return stage >= 0 && stage <= static_cast<int>(JobStage::kDone) ? kNames[stage] : "?";
}

std::string job_key(const OpSet& set, const JobOptions& opt, int shards) {
  uint64_t h = hash_mix(op_set_hash(set), static_cast<uint64_t>(opt.gen.max_ops));
  h = hash_mix(hash_mix(h, static_cast<uint64_t>(opt.gen.sets)), opt.gen.seed);
  h = hash_mix(h, static_cast<uint64_t>(shards));
  for (const char* c = kGeneratorVersion; *c != '\0'; ++c) h = hash_mix(h, *c);
  char key[17];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  return key;
}

void remove_job_files(const JobOptions& opt, const std::string& key) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(opt.work_dir, ec))
    if (e.path().filename().string().starts_with(key)) files.push_back(e.path());
  for (const fs::path& f : files) fs::remove(f, ec);
  if (fs::is_empty(opt.work_dir, ec)) fs::remove(opt.work_dir, ec);
}

Expected<JobResult> run_job(const OpSet& set, const JobOptions& opt, Comm& comm,
                            JobProgress* progress) {
  const int ranks = comm.size(), me = comm.rank();
  JobResult res;
  res.shards = opt.shards > 0 ? opt.shards : ranks;
  res.key = job_key(set, opt, res.shards);
  TSO_RETURN_IF_ERROR(check_generate_options(set, opt.gen));
  const std::string prefix = (fs::path(opt.work_dir) / res.key).string();
  const Limits lim = limits_for(opt.memory_budget);
  StepTimes times;
  Lap lap;

  progress->stage = static_cast<int>(JobStage::kEnumerate);
  std::error_code ec;
  fs::create_directories(opt.work_dir, ec);
  if (ec) return Error{opt.work_dir + ": cannot create: " + ec.message()};
  std::vector<int> mine;
  std::vector<std::string> paths;
  for (int s = me; s < res.shards; s += ranks) {
    mine.push_back(s);
    paths.push_back(shard_path(prefix, s, res.shards));
  }
  progress->shards = mine.size();
  Expected<ShardTotals> totals =
      enumerate_shards(set, opt, mine, res.shards, prefix, lim, progress);
  if (!totals) return totals.error();
  times.add("enumerate", lap());

  progress->stage = static_cast<int>(JobStage::kExchange);
  Expected<Owned> own = exchange_records(comm, ShardStream(paths), lim, prefix);
  if (!own) return own.error();
  res.records_owned = own->count;
  const uint64_t own_runs = own->runs.size();
  times.add("exchange", lap());

  progress->stage = static_cast<int>(JobStage::kPair);
  GenerateCounts n;
  Tables tables([&] { return KindTable(set); });
  Expected<std::vector<Placed>> cands =
      pair_owned(set, tables, opt.gen, std::move(*own), lim, &n, &times);
  if (!cands) return cands.error();
  lap();

  progress->stage = static_cast<int>(JobStage::kRenaming);
  *cands = one_per_class(set, comm, std::move(*cands));
  n.renaming = cands->size();
  times.add("renaming", lap());

  progress->stage = static_cast<int>(JobStage::kCheck);
  check_candidates(tables, opt.gen.seed, &*cands, &n, &times);
  lap();
  std::vector<uint64_t> sums = {totals->not_first_use,
                                n.fingerprints,
                                n.candidates,
                                n.common,
                                n.values,
                                n.renaming,
                                n.bindable,
                                n.independent,
                                n.float_ok,
                                totals->reused,
                                totals->runs,
                                own_runs};
  sums.insert(sums.end(), totals->graphs_by_ops.begin(), totals->graphs_by_ops.end());
  comm.sum(sums);

  progress->stage = static_cast<int>(JobStage::kImplied);
  const std::vector<Placed> all = all_candidates(set, comm, *cands);
  const std::vector<uint8_t> keep =
      not_implied(tables, all, me, ranks, [&](std::span<uint8_t> l) { comm.max(l); });
  times.add("implied", lap());

  progress->stage = static_cast<int>(JobStage::kWrite);
  GenerateCounts whole;
  whole.not_first_use = sums[0];
  whole.fingerprints = sums[1];
  whole.candidates = sums[2];
  whole.common = sums[3];
  whole.values = sums[4];
  whole.renaming = sums[5];
  whole.bindable = sums[6];
  whole.independent = sums[7];
  whole.float_ok = sums[8];
  res.shards_reused = sums[9];
  res.enumeration_runs = sums[10];
  res.spilled_runs = sums[11];
  whole.graphs_by_ops.assign(sums.begin() + 12, sums.end());
  whole.graphs =
      std::accumulate(whole.graphs_by_ops.begin(), whole.graphs_by_ops.end(), uint64_t{0});
  if (me == 0) {
    res.result = write_rules(set, tables.local(), all, keep, opt.gen.max_ops, opt.gen.seed,
                             std::move(whole));
    times.add("write", lap());
    res.result.seconds = std::move(times.seconds);
  }
  progress->stage = static_cast<int>(JobStage::kDone);
  return res;
}

}  // namespace tso::gen
