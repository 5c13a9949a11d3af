// `tso verify IN.rules -o OUT.rules`: proves every rule of a rule file with
// Z3 against the operator specifications and writes the file back with each
// status filled in (verified, refuted or unknown) and a header line counting
// them; `tso verify --regions` decides them with the region check of partial
// equivalence instead (exact, or partial with a correction); `tso verify
// --check-specs` tests every axiom on the reference executor.
#include "verifier/verify.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/table.h"
#include "core/atomic_file.h"
#include "specs/specs.h"
#include "substitutions/rules.h"
#include "verifier/axiom_check.h"
#include "verifier/rule_regions.h"

namespace tso::cli {
namespace {

struct VerifyFlags {
  std::string in, out, specs_dir = specs::default_specs_dir();
  std::string timings;  // CSV of each rule's status and time
  unsigned timeout_ms = 10000;
  int jobs = 2;
  bool check_specs = false;
  bool regions = false;
  int tests = 2;
};

int check_specs(const VerifyFlags& f, const specs::SpecSource& src) {
  z3::context ctx;
  specs::OpFunctions fns(ctx);
  Expected<std::vector<specs::Axiom>> axioms = specs::parse_axioms(src, fns);
  if (!axioms) {
    std::cerr << "tso verify: " << axioms.error().message << "\n";
    return kExitBadInput;
  }
  std::vector<verifier::AxiomTestResult> results = verifier::check_axioms(*axioms, fns);
  int failed = 0;
  Table t({{"axiom"}, {"test"}, {"rel. error", Table::Align::kRight}, {"result"}});
  for (const auto& r : results) {
    failed += !r.passed;
    char err[32];
    std::snprintf(err, sizeof err, "%.1e", r.error);
    t.add_row({r.axiom, r.where, r.passed || r.error > 0 ? err : "-",
               r.passed ? "ok" : "FAIL: " + r.message});
  }
  t.print(std::cout);
  std::cout << "\n"
            << axioms->size() << " axioms, " << results.size() << " tests, " << failed
            << " failed (specs " << src.hash << ", " << f.specs_dir << ")\n";
  if (failed) std::cerr << "tso verify: " << failed << " axiom tests failed\n";
  return failed ? kExitBadInput : kExitOk;
}

// The header's `counts:` line (the generator writes one) gets the verifier's
// counts appended, replacing earlier ones; a file without one gets one.
void record_counts(std::vector<std::string>* header, int verified, int refuted, int unknown) {
  std::string counts = "verified=" + std::to_string(verified) +
                       " refuted=" + std::to_string(refuted) +
                       " unknown=" + std::to_string(unknown);
  for (std::string& line : *header) {
    if (!line.starts_with("counts:")) continue;
    std::istringstream words(line.substr(7));
    std::string kept = "counts:", w;
    while (words >> w)
      if (!w.starts_with("verified=") && !w.starts_with("refuted=") && !w.starts_with("unknown="))
        kept += " " + w;
    line = kept + " " + counts;
    return;
  }
  header->push_back("counts: " + counts);
}

// The header's `regions:` line, replacing an earlier one.
void record_region_counts(std::vector<std::string>* header, int exact, int partial, int unknown,
                          int tests, double bound) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1e", bound);
  std::string line = "regions: exact=" + std::to_string(exact) +
                     " partial=" + std::to_string(partial) + " unknown=" + std::to_string(unknown) +
                     " tests=" + std::to_string(tests) + " false-equal-per-box<=" + b;
  for (std::string& l : *header)
    if (l.starts_with("regions:")) {
      l = line;
      return;
    }
  header->push_back(line);
}

// Every rule but those Z3 proved is decided again by the region check:
// exact, partial (with its correction) or unknown (why the region check
// cannot decide it).
int verify_regions(const VerifyFlags& f, RuleSet* set) {
  using K = RuleStatus::Kind;
  auto start = std::chrono::steady_clock::now();
  int exact = 0, partial = 0, unknown = 0;
  int64_t boxes = 0;
  double bound = 0;  // the largest chance, over the rules, that a wrong box passed
  for (size_t i = 0; i < set->rules.size(); ++i) {
    Rule& r = set->rules[i];
    if (r.status.kind != K::kVerified) {
      verifier::RegionOptions o;
      o.tests = f.tests;
      double b = 0;
      Expected<Rule> d = verifier::decide_rule(r, o, &b);
      bound = std::max(bound, b);
      if (d) {
        r = std::move(*d);
      } else {
        r.status = {K::kUnknown, d.error().message};
        r.correction = {};
      }
    }
    exact += r.status.kind == K::kExact;
    partial += r.status.kind == K::kPartial;
    unknown += r.status.kind == K::kUnknown;
    if (r.status.kind == K::kExact || r.status.kind == K::kPartial)
      boxes += std::stoll(r.status.detail);
    std::size_t done = i + 1;
    if (done % 50 == 0 || done == set->rules.size())
      std::fprintf(stderr, "[%zu/%zu] exact %d, partial %d, unknown %d\n", done, set->rules.size(),
                   exact, partial, unknown);
  }
  record_region_counts(&set->header, exact, partial, unknown, f.tests, bound);
  if (Status s = write_file_atomically(f.out, print_rules(*set)); !s) {
    std::cerr << "tso verify: " << s.error().message << "\n";
    return kExitIoError;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int n = static_cast<int>(set->rules.size());
  Table t({{"status"}, {"rules", Table::Align::kRight}});
  t.add_row({"exact", std::to_string(exact)});
  t.add_row({"partial (with correction)", std::to_string(partial)});
  t.add_row({"unknown", std::to_string(unknown)});
  t.add_row({"total", std::to_string(n)});
  t.print(std::cout);
  char b[32];
  std::snprintf(b, sizeof b, "%.1e", bound);
  std::cout << "\n"
            << boxes << " boxes decided on " << f.tests << " random inputs each in "
            << fixed(wall, 2) << " s (a wrong box passes with probability at most " << b
            << "); wrote " << f.out << "\n";
  return kExitOk;
}

void show_progress(const verifier::VerifyProgress& p) {
  static const bool tty = ::isatty(STDERR_FILENO);
  int step = std::max(1, p.total / 20);
  if (!tty && p.done % step != 0 && p.done != p.total) return;
  std::fprintf(stderr, "%s[%d/%d] verified %d, refuted %d, unknown %d%s", tty ? "\r" : "", p.done,
               p.total, p.verified, p.refuted, p.unknown, tty && p.done != p.total ? "" : "\n");
}

int verify(const VerifyFlags& f) {
  Expected<specs::SpecSource> src = specs::read_specs(f.specs_dir);
  if (!src) {
    std::cerr << "tso verify: " << src.error().message << "\n";
    return kExitIoError;
  }
  if (f.check_specs) return check_specs(f, *src);
  if (f.in.empty() || f.out.empty()) {
    std::cerr << "tso verify: give IN.rules and -o OUT.rules (or --check-specs)\n";
    return kExitBadInput;
  }
  std::ifstream in(f.in, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::cerr << "tso verify: " << f.in << ": cannot read\n";
    return kExitIoError;
  }
  Expected<RuleSet> set = parse_rules(text.str(), f.in);
  if (!set) {
    std::cerr << "tso verify: " << set.error().message << "\n";
    return kExitBadInput;
  }
  if (f.regions) return verify_regions(f, &*set);
  auto start = std::chrono::steady_clock::now();
  Expected<std::vector<verifier::RuleOutcome>> outcomes =
      verifier::verify_rules(set->rules, *src, {f.timeout_ms, f.jobs}, show_progress);
  if (!outcomes) {
    std::cerr << "tso verify: " << f.in << ": " << outcomes.error().message << "\n";
    return kExitBadInput;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int counts[6] = {};  // per RuleStatus::Kind
  std::vector<double> ms;
  for (size_t i = 0; i < outcomes->size(); ++i) {
    set->rules[i].status = (*outcomes)[i].status;
    ++counts[static_cast<int>((*outcomes)[i].status.kind)];
    ms.push_back((*outcomes)[i].ms);
  }
  using K = RuleStatus::Kind;
  if (!f.timings.empty()) {
    std::string csv = "rule,status,ms\n";
    for (size_t i = 0; i < outcomes->size(); ++i)
      csv += set->rules[i].name + "," + status_name((*outcomes)[i].status.kind) + "," +
             fixed((*outcomes)[i].ms, 1) + "\n";
    if (Status s = write_file_atomically(f.timings, csv); !s) {
      std::cerr << "tso verify: " << s.error().message << "\n";
      return kExitIoError;
    }
  }
  record_counts(&set->header, counts[int(K::kVerified)], counts[int(K::kRefuted)],
                counts[int(K::kUnknown)]);
  if (Status s = write_file_atomically(f.out, print_rules(*set)); !s) {
    std::cerr << "tso verify: " << s.error().message << "\n";
    return kExitIoError;
  }
  std::sort(ms.begin(), ms.end());
  double median = ms.empty() ? 0 : ms[ms.size() / 2];
  int n = static_cast<int>(ms.size());
  auto share = [&](int c) { return n ? fixed(100.0 * c / n, 1) + "%" : "-"; };
  Table t({{"status"}, {"rules", Table::Align::kRight}, {"share", Table::Align::kRight}});
  t.add_row(
      {"verified", std::to_string(counts[int(K::kVerified)]), share(counts[int(K::kVerified)])});
  t.add_row({"refuted", std::to_string(counts[int(K::kRefuted)]), share(counts[int(K::kRefuted)])});
  t.add_row({"unknown", std::to_string(counts[int(K::kUnknown)]), share(counts[int(K::kUnknown)])});
  if (int kept = counts[int(K::kPartial)] + counts[int(K::kExact)])
    t.add_row({"exact or partial (kept)", std::to_string(kept), share(kept)});
  t.add_row({"total", std::to_string(n), n ? "100.0%" : "-"});
  t.print(std::cout);
  std::cout << "\nmedian " << fixed(median, 1) << " ms per rule, " << fixed(wall, 1)
            << " s wall with " << f.jobs << " jobs, timeout " << f.timeout_ms << " ms; specs "
            << src->hash << "; wrote " << f.out << "\n";
  return kExitOk;
}

}  // namespace

Command add_verify(CLI::App& tso) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* app = tso.add_subcommand(
      "verify", "Prove the rules of a rule file with Z3, or test the specifications");
  app->add_option("IN", flags->in, "rule file to verify")->check(CLI::ExistingFile);
  app->add_option("-o,--output", flags->out, "where to write the rules with their statuses");
  app->add_option("--timeout-ms", flags->timeout_ms, "Z3 time limit per rule (unknown past it)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_option("--jobs", flags->jobs, "rules proved in parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app->add_option("--timings", flags->timings,
                  "write each rule's status and proof time in milliseconds (CSV: rule,status,ms)");
  app->add_option("--specs", flags->specs_dir, "folder of *.smt2 axiom files")
      ->capture_default_str();
  app->add_flag("--regions", flags->regions,
                "decide the rules with the region check of partial equivalence (exact, or "
                "partial with a correction) instead of Z3");
  app->add_option("--tests", flags->tests, "--regions: random inputs per box")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  app->add_flag("--check-specs", flags->check_specs,
                "test every axiom on the reference executor at its test shapes instead");
  return {app, [flags] { return verify(*flags); }};
}

}  // namespace tso::cli
