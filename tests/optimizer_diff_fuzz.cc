// optimizer_diff_fuzz: the optimizer's differential fuzzer (optimizer_diff.h)
// over the seeds --seed S .. S+N-1 (--count N). Every mismatch is printed
// with its seed and the command that reproduces it; the summary gives the
// graphs compared, the rewrites fired (by kind and by rule file) and the
// mismatches by stage. Exit 0: no mismatch and at least --min-rewrites
// rewrites per graph on average (search and walk together); 1: otherwise;
// 2: bad flags or files.
//
//   build/tests/optimizer_diff_fuzz --seed 1 --count 10000 --progress 500
//   build/tests/optimizer_diff_fuzz --seed 4242 --count 1 --print
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "optimizer/defaults.h"
#include "tests/optimizer_diff.h"

namespace {

using tso::fuzz::DiffOutcome;
using tso::fuzz::Fired;
using tso::opt::kNumRewriteKinds;

struct Flags {
  uint64_t seed = 1;
  int64_t count = 1;
  int64_t progress = 0;  // graphs between progress lines on stderr (0: none)
  double min_rewrites = 0;
  bool print = false;
  bool cpu = true;
  std::vector<std::string> rules;
  std::string device = tso::opt::default_device_path();
  std::string replay;  // the flags above that a reproducing command repeats
};

int usage(const char* argv0, const std::string& why) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s [--seed S] [--count N] [--progress K] [--min-rewrites R] "
               "[--print] [--no-cpu] [--rules FILE]... [--device FILE]\n",
               argv0, why.c_str(), argv0);
  return 2;
}

bool parse_number(const char* text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text, &end);
  return end != text && *end == '\0' && *out >= 0;
}

// Applications of rewrites, by kind and by rule file.
struct Tally {
  int64_t total = 0, graphs_with_one = 0;
  std::array<int64_t, kNumRewriteKinds> kinds{};
  std::map<std::string, int64_t> files;
  std::set<std::string> rules;

  void add(const std::vector<Fired>& fired) {
    total += static_cast<int64_t>(fired.size());
    graphs_with_one += !fired.empty();
    for (const Fired& f : fired) {
      ++kinds[static_cast<int>(f.kind)];
      ++files[f.file];
      rules.insert(f.rule);
    }
  }
  void print(const char* what, int64_t graphs) const {
    std::printf(
        "  %-7s %lld (%.2f per graph, %lld distinct rules; %.1f%% of graphs at least one)\n", what,
        static_cast<long long>(total), static_cast<double>(total) / graphs,
        static_cast<long long>(rules.size()),
        100.0 * static_cast<double>(graphs_with_one) / graphs);
    std::printf("          by kind:");
    for (int k = 0; k < kNumRewriteKinds; ++k)
      std::printf(
          "%s %s %lld", k ? "," : "",
          std::string(tso::opt::rewrite_kind_name(static_cast<tso::opt::RewriteKind>(k))).c_str(),
          static_cast<long long>(kinds[k]));
    std::printf("\n          by file:");
    const char* sep = "";
    for (const auto& [file, n] : files) {
      std::printf("%s %s %lld", sep, file.c_str(), static_cast<long long>(n));
      sep = ",";
    }
    std::printf("\n");
  }
};

std::string rule_list(const std::vector<Fired>& fired) {
  std::string s;
  for (const Fired& f : fired) s += (s.empty() ? "" : ", ") + f.rule;
  return s.empty() ? "none" : s;
}

