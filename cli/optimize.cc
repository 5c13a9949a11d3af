// `tso optimize MODEL -o OUT`: loads a model (ONNX, or the canonical text
// format), searches for a cheaper equivalent graph with the verified rules,
// folds weights, checks the result numerically against the input, times both
// on the target's runtime (cli/cost_target.h) and writes the faster (ONNX out for ONNX in) with an
// optional report. Nothing is written when any step fails; the input file is
// never touched.
#include "optimizer/optimize.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/cost_target.h"
#include "cli/model_file.h"
#include "core/atomic_file.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/signature_models.h"
#include "optimizer/cost_cache.h"
#include "optimizer/defaults.h"
#include "optimizer/report.h"

namespace tso::cli {
namespace {

// The numerical check found a difference: a failure of the optimizer, not of
// the user's input or the file system.
constexpr int kExitCheckFailed = 3;

struct OptimizeFlags {
  ModelFileOptions model;
  std::string output;
  std::vector<std::string> rules;
  double alpha = 1.05;
  int64_t budget = 1000;
  int64_t stall = opt::SearchOptions{}.stall_expansions;
  double lookahead = opt::LookaheadOptions{}.bound;
  int64_t lookahead_budget = opt::LookaheadOptions{}.budget;
  double time_limit = 60;
  std::string cost;
  std::string device;
  std::string cost_cache;
  std::string missing_costs;
  std::string report;
  bool allow_unverified = false;
  int check_runs = 2;
  bool quiet = false;
  bool no_verify_speed = false;
};

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "tso optimize: %s\n", message.c_str());
  return code;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// Saves the cache when the run ends and says what was measured and found.
struct CostCacheSaver {
  const opt::CachedCost* cache = nullptr;
  ~CostCacheSaver() {
    if (!cache) return;
    if (Status s = cache->save(); !s.ok())
      std::fprintf(stderr, "tso optimize: warning: %s\n", s.error().message.c_str());
    std::fprintf(stderr,
                 "cost cache      %s: %d signatures measured, %d found in the cache, %zu not "
                 "measurable (analytic)\n",
                 cache->path().c_str(), cache->measured(), cache->found(), cache->failed().size());
  }
};

int run_optimize(const OptimizeFlags& f) {
  namespace fs = std::filesystem;
  if (same_file(f.model.file, f.output))
    return fail(kExitBadInput, "the output " + f.output + " is the input file; choose another");
  std::string report_ext = fs::path(f.report).extension().string();
  if (!f.report.empty() && report_ext != ".md" && report_ext != ".json")
    return fail(kExitBadInput, "--report " + f.report + ": the name must end in .md or .json");
  if (same_file(f.model.file, f.report) && !f.report.empty())
    return fail(kExitBadInput, "the report " + f.report + " is the input file");
  if (!f.missing_costs.empty() && f.cost.empty())
    return fail(kExitBadInput,
                "--missing-costs needs --cost TABLE: it writes what the table lacks");

  // Rules: every file is read and parsed before the model is touched.
  std::vector<std::string> rule_files = f.rules.empty() ? opt::default_rule_files() : f.rules;
  if (rule_files.empty())
    return fail(kExitIoError, "no rule files in " + opt::default_rules_dir() + "; give --rules");
  std::vector<RuleSet> sets;
  for (const std::string& path : rule_files) {
    std::optional<std::string> text = read_file(path);
    if (!text) return fail(kExitIoError, "cannot read rule file " + path);
    Expected<RuleSet> s = parse_rules(*text, path);
    if (!s) return fail(kExitBadInput, s.error().message);
    sets.push_back(std::move(*s));
  }
  opt::RuleIndex rules;
  for (const RuleSet& s : sets) rules.add(s, {.allow_unverified = f.allow_unverified});
  // Refuted rules in the shipped files are the verifier's record and are
  // simply skipped (listed in the report); a file the user names is told.
  for (size_t i = 0; i < sets.size() && !f.allow_unverified && !f.rules.empty(); ++i) {
    int refuted = 0;
    for (const Rule& r : sets[i].rules) refuted += r.status.kind == RuleStatus::Kind::kRefuted;
    if (refuted > 0)
      std::fprintf(stderr,
                   "tso optimize: %s: refusing %d refuted rule%s (not equivalences; listed in "
                   "the report)\n",
                   rule_files[i].c_str(), refuted, refuted == 1 ? "" : "s");
  }
  if (rules.rules().empty())
    std::fprintf(stderr,
                 "tso optimize: warning: no usable rule (%zu skipped: not verified or not "
                 "compilable); the model is only folded and checked\n",
                 rules.skipped().size());

  // The target: its cost model, and the runtime that times the result.
  Expected<std::unique_ptr<CostTarget>> target = open_cost_target({f.device, f.cost, f.cost_cache});
  if (!target) return fail(kExitBadInput, target.error().message);
  const opt::CostModel* model = (*target)->model;
  opt::CachedCost* cached = (*target)->cache.get();
  if (cached && !f.quiet)
    cached->set_progress([](int n, double seconds, const std::string& sig) {
      if (n % 25 == 0)
        std::fprintf(stderr, "measuring: %d signatures in %.1f s, the last %.80s\n", n, seconds,
                     sig.c_str());
    });
  // Written at the end, however the run ends: what was measured is kept.
  CostCacheSaver saver{cached};

  int code = kExitOk;
  std::optional<ModelFile> file = load_model_file(f.model, "optimize", &code);
  if (!file) return code;

  opt::OptimizeOptions options;
  options.search.alpha = f.alpha;
  options.search.max_expansions = f.budget;
  options.search.time_limit_s = f.time_limit;
  options.search.stall_expansions = f.stall;
  options.search.lookahead.bound = f.lookahead;
  options.search.lookahead.budget = f.lookahead_budget;
  options.check.runs = f.check_runs;
  if (!f.quiet)
    options.search.progress = [](const opt::SearchProgress& p) {
      std::fprintf(stderr, "search: %lld expansions, %lld queued, best %.2f us, %.2f s\n",
                   static_cast<long long>(p.expansions), static_cast<long long>(p.queued),
                   p.best_cost, p.seconds);
    };
  Expected<opt::OptimizeResult> r = opt::optimize(file->graph, rules, *model, options);
  if (!r) {
    bool check = r.error().message.rfind("numerical check failed", 0) == 0;
    return fail(check ? kExitCheckFailed : kExitBadInput,
                f.model.file + ": " + r.error().message + "; nothing written");
  }
  if (!f.missing_costs.empty()) {
    Expected<SignatureModels> m =
        write_signature_models((*target)->table->missed(), f.missing_costs,
                               file->is_onnx ? file->onnx.info : OnnxModelInfo{}, 1);
    if (!m) return fail(kExitIoError, m.error().message + "; nothing written");
    std::printf("missing costs   %d signatures written to %s, %zu not exportable (listed there)\n",
                m->written, f.missing_costs.c_str(), m->not_exported.size());
  }

  // Never slower: the optimized graph is written only if it measures no
  // slower than the input on the runtime (--no-verify-speed: always).
  opt::SpeedCheck speed;
  speed.note = "--no-verify-speed";
  if (!f.no_verify_speed) speed = check_speed(**target, file->graph, *r, f.quiet);
  const Graph& written = speed.kept_input ? file->graph : r->graph;

  // Write the model, then the report. A kept input is the user's own file,
  // byte for byte, where that file is complete and its external data (if
  // any) resolves beside the output as beside the input.
  const bool copy_input = speed.kept_input && !f.model.random_weights_seed &&
                          fs::weakly_canonical(fs::path(f.model.file)).parent_path() ==
                              fs::weakly_canonical(fs::path(f.output)).parent_path();
  if (copy_input) {
    std::optional<std::string> bytes = read_file(f.model.file);
    if (!bytes) return fail(kExitIoError, "cannot read " + f.model.file);
    if (Status s = write_file_atomically(f.output, *bytes); !s.ok())
      return fail(kExitIoError, s.error().message);
  } else if (file->is_onnx) {
    Status s = export_onnx(written, file->onnx.info, f.output);
    if (!s.ok()) return fail(kExitIoError, s.error().message);
  } else if (Status s = write_file_atomically(f.output, print(written)); !s.ok()) {
    return fail(kExitIoError, s.error().message);
  }
  opt::ReportContext ctx;
  ctx.model = f.model.file;
  ctx.rule_files = rule_files;
  ctx.rules_used = static_cast<int>(rules.rules().size());
  ctx.rules_reversed = rules.reversed_count();
  ctx.not_reversed = static_cast<int>(rules.not_reversed().size());
  ctx.skipped = rules.skipped();
  ctx.cost_model = model->describe();
  ctx.alpha = f.alpha;
  ctx.budget = f.budget;
  ctx.time_limit_s = f.time_limit;
  ctx.lookahead = options.search.lookahead;
  ctx.tolerance = options.check.tolerance;
  ctx.rewrite_kinds = opt::count_rewrite_kinds(r->search.applied, rules);
  ctx.speed = speed;
  if (!f.report.empty()) {
    std::string text =
        report_ext == ".json" ? opt::report_json(*r, ctx) : opt::report_markdown(*r, ctx);
    if (Status s = write_file_atomically(f.report, text); !s.ok())
      return fail(kExitIoError, s.error().message);
  }
  const opt::SearchResult& sr = r->search;
  std::printf("%s -> %s\n", f.model.file.c_str(), f.output.c_str());
  std::printf("operators       %d -> %d\n", r->operators_before, r->operators_after);
  std::printf("predicted cost  %.2f us -> %.2f us (%s)\n", r->cost_before, r->cost_after,
              model->describe().c_str());
  std::printf(
      "search          %.3f s (%.3f s of it measuring costs), %lld expansions, "
      "stopped: %s\n",
      sr.seconds, sr.measuring_seconds, static_cast<long long>(sr.expansions),
      opt::stop_reason_name(sr.stop));
  std::printf("lookahead       %lld of %lld found a cheaper graph, %lld graphs expanded\n",
              static_cast<long long>(sr.lookahead_found), static_cast<long long>(sr.lookaheads),
              static_cast<long long>(sr.lookahead_expansions));
  if (r->checked)
    std::printf("check           %d random inputs, max relative error %.3g\n", r->check.runs,
                r->check.max_relative_error);
  std::string kinds;
  for (int k = 0; k < opt::kNumRewriteKinds; ++k)
    if (ctx.rewrite_kinds[k] > 0)
      kinds += (kinds.empty() ? "" : ", ") +
               std::string(opt::rewrite_kind_name(static_cast<opt::RewriteKind>(k))) + " x" +
               std::to_string(ctx.rewrite_kinds[k]);
  if (!kinds.empty()) std::printf("rewrites        %s\n", kinds.c_str());
  if (speed.ran)
    std::printf(
        "measured        %.3f ms -> %.3f ms (%s)%s\n", speed.input_ms, speed.optimized_ms,
        speed.note.c_str(),
        speed.kept_input ? "; wrote the input graph: the optimized one measured slower" : "");
  else
    std::printf("measured        not run (%s)\n", speed.note.c_str());
  for (const opt::RuleCount& c : opt::count_rules(sr.applied))
    std::printf("rule            %s x%d\n", c.rule.c_str(), c.count);
  return kExitOk;
}

}  // namespace

