// `tso generate`: runs the substitution generator and writes a rule file.
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "generator/generator.h"

namespace tso::cli {

namespace {

struct GenerateFlags {
  int max_ops = 3;
  std::string ops = "generator/taso.ops";
  uint64_t seed = 1;
  int threads = 0;
  std::string out;
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
      std::fprintf(stderr, "\r\033[K%llu graphs, %.0f graphs/s, depth %d, branches %llu/%llu, %.0f MiB",
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

int run_generate(const GenerateFlags& f) {
  if (f.max_ops < 1 || f.max_ops > gen::kMaxOps) {
    std::fprintf(stderr, "tso generate: --max-ops must be in 1..%d, got %d\n", gen::kMaxOps,
                 f.max_ops);
    return kExitBadInput;
  }
  Expected<gen::OpSet> set = gen::load_op_set(f.ops);
  if (!set) {
    std::fprintf(stderr, "tso generate: %s\n", set.error().message.c_str());
    return std::filesystem::exists(f.ops) ? kExitBadInput : kExitIoError;
  }
  // Fail on an unwritable output before the long run, not after it.
  const std::string tmp = f.out + ".tmp";
  {
    std::ofstream probe(tmp);
    if (!probe) {
      std::fprintf(stderr, "tso generate: %s: cannot write\n", f.out.c_str());
      return kExitIoError;
    }
  }
  std::optional<tbb::global_control> threads;
  if (f.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, f.threads);

  auto start = std::chrono::steady_clock::now();
  gen::EnumProgress progress;
  gen::GenerateOptions opt;
  opt.max_ops = f.max_ops;
  opt.seed = f.seed;
  Expected<gen::GenerateResult> r = [&] {
    ProgressLine line(progress);
    return gen::generate(*set, opt, &progress);
  }();
  if (!r) {
    std::filesystem::remove(tmp);
    std::fprintf(stderr, "tso generate: %s\n", r.error().message.c_str());
    return kExitBadInput;
  }
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << print_rules(r->rules);
    if (!out.flush()) {
      std::filesystem::remove(tmp);
      std::fprintf(stderr, "tso generate: %s: write failed\n", f.out.c_str());
      return kExitIoError;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, f.out, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    std::fprintf(stderr, "tso generate: %s: %s\n", f.out.c_str(), ec.message().c_str());
    return kExitIoError;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const gen::GenerateCounts& n = r->counts;
  std::printf("ops %s, max-ops %d, seed %llu\n", set->name.c_str(), f.max_ops,
              static_cast<unsigned long long>(f.seed));
  std::printf("graphs enumerated   %llu (", static_cast<unsigned long long>(n.graphs));
  for (size_t d = 0; d < n.graphs_by_ops.size(); ++d)
    std::printf("%s%zu ops: %llu", d ? ", " : "", d,
                static_cast<unsigned long long>(n.graphs_by_ops[d]));
  std::printf(")\n");
  auto row = [](const char* what, uint64_t v) {
    std::printf("%-20s%llu\n", what, static_cast<unsigned long long>(v));
  };
  row("fingerprints", n.fingerprints);
  row("candidate pairs", n.candidates);
  row("common subgraph", n.common);
  row("values agree", n.values);
  row("renaming", n.renaming);
  row("bindable", n.bindable);
  row("double re-test", n.float_ok);
  row("implied", n.implied);
  row("rules written", r->rules.rules.size());
  std::printf("time %.1f s, peak RSS %.0f MiB, wrote %s\n", secs, peak_rss_mib(), f.out.c_str());
  return kExitOk;
}

}  // namespace

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
  app->add_option("-o,--output", flags->out, "Rule file to write")->required();
  return {app, [flags] { return run_generate(*flags); }};
}

}  // namespace tso::cli