void print_graphs(const DiffOutcome& o) {
  std::printf(
      "original:\n%s\nsearch applied: %s\nsearched:\n%s\nfolded:\n%s\n"
      "walk applied: %s\nwalked:\n%s\n",
      o.original.c_str(), rule_list(o.searched).c_str(), o.searched_graph.c_str(),
      o.optimized.c_str(), rule_list(o.walked).c_str(), o.walk.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    double v = 0;
    bool has_value = i + 1 < argc;
    if (a == "--print") {
      f.print = true;
    } else if (a == "--no-cpu") {
      f.cpu = false;
      f.replay += " --no-cpu";
    } else if (a == "--rules" && has_value) {
      f.rules.push_back(argv[++i]);
      f.replay += " --rules " + f.rules.back();
    } else if (a == "--device" && has_value) {
      f.device = argv[++i];
      f.replay += " --device " + f.device;
    } else if ((a == "--seed" || a == "--count" || a == "--progress" || a == "--min-rewrites") &&
               has_value) {
      if (!parse_number(argv[++i], &v)) return usage(argv[0], a + " wants a number >= 0");
      if (a == "--seed") f.seed = static_cast<uint64_t>(v);
      if (a == "--count") f.count = static_cast<int64_t>(v);
      if (a == "--progress") f.progress = static_cast<int64_t>(v);
      if (a == "--min-rewrites") f.min_rewrites = v;
    } else {
      return usage(argv[0], "unknown flag or missing value: " + a);
    }
  }
  if (f.count < 1) return usage(argv[0], "--count must be at least 1");
  if (f.rules.empty()) f.rules = tso::opt::default_rule_files();

  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  tso::fuzz::DiffOptions options;
  options.cpu = f.cpu;
  auto diff = tso::fuzz::OptimizerDiff::create(f.rules, f.device, options);
  if (!diff) {
    std::fprintf(stderr, "%s: %s\n", argv[0], diff.error().message.c_str());
    return 2;
  }
  std::fprintf(stderr, "optimizer_diff_fuzz: %d compiled rules from %zu files, loaded in %.1f s\n",
               (*diff)->compiled_rules(), f.rules.size(), seconds());

  Tally searched, walked;
  int64_t operators = 0, mismatched_graphs = 0;
  std::map<std::string, int64_t> mismatches;
  for (int64_t i = 0; i < f.count; ++i) {
    uint64_t seed = f.seed + static_cast<uint64_t>(i);
    DiffOutcome o = (*diff)->run(seed);
    operators += o.operators;
    searched.add(o.searched);
    walked.add(o.walked);
    for (const tso::fuzz::Mismatch& m : o.mismatches) {
      ++mismatches[m.stage];
      std::printf("MISMATCH seed %llu (%s): %s\n", static_cast<unsigned long long>(seed),
                  m.stage.c_str(), m.detail.c_str());
    }
    if (!o.mismatches.empty()) {
      ++mismatched_graphs;
      std::printf(
          "  search applied: %s\n  walk applied: %s\n  reproduce: %s --seed %llu --count 1%s "
          "--print\n",
          rule_list(o.searched).c_str(), rule_list(o.walked).c_str(), argv[0],
          static_cast<unsigned long long>(seed), f.replay.c_str());
    }
    if (f.print) print_graphs(o);
    if (f.progress > 0 && (i + 1) % f.progress == 0)
      std::fprintf(stderr, "%lld graphs, %lld + %lld rewrites, %lld mismatching, %.0f s\n",
                   static_cast<long long>(i + 1), static_cast<long long>(searched.total),
                   static_cast<long long>(walked.total), static_cast<long long>(mismatched_graphs),
                   seconds());
    std::fflush(stdout);
  }

  double per_graph = static_cast<double>(searched.total + walked.total) / f.count;
  std::printf("graphs            %lld (seeds %llu..%llu), %.1f operators on average\n",
              static_cast<long long>(f.count), static_cast<unsigned long long>(f.seed),
              static_cast<unsigned long long>(f.seed + f.count - 1),
              static_cast<double>(operators) / f.count);
  std::printf("rewrites fired\n");
  searched.print("search", f.count);
  walked.print("walk", f.count);
  std::printf("mismatches        %lld graphs", static_cast<long long>(mismatched_graphs));
  for (const auto& [stage, n] : mismatches)
    std::printf(", %s %lld", stage.c_str(), static_cast<long long>(n));
  std::printf("\ntime              %.1f s\n", seconds());
  if (per_graph < f.min_rewrites) {
    std::printf("FAIL: %.2f rewrites per graph, below --min-rewrites %.2f\n", per_graph,
                f.min_rewrites);
    return 1;
  }
  return mismatched_graphs == 0 ? 0 : 1;
}