Command add_optimize(CLI::App& tso) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* app = tso.add_subcommand(
      "optimize", "search for a cheaper equivalent graph with verified rules and write it");
  app->add_option("model", flags->model.file, "the model: .onnx, or the canonical text format")
      ->required();
  app->add_option("-o,--output", flags->output, "where to write the optimized model")->required();
  add_model_file_options(app, &flags->model);
  app->add_option("--rules", flags->rules,
                  "rule files (default: every *.rules in " + opt::default_rules_dir() + ")");
  app->add_option("--alpha", flags->alpha,
                  "keep rewritten graphs costing less than alpha times the best")
      ->check(CLI::Range(1.0, 10.0));
  app->add_option("--budget", flags->budget, "graphs the search may expand")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_option("--stall", flags->stall,
                  "stop after this many expansions in a row without a cheaper graph (0: never)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--lookahead", flags->lookahead,
                  "where the search stalls, look past rewritten graphs costing up to this times "
                  "the best for a cheaper one (at most --alpha: off)")
      ->check(CLI::Range(1.0, 10.0));
  app->add_option("--lookahead-budget", flags->lookahead_budget,
                  "graphs the lookahead may expand in all (0: off)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--time-limit", flags->time_limit, "search wall time limit, seconds")
      ->check(CLI::PositiveNumber);
  app->add_option("--cost", flags->cost,
                  "a cost table (tso profile, experiments/ort_costs.py) to optimize for; "
                  "signatures it lacks cost what the analytic model says");
  app->add_option("--device", flags->device,
                  "the target: cpu (costs measured on demand on tso's CPU runtime, cached), "
                  "cuda (the same on the GPU), or a device file of the analytic model (e.g. " +
                      opt::default_device_path() +
                      "); default cuda when a GPU is visible, else cpu");
  app->add_option("--cost-cache", flags->cost_cache,
                  "the cache of measured costs for --device cpu or cuda (default "
                  "~/.cache/tso/costs-<device hash>.json; created on first use)");
  app->add_option("--missing-costs", flags->missing_costs,
                  "with --cost TABLE: write each signature the search asked for and the table "
                  "lacks as a one-operator ONNX model DIR/<n>.onnx, listed in DIR/index.json");
  app->add_option("--report", flags->report, "write a report, markdown (.md) or JSON (.json)");
  app->add_flag("--allow-unverified", flags->allow_unverified,
                "also use rules not proved (unverified, unknown, refuted): for tests only");
  app->add_option("--check-runs", flags->check_runs, "random input sets for the numerical check")
      ->check(CLI::Range(2, 100));
  app->add_flag("-q,--quiet", flags->quiet, "no progress lines on stderr");
  app->add_flag("--no-verify-speed", flags->no_verify_speed,
                "write the optimized graph without timing it against the input on the CPU "
                "runtime");
  return {app, [flags] { return run_optimize(*flags); }};
}

}  // namespace tso::cli
