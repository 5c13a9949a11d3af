// `tso generate` as a job (see generate_job.h): flags to JobOptions, progress
// for the whole job on rank 0, a failing rank's report, and the summary.
#include "cli/generate_job.h"

#include <sys/resource.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "generator/job.h"
#include "generator/op_set.h"
#include "substitutions/rules.h"
#ifdef TSO_HAVE_MPI
#include "generator/mpi_comm.h"
#endif

namespace tso::cli {

namespace {

// VmRSS and VmHWM (the peak) of this process, in MiB.
std::pair<double, double> memory_mib() {
  std::ifstream in("/proc/self/status");
  double rss = 0, peak = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmRSS:")) rss = std::atof(line.c_str() + 6) / 1024;
    if (line.starts_with("VmHWM:")) peak = std::atof(line.c_str() + 6) / 1024;
  }
  if (peak == 0) {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    peak = u.ru_maxrss / 1024.0;
  }
  return {rss, peak};
}

// Posts this rank's status every second; on rank 0 also prints the whole
// job's on stderr when the stage changes and every 10 seconds.
class Reporter {
 public:
  Reporter(gen::Comm& comm, const gen::JobProgress& p) : comm_(comm), p_(p) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Reporter() { finish(); }

  // Stops, and posts the rank's last status; rank 0 prints every rank's.
  void finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    comm_.post(status(true));
    if (comm_.rank() == 0)
      print(comm_.last_statuses(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  gen::RankStatus status(bool done) const {
    gen::RankStatus s;
    s.rank = comm_.rank();
    s.stage = p_.stage.load();
    for (const auto& g : p_.enumeration.graphs) s.graphs += g.load(std::memory_order_relaxed);
    s.shards_done = p_.shards_done.load();
    s.shards = p_.shards.load();
    std::tie(s.rss_mib, s.peak_rss_mib) = memory_mib();
    s.done = done;
    return s;
  }

  void print(const std::vector<gen::RankStatus>& all, double secs) const {
    uint64_t graphs = 0;
    int stage = static_cast<int>(gen::JobStage::kDone);
    for (const gen::RankStatus& s : all) {
      graphs += s.graphs;
      stage = std::min(stage, s.stage);
    }
    std::string line =
        "tso generate: " + std::to_string(static_cast<long long>(secs)) + " s, stage " +
        gen::stage_name(stage) + ", " + std::to_string(graphs) + " graphs (" +
        std::to_string(static_cast<long long>(graphs / std::max(secs, 1e-3))) + " graphs/s)";
    char buf[160];
    for (const gen::RankStatus& s : all) {
      std::snprintf(buf, sizeof buf, "; rank %d %s, shards %llu/%llu, %.0f MiB (peak %.0f)", s.rank,
                    gen::stage_name(s.stage), static_cast<unsigned long long>(s.shards_done),
                    static_cast<unsigned long long>(s.shards), s.rss_mib, s.peak_rss_mib);
      line += buf;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  void loop() {
    auto printed = start_;
    int last_stage = -1;
    std::unique_lock<std::mutex> l(m_);
    while (!cv_.wait_for(l, std::chrono::seconds(1), [this] { return stop_; })) {
      comm_.post(status(false));
      if (comm_.rank() != 0) continue;
      const std::vector<gen::RankStatus> all = comm_.statuses();
      int stage = static_cast<int>(gen::JobStage::kDone);
      for (const gen::RankStatus& s : all) stage = std::min(stage, s.stage);
      const auto now = std::chrono::steady_clock::now();
      if (stage != last_stage || now - printed >= std::chrono::seconds(10)) {
        print(all, std::chrono::duration<double>(now - start_).count());
        printed = now;
        last_stage = stage;
      }
    }
  }

  gen::Comm& comm_;
  const gen::JobProgress& p_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// What each rank sends rank 0 at the end.
struct RankSummary {
  double peak_rss_mib = 0;
  uint64_t records_owned = 0;
};

std::unique_ptr<gen::Comm> make_comm() {
#ifdef TSO_HAVE_MPI
  if (launched_by_mpirun()) return gen::MpiComm::init();
#endif
  return std::make_unique<gen::LocalComm>();
}

}  // namespace

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

bool parse_bytes(const std::string& text, uint64_t* bytes) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15 || text.size() > digits + 1) return false;
  uint64_t v = std::stoull(text.substr(0, digits));
  if (digits < text.size()) {
    const char* units = "KMGT";
    const char* u = std::strchr(units, std::toupper(static_cast<unsigned char>(text[digits])));
    if (u == nullptr || *u == '\0') return false;
    for (const char* k = units; k <= u; ++k) {
      if (v > UINT64_MAX / 1024) return false;
      v *= 1024;
    }
  }
  *bytes = v;
  return true;
}

int run_generate_job(const GenerateJobFlags& f) {
#ifndef TSO_HAVE_MPI
  if (launched_by_mpirun() && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr &&
      std::string(std::getenv("OMPI_COMM_WORLD_SIZE")) != "1") {
    std::fprintf(stderr,
                 "tso generate: this tso was built without MPI (TSO_MPI): run it without mpirun, "
                 "or rebuild with Open MPI\n");
    return kExitBadInput;
  }
#endif
  std::unique_ptr<gen::Comm> comm = make_comm();
  const int me = comm->rank();
  gen::JobProgress progress;
  // A failing rank names itself and its stage, then ends the whole job.
  auto fail = [&](const std::string& message, int code) {
    if (comm->size() > 1)
      std::fprintf(stderr, "tso generate: rank %d failed in stage %s: %s\n", me,
                   gen::stage_name(progress.stage.load()), message.c_str());
    else
      std::fprintf(stderr, "tso generate: %s\n", message.c_str());
    comm->abort(code);
  };
  gen::JobOptions opt;
  opt.gen.max_ops = f.max_ops;
  opt.gen.seed = f.seed;
  opt.shards = f.shards;
  opt.work_dir = f.work_dir.empty() ? f.out + ".work" : f.work_dir;
  if (!f.memory_budget.empty() && (!parse_bytes(f.memory_budget, &opt.memory_budget) ||
                                   opt.memory_budget < (uint64_t{1} << 20)))
    fail("--memory-budget must be a size of at least 1M (e.g. 2G), got '" + f.memory_budget + "'",
         kExitBadInput);
  if (f.max_ops < 1 || f.max_ops > gen::kMaxOps)
    fail("--max-ops must be in 1.." + std::to_string(gen::kMaxOps) + ", got " +
             std::to_string(f.max_ops),
         kExitBadInput);
  Expected<gen::OpSet> set = gen::load_op_set(f.ops);
  if (!set)
    fail(set.error().message, std::filesystem::exists(f.ops) ? kExitBadInput : kExitIoError);
  if (me == 0)
    if (Expected<AtomicFile> probe = AtomicFile::create(f.out); !probe)
      fail(probe.error().message, kExitIoError);
  std::optional<tbb::global_control> threads;
  if (f.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, f.threads);

  const auto start = std::chrono::steady_clock::now();
  Reporter reporter(*comm, progress);
  Expected<gen::JobResult> r = Error{""};
  try {
    r = gen::run_job(*set, opt, *comm, &progress);
  } catch (const std::bad_alloc&) {
    fail("out of memory", kExitInternal);
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what(), kExitInternal);
  }
  if (!r)
    fail(r.error().message, progress.stage.load() == static_cast<int>(gen::JobStage::kStart)
                                ? kExitBadInput
                                : kExitIoError);
  if (me == 0) {
    progress.stage = static_cast<int>(gen::JobStage::kWrite);
    Status s = write_file_atomically(f.out, print_rules(r->result.rules));
    if (!s.ok()) fail(s.error().message, kExitIoError);
    progress.stage = static_cast<int>(gen::JobStage::kDone);
  }
  RankSummary mine{memory_mib().second, r->records_owned};
  const std::vector<char> all =
      comm->gather(std::span(reinterpret_cast<const char*>(&mine), sizeof mine), 0);
  reporter.finish();
  if (me != 0) return kExitOk;
  gen::remove_job_files(opt, r->key);

  const gen::GenerateResult& res = r->result;
  std::printf("max-ops %d, seed %llu, ", f.max_ops, static_cast<unsigned long long>(f.seed));
  print_counts(set->name, res.counts, res.rules.rules.size());
  std::printf("seconds:");
  for (size_t i = 0; i < res.seconds.size(); ++i)
    std::printf("%s %s %.1f", i ? "," : "", res.seconds[i].first.c_str(), res.seconds[i].second);
  std::printf(
      "\njob: %d ranks, %d shards (%llu reused), %llu enumeration runs, %llu spilled runs, key %s "
      "in %s\n",
      comm->size(), r->shards, static_cast<unsigned long long>(r->shards_reused),
      static_cast<unsigned long long>(r->enumeration_runs),
      static_cast<unsigned long long>(r->spilled_runs), r->key.c_str(), opt.work_dir.c_str());
  for (size_t i = 0; i * sizeof(RankSummary) < all.size(); ++i) {
    RankSummary s;
    std::memcpy(&s, all.data() + i * sizeof s, sizeof s);
    std::printf("rank %zu: peak RSS %.0f MiB, %llu records owned\n", i, s.peak_rss_mib,
                static_cast<unsigned long long>(s.records_owned));
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("time %.1f s, %u threads per rank, wrote %s\n", secs,
              static_cast<unsigned>(
                  tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)),
              f.out.c_str());
  return kExitOk;
}

}  // namespace tso::cli
