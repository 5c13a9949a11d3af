// `tso optimize MODEL -o OUT`: loads a model (ONNX, or the canonical text
// format), searches for a cheaper equivalent graph with the verified rules,
// folds weights, checks the result numerically against the input, times both
// on the target's runtime and writes the faster (ONNX out for ONNX in) with
// an optional report; the steps up to the writing are
// driver::optimize_model (driver/optimize_model.h). Nothing is written when
// any step fails; the input file is never touched.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/model_file.h"
#include "core/atomic_file.h"
#include "core/text_format.h"
#include "driver/graphviz.h"
#include "driver/optimize_model.h"
#include "frontend/onnx.h"
#include "optimizer/defaults.h"
#include "optimizer/report.h"
#include "optimizer/report_html.h"

namespace tso::cli {
namespace {

// The numerical check found a difference: a failure of the optimizer, not of
// the user's input or the file system.
constexpr int kExitCheckFailed = 3;

struct OptimizeFlags {
  ModelFileOptions model;
  std::string output;
  std::string report;
  bool quiet = false;
  bool no_verify_speed = false;
  driver::OptimizeModelOptions options;
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

int run_optimize(const OptimizeFlags& f) {
  namespace fs = std::filesystem;
  if (f.output.empty())
    return fail(kExitBadInput, "no output: give it as a second argument or with -o FILE");
  if (same_file(f.model.file, f.output))
    return fail(kExitBadInput, "the output " + f.output + " is the input file; choose another");
  std::string report_ext = fs::path(f.report).extension().string();
  if (!f.report.empty() && report_ext != ".md" && report_ext != ".json" && report_ext != ".html")
    return fail(kExitBadInput,
                "--report " + f.report + ": the name must end in .md, .json or .html");
  if (same_file(f.model.file, f.report) && !f.report.empty())
    return fail(kExitBadInput, "the report " + f.report + " is the input file");

  Expected<ImportOptions> import = import_options(f.model);
  if (!import) return fail(kExitBadInput, import.error().message);
  const driver::ModelSource source{f.model.file, std::nullopt, *import};
  driver::OptimizeModelOptions options = f.options;
  options.verify_speed = !f.no_verify_speed;
  options.warning = [](const std::string& line) {
    std::fprintf(stderr, "tso optimize: %s\n", line.c_str());
  };
  options.info = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  if (!f.quiet) options.progress = options.info;
  driver::Failure failure;
  Expected<driver::OptimizedModel> m = driver::optimize_model(source, options, &failure);
  if (!m && failure == driver::Failure::kBadModel) {
    std::fprintf(stderr, "%s\n", m.error().message.c_str());  // it carries its location
    return kExitBadInput;
  }
  if (!m)
    return fail(failure == driver::Failure::kIo            ? kExitIoError
                : failure == driver::Failure::kCheckFailed ? kExitCheckFailed
                                                           : kExitBadInput,
                m.error().message);
  const opt::OptimizeResult& r = m->result;
  const opt::ReportContext& ctx = m->report;
  const opt::SpeedCheck& speed = ctx.speed;
  if (!options.missing_costs.empty())
    std::printf("missing costs   %d signatures written to %s, %zu not exportable (listed there)\n",
                m->missing_written, options.missing_costs.c_str(), m->missing_not_exported);

  // Write the model, then the report. A kept input is the user's own file,
  // byte for byte, where that file is complete, its external data (if any)
  // resolves beside the output as beside the input, and its shapes are the
  // ones asked for (not so under --batch or --input-shape: then the input
  // graph at those shapes is written).
  const bool copy_input = speed.kept_input && !f.model.random_weights_seed && !f.model.batch &&
                          f.model.input_shapes.empty() &&
                          fs::weakly_canonical(fs::path(f.model.file)).parent_path() ==
                              fs::weakly_canonical(fs::path(f.output)).parent_path();
  if (copy_input) {
    std::optional<std::string> bytes = read_file(f.model.file);
    if (!bytes) return fail(kExitIoError, "cannot read " + f.model.file);
    if (Status s = write_file_atomically(f.output, *bytes); !s.ok())
      return fail(kExitIoError, s.error().message);
  } else if (m->input.is_onnx) {
    Status s = export_onnx(m->written(), m->input.onnx.info, f.output);
    if (!s.ok()) return fail(kExitIoError, s.error().message);
  } else if (Status s = write_file_atomically(f.output, print(m->written())); !s.ok()) {
    return fail(kExitIoError, s.error().message);
  }
  if (!f.report.empty()) {
    Expected<std::string> text = report_ext == ".html"
                                     ? opt::report_html(r, ctx, driver::render_svg)
                                 : report_ext == ".json" ? opt::report_json(r, ctx)
                                                         : opt::report_markdown(r, ctx);
    if (!text) return fail(kExitIoError, "--report " + f.report + ": " + text.error().message);
    if (Status s = write_file_atomically(f.report, *text); !s.ok())
      return fail(kExitIoError, s.error().message);
  }
  const opt::SearchResult& sr = r.search;
  std::printf("%s -> %s\n", f.model.file.c_str(), f.output.c_str());
  std::printf("operators       %d -> %d\n", r.operators_before, r.operators_after);
  std::printf("predicted cost  %.2f us -> %.2f us (%s)\n", r.cost_before, r.cost_after,
              ctx.cost_model.c_str());
  std::printf(
      "search          %.3f s (%.3f s of it measuring costs), %lld expansions, "
      "stopped: %s\n",
      sr.seconds, sr.measuring_seconds, static_cast<long long>(sr.expansions),
      opt::stop_reason_name(sr.stop));
  if (r.searched_again)
    std::printf(
        "searched again  after a first search of %.3f s: %d costs measured a second time moved "
        "a prediction by over 5%% or left its graph no cheaper\n",
        r.first_search_seconds, r.remeasured);
  if (sr.below_min_gain_cost > 0)
    std::printf(
        "min gain        kept the input: the best graph, %.2f us, gains less than %g%% of its "
        "cost\n",
        sr.below_min_gain_cost, 100 * f.options.search.min_gain);
  std::printf("lookahead       %lld of %lld found a cheaper graph, %lld graphs expanded\n",
              static_cast<long long>(sr.lookahead_found), static_cast<long long>(sr.lookaheads),
              static_cast<long long>(sr.lookahead_expansions));
  if (r.discarded_rewrites > 0)
    std::printf(
        "confirmed       kept the input: the search's graph (%d rewrites) is predicted %.2f us "
        "by the confirmed costs, no cheaper\n",
        r.discarded_rewrites, r.discarded_cost);
  if (r.checked)
    std::printf("check           %d random inputs, max relative error %.3g%s\n", r.check.runs,
                r.check.max_relative_error, opt::check_notes(r.check).c_str());
  std::string kinds;
  for (int k = 0; k < opt::kNumRewriteKinds; ++k)
    if (ctx.rewrite_kinds[k] > 0)
      kinds += (kinds.empty() ? "" : ", ") +
               std::string(opt::rewrite_kind_name(static_cast<opt::RewriteKind>(k))) + " x" +
               std::to_string(ctx.rewrite_kinds[k]);
  if (!kinds.empty()) std::printf("rewrites        %s\n", kinds.c_str());
  if (speed.ran)
    std::printf(
        "measured        %.3f ms -> %.3f ms, medians %.3f ms -> %.3f ms (%s)%s\n", speed.input_ms,
        speed.optimized_ms, speed.input_median_ms, speed.optimized_median_ms, speed.note.c_str(),
        speed.kept_input ? ("; wrote the input graph: " + opt::kept_input_reason(speed)).c_str()
                         : "");
  else
    std::printf("measured        not run (%s)%s\n", speed.note.c_str(),
                speed.kept_input ? "; wrote the input graph" : "");
  for (const opt::RuleCount& c : opt::count_rules(sr.applied))
    std::printf("rule            %s x%d\n", c.rule.c_str(), c.count);
  return kExitOk;
}

}  // namespace

Command add_optimize(CLI::App& tso) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* app = tso.add_subcommand(
      "optimize", "Search for a cheaper equivalent graph with verified rules and write it");
  app->add_option("MODEL", flags->model.file, "the model: .onnx, or the canonical text format")
      ->required();
  // The output as onnxsim takes it (`tso optimize IN OUT`) or as a flag.
  CLI::Option* out =
      app->add_option("OUTPUT", flags->output, "where to write the optimized model (or -o)");
  app->add_option("-o,--output", flags->output, "where to write the optimized model")
      ->excludes(out);
  add_model_file_options(app, &flags->model);
  app->add_option("--rules", flags->options.rules,
                  "rule files (default: every *.rules in " + opt::default_rules_dir() + ")");
  app->add_option("--alpha", flags->options.search.alpha,
                  "keep rewritten graphs costing less than alpha times the best")
      ->check(CLI::Range(1.0, 10.0));
  app->add_option("--min-gain", flags->options.search.min_gain,
                  "keep the input unless the best graph costs less by more than this fraction of "
                  "its cost (default 0.001: smaller gains are below what costs resolve)")
      ->check(CLI::Range(0.0, 0.5));
  app->add_option("--budget", flags->options.search.max_expansions, "graphs the search may expand")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_option("--stall", flags->options.search.stall_expansions,
                  "stop after this many expansions in a row without a cheaper graph (0: never)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--lookahead", flags->options.search.lookahead.bound,
                  "where the search stalls, look past rewritten graphs costing up to this times "
                  "the best for a cheaper one (at most --alpha: off)")
      ->check(CLI::Range(1.0, 10.0));
  app->add_option("--lookahead-budget", flags->options.search.lookahead.budget,
                  "graphs the lookahead may expand in all (0: off)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--time-limit", flags->options.search.time_limit_s,
                  "search wall time limit, seconds")
      ->check(CLI::PositiveNumber);
  app->add_option("--cost", flags->options.target.cost,
                  "a cost table (tso profile, experiments/ort_costs.py) to optimize for; "
                  "signatures it lacks cost what the analytic model says");
  app->add_option("--device", flags->options.target.device,
                  "the target: cpu (costs measured on demand on tso's CPU runtime, cached), "
                  "cuda (the same on the GPU), or a device file of the analytic model (e.g. " +
                      opt::default_device_path() +
                      "); default cuda when a GPU is visible, else cpu");
  app->add_option("--cost-cache", flags->options.target.cost_cache,
                  "the cache of measured costs for --device cpu or cuda (default "
                  "~/.cache/tso/costs-<device hash>.json; created on first use)");
  app->add_option("--missing-costs", flags->options.missing_costs,
                  "with --cost TABLE: write each signature the search asked for and the table "
                  "lacks as a one-operator ONNX model DIR/<n>.onnx, listed in DIR/index.json");
  app->add_option("--report", flags->report,
                  "write a report: markdown (.md), JSON (.json), or one self-contained HTML page "
                  "(.html) with each rewrite site drawn by Graphviz");
  app->add_flag("--allow-unverified", flags->options.allow_unverified,
                "also use rules not proved (unverified, unknown, refuted): for tests only");
  app->add_option("--check,--check-runs", flags->options.check.runs,
                  "random input sets for the numerical check (as onnxsim's check_n)")
      ->check(CLI::Range(2, 100));
  app->add_flag("-q,--quiet", flags->quiet, "no progress lines on stderr");
  app->add_flag("--no-verify-speed", flags->no_verify_speed,
                "write the optimized graph without timing it against the input on the CPU "
                "runtime");
  return {app, [flags] { return run_optimize(*flags); }};
}

}  // namespace tso::cli
