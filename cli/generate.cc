// `tso generate`: runs the substitution generator and writes a rule file.
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/generate_job.h"
#include "cli/table.h"
#include "core/atomic_file.h"
#include "generator/generator.h"
#include "generator/mutants.h"
#include "generator/part_file.h"

namespace tso::cli {

namespace {

struct GenerateFlags {
  int max_ops = 3;
  std::string ops = gen::default_op_set_path();
  uint64_t seed = 1;
  int threads = 0;
  std::string out;
  std::string shard;               // "i/n": write part i of n instead of rules
  std::vector<std::string> merge;  // part files to combine into rules
  bool mutants = false;            // PET's mutants of the op set's multilinear programs
  std::string memory_budget;       // these three (or mpirun) make the run a job: generate_job.h
  int shards = 0;
  std::string work_dir;
};

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

// A progress line on a terminal (stderr), refreshed twice a second; nothing
// when stderr is a file or a pipe.
class ProgressLine {
 public:
  explicit ProgressLine(const gen::EnumProgress& p) : p_(p) {
    if (!isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    std::fprintf(stderr, "\r\033[K");
  }

 private:
  void loop() {
    auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> l(m_);
    while (!cv_.wait_for(l, std::chrono::milliseconds(500), [this] { return stop_; })) {
      uint64_t total = 0;
      int depth = 0;
      for (size_t d = 0; d < p_.graphs.size(); ++d) {
        uint64_t g = p_.graphs[d].load(std::memory_order_relaxed);
        total += g;
        if (g > 0) depth = static_cast<int>(d);
      }
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr,
                   "\r\033[K%llu graphs, %.0f graphs/s, depth %d, branches %llu/%llu, %.0f MiB",
                   static_cast<unsigned long long>(total), total / std::max(s, 1e-3), depth,
                   static_cast<unsigned long long>(p_.branches_done.load()),
                   static_cast<unsigned long long>(p_.branches_total.load()), peak_rss_mib());
    }
  }

  const gen::EnumProgress& p_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// "i/n" with 0 <= i < n.
bool parse_shard(const std::string& text, int* shard, int* num_shards) {
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (i != slash && !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  if (text.size() > 12) return false;
  *shard = std::stoi(text.substr(0, slash));
  *num_shards = std::stoi(text.substr(slash + 1));
  return *shard < *num_shards;
}

// The exit code of writing the output (whole or not at all: core/atomic_file.h).
int written(const Status& s) {
  if (s.ok()) return kExitOk;
  std::fprintf(stderr, "tso generate: %s\n", s.error().message.c_str());
  return kExitIoError;
}

int run_mutants(const GenerateFlags& f) {
  Expected<gen::OpSet> set = gen::load_op_set(f.ops);
  if (!set) {
    std::fprintf(stderr, "tso generate: %s\n", set.error().message.c_str());
    return std::filesystem::exists(f.ops) ? kExitBadInput : kExitIoError;
  }
  gen::MutantOptions opt;
  opt.seed = f.seed;
  auto start = std::chrono::steady_clock::now();
  Expected<gen::MutantResult> r = gen::generate_mutants(*set, opt);
  if (!r) {
    std::fprintf(stderr, "tso generate: %s\n", r.error().message.c_str());
    return kExitBadInput;
  }
  if (int rc = written(write_file_atomically(f.out, print_rules(r->rules))); rc != kExitOk)
    return rc;
  std::printf("mutants of ops %s, seed %llu: %llu source programs\n", set->name.c_str(),
              static_cast<unsigned long long>(f.seed), static_cast<unsigned long long>(r->sources));
  Table t({{"family"},
           {"built", Table::Align::kRight},
           {"duplicates", Table::Align::kRight},
           {"valid", Table::Align::kRight},
           {"exact", Table::Align::kRight},
           {"partial", Table::Align::kRight},
           {"dropped", Table::Align::kRight}});
  for (const gen::FamilyCounts& n : r->families)
    t.add_row({n.family, std::to_string(n.built), std::to_string(n.duplicates),
               std::to_string(n.valid), std::to_string(n.exact), std::to_string(n.partial),
               std::to_string(n.dropped)});
  t.print(std::cout);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rules written %zu, time %.1f s, wrote %s\n", r->rules.rules.size(), secs,
              f.out.c_str());
  return kExitOk;
}

int run_generate(const GenerateFlags& f) {
  if (f.mutants) return run_mutants(f);
  const bool merging = !f.merge.empty();
  if (!merging && f.shard.empty() &&
      (launched_by_mpirun() || !f.memory_budget.empty() || f.shards > 0 || !f.work_dir.empty()))
    return run_generate_job(
        {f.max_ops, f.ops, f.seed, f.threads, f.out, f.memory_budget, f.shards, f.work_dir});
  if (!merging && (f.max_ops < 1 || f.max_ops > gen::kMaxOps)) {
    std::fprintf(stderr, "tso generate: --max-ops must be in 1..%d, got %d\n", gen::kMaxOps,
                 f.max_ops);
    return kExitBadInput;
  }
  gen::GenerateOptions opt;
  opt.max_ops = f.max_ops;
  opt.seed = f.seed;
  if (!f.shard.empty() && !parse_shard(f.shard, &opt.shard, &opt.num_shards)) {
    std::fprintf(stderr, "tso generate: --shard must be i/n with 0 <= i < n, got '%s'\n",
                 f.shard.c_str());
    return kExitBadInput;
  }
  Expected<gen::OpSet> set = gen::load_op_set(f.ops);
  if (!set) {
    std::fprintf(stderr, "tso generate: %s\n", set.error().message.c_str());
    return std::filesystem::exists(f.ops) ? kExitBadInput : kExitIoError;
  }
  // Fail on an unwritable output before the long run, not after it (the
  // probe's temporary goes with it).
  if (Expected<AtomicFile> probe = AtomicFile::create(f.out); !probe) return written(probe.error());
  std::optional<tbb::global_control> threads;
  if (f.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, f.threads);
  double load[1] = {0};
  getloadavg(load, 1);

  auto start = std::chrono::steady_clock::now();
  gen::EnumProgress progress;
  Expected<gen::Part> part = [&]() -> Expected<gen::Part> {
    if (!merging) {
      ProgressLine line(progress);
      return gen::enumerate_part(*set, opt, &progress);
    }
    std::vector<gen::Part> parts;
    for (const std::string& path : f.merge) {
      Expected<gen::Part> p = gen::read_part(path);
      if (!p) return p.error();
      parts.push_back(std::move(*p));
    }
    return gen::merge_parts(std::move(parts));
  }();
  if (!part) {
    std::fprintf(stderr, "tso generate: %s\n", part.error().message.c_str());
    return kExitBadInput;
  }
  const double enum_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int max_ops = part->max_ops;
  const uint64_t seed = part->seed;
  int rc = kExitOk;
  if (opt.num_shards > 1) {
    gen::GenerateCounts n;
    n.not_first_use = part->not_first_use;
    n.graphs = part->records.size();
    n.graphs_by_ops = part->graphs_by_ops;
    rc = written(gen::write_part(*part, f.out));
    if (rc != kExitOk) return rc;
    std::printf("part %d/%d of ops %s, max-ops %d, seed %llu\n", opt.shard, opt.num_shards,
                set->name.c_str(), max_ops, static_cast<unsigned long long>(seed));
    std::printf("not first-use order %llu\ngraphs enumerated   %llu\n",
                static_cast<unsigned long long>(n.not_first_use),
                static_cast<unsigned long long>(n.graphs));
  } else {
    Expected<gen::GenerateResult> r = gen::rules_from(*set, std::move(*part));
    if (!r) {
      std::fprintf(stderr, "tso generate: %s\n", r.error().message.c_str());
      return kExitBadInput;
    }
    rc = written(write_file_atomically(f.out, print_rules(r->rules)));
    if (rc != kExitOk) return rc;
    std::printf("max-ops %d, seed %llu, ", max_ops, static_cast<unsigned long long>(seed));
    print_counts(set->name, r->counts, r->rules.rules.size());
    std::printf("seconds: %s %.1f", merging ? "read and merge parts" : "enumerate", enum_secs);
    for (const auto& [step, secs] : r->seconds) std::printf(", %s %.1f", step.c_str(), secs);
    std::printf("\n");
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("time %.1f s, peak RSS %.0f MiB, %u threads, load average %.2f at start, wrote %s\n",
              secs, peak_rss_mib(),
              static_cast<unsigned>(
                  tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)),
              load[0], f.out.c_str());
  return kExitOk;
}

}  // namespace

void print_counts(const std::string& ops, const gen::GenerateCounts& n, size_t written) {
  auto row = [](const char* what, uint64_t v) {
    std::printf("%-20s%llu\n", what, static_cast<unsigned long long>(v));
  };
  std::printf("ops %s\n", ops.c_str());
  row("not first-use order", n.not_first_use);
  std::printf("graphs enumerated   %llu (", static_cast<unsigned long long>(n.graphs));
  for (size_t d = 0; d < n.graphs_by_ops.size(); ++d)
    std::printf("%s%zu ops: %llu", d ? ", " : "", d,
                static_cast<unsigned long long>(n.graphs_by_ops[d]));
  std::printf(")\n");
  row("fingerprints", n.fingerprints);
  row("candidate pairs", n.candidates);
  row("common subgraph", n.common);
  row("values agree", n.values);
  row("renaming", n.renaming);
  row("bindable", n.bindable);
  row("independent parts", n.independent);
  row("double re-test", n.float_ok);
  row("implied", n.implied);
  row("rules written", written);
}

Command add_generate(CLI::App& tso) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* app = tso.add_subcommand(
      "generate", "Enumerate small graphs, fingerprint them and write candidate substitutions");
  app->add_option("--max-ops", flags->max_ops, "Largest graph, in operators (1..6)")
      ->capture_default_str();
  app->add_option("--ops", flags->ops, "Operator-set file (grammar in generator/README.md)")
      ->capture_default_str();
  app->add_option("--seed", flags->seed, "Seed of the random fingerprint inputs")
      ->capture_default_str();
  app->add_option("--threads", flags->threads, "Worker threads (0: all cores); output is the same");
  CLI::Option* shard =
      app->add_option("--shard", flags->shard,
                      "Enumerate part i of n (split by first operators); -o gets a part file");
  CLI::Option* merge = app->add_option(
      "--merge", flags->merge, "Combine the part files of --shard 0/n..n-1/n into the rule file");
  merge->excludes(shard);
  CLI::Option* mutants = app->add_flag(
      "--mutants", flags->mutants,
      "Write PET's partially equivalent mutants of the op set's conv2d/matmul programs instead");
  mutants->excludes(shard)->excludes(merge);
  CLI::Option* budget = app->add_option(
      "--memory-budget", flags->memory_budget,
      "Bytes of records per process (e.g. 2G): beyond it they go to sorted runs on disk");
  CLI::Option* shards = app->add_option(
      "--shards", flags->shards,
      "Split the job into S shards of first operators, each checkpointed (default: one per rank)");
  CLI::Option* work_dir = app->add_option(
      "--work-dir", flags->work_dir,
      "Where a job keeps its checkpoints and runs (default: OUTPUT.work); a rerun reuses them");
  for (CLI::Option* o : {budget, shards, work_dir})
    o->excludes(shard)->excludes(merge)->excludes(mutants);
  for (CLI::Option* o : app->get_options())
    if (o->get_name() == "--max-ops" || o->get_name() == "--seed") merge->excludes(o);
  app->add_option("-o,--output", flags->out, "Rule file (or part file with --shard) to write")
      ->required();
  return {app, [flags] { return run_generate(*flags); }};
}

}  // namespace tso::cli
