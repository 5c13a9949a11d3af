#include "driver/optimize_model.h"

#include <tbb/parallel_for.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "frontend/signature_models.h"
#include "optimizer/cost_cache.h"
#include "optimizer/defaults.h"

namespace tso::driver {
namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Every rule file read and parsed, then indexed; refused rules of a file the
// user named are reported through `warning`.
struct Rules {
  std::vector<std::string> files;
  std::vector<RuleSet> sets;
  opt::RuleIndex index;
};

Expected<std::unique_ptr<Rules>> load_rules(const OptimizeModelOptions& o, Failure* failure) {
  auto r = std::make_unique<Rules>();
  r->files = o.rules.empty() ? opt::default_rule_files() : o.rules;
  *failure = Failure::kIo;
  if (r->files.empty())
    return Error{"no rule files in " + opt::default_rules_dir() + "; give --rules"};
  // The files are independent, so they are read and parsed in parallel (the
  // shipped ones take about a second on one core); the first failure in the
  // order given is the one reported.
  std::vector<std::optional<Expected<RuleSet>>> parsed(r->files.size());
  tbb::parallel_for(size_t{0}, r->files.size(), [&](size_t i) {
    if (std::optional<std::string> text = read_file(r->files[i]))
      parsed[i] = parse_rules(*text, r->files[i]);
  });
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (!parsed[i]) return Error{"cannot read rule file " + r->files[i]};
    if (!*parsed[i]) {
      *failure = Failure::kBadInput;
      return parsed[i]->error();
    }
    r->sets.push_back(std::move(**parsed[i]));
  }
  for (const RuleSet& s : r->sets) r->index.add(s, {.allow_unverified = o.allow_unverified});
  // Refuted rules in the shipped files are the verifier's record and are
  // simply skipped (listed in the report); a file the user names is told.
  for (size_t i = 0; i < r->sets.size() && !o.allow_unverified && !o.rules.empty(); ++i) {
    int refuted = 0;
    for (const Rule& rule : r->sets[i].rules)
      refuted += rule.status.kind == RuleStatus::Kind::kRefuted;
    if (refuted > 0 && o.warning)
      o.warning(format("%s: refusing %d refuted rule%s (not equivalences; listed in the report)",
                       r->files[i].c_str(), refuted, refuted == 1 ? "" : "s"));
  }
  if (r->index.rules().empty() && o.warning)
    o.warning(
        format("warning: no usable rule (%zu skipped: not verified or not compilable); the "
               "model is only folded and checked",
               r->index.skipped().size()));
  return r;
}

// Saves the cache however the run ends, and says what was measured and found.
struct CostCacheSaver {
  const opt::CachedCost* cache = nullptr;
  const OptimizeModelOptions* o = nullptr;
  ~CostCacheSaver() {
    if (!cache) return;
    if (Status s = cache->save(); !s.ok() && o->warning)
      o->warning("warning: " + s.error().message);
    if (o->info)
      o->info(
          format("cost cache      %s: %d signatures measured, %d found in the cache, %zu "
                 "not measurable (analytic)",
                 cache->path().c_str(), cache->measured(), cache->found(), cache->failed().size()));
  }
};

opt::ReportContext report_context(const std::string& model, const Rules& rules,
                                  const opt::CostModel& cost, const OptimizeModelOptions& o,
                                  const opt::OptimizeResult& r) {
  opt::ReportContext c;
  c.model = model;
  c.rule_files = rules.files;
  c.rules_used = static_cast<int>(rules.index.rules().size());
  c.rules_reversed = rules.index.reversed_count();
  c.not_reversed = static_cast<int>(rules.index.not_reversed().size());
  c.skipped = rules.index.skipped();
  c.cost_model = cost.describe();
  c.alpha = o.search.alpha;
  c.min_gain = o.search.min_gain;
  c.budget = o.search.max_expansions;
  c.time_limit_s = o.search.time_limit_s;
  c.lookahead = o.search.lookahead;
  c.tolerance = o.check.tolerance;
  c.rewrite_kinds = opt::count_rewrite_kinds(r.search.applied, rules.index);
  c.applied_kinds = opt::classify_applied(r.search.applied, rules.index);
  return c;
}

}  // namespace

Expected<OptimizedModel> optimize_model(const ModelSource& source, const OptimizeModelOptions& o,
                                        Failure* failure) {
  Failure ignored;
  if (!failure) failure = &ignored;
  *failure = Failure::kBadInput;
  if (!o.missing_costs.empty() && o.target.cost.empty())
    return Error{"--missing-costs needs --cost TABLE: it writes what the table lacks"};

  // A model that cannot be read fails at once, before seconds of rule parsing.
  if (!source.bytes) {
    if (Status s = check_readable(source.path); !s.ok()) {
      *failure = Failure::kIo;
      return s.error();
    }
  }

  // Rules: every file is read and parsed before the model is touched.
  Expected<std::unique_ptr<Rules>> rules = load_rules(o, failure);
  if (!rules) return rules.error();

  // The target: its cost model, and the runtime that times the result.
  *failure = Failure::kBadInput;
  Expected<std::unique_ptr<CostTarget>> target = open_cost_target(o.target);
  if (!target) return target.error();
  const opt::CostModel& cost = *(*target)->model;
  opt::CachedCost* cached = (*target)->cache.get();
  if (cached && o.progress)
    cached->set_progress([&o](int n, double seconds, const std::string& sig) {
      if (n % 25 == 0)
        o.progress(
            format("measuring: %d signatures in %.1f s, the last %.80s", n, seconds, sig.c_str()));
    });
  if (cached && !cached->set_aside().empty() && o.warning)
    o.warning("warning: " + cached->set_aside());
  Expected<LoadedModel> input = load_model(source);
  if (!input) {
    *failure = Failure::kBadModel;
    return input.error();
  }
  // Saved at the end, however the run ends: what was measured is kept. A
  // model that cannot be read measures nothing, so its error comes alone.
  CostCacheSaver saver{cached, &o};
  if (o.warning)
    for (const std::string& w : input->onnx.warnings) o.warning(source.path + ": warning: " + w);
  set_weight_residency(**target, input->graph);

  opt::OptimizeOptions options;
  options.search = o.search;
  options.check = o.check;
  if (o.progress)
    options.search.progress = [&o](const opt::SearchProgress& p) {
      o.progress(format("search: %lld expansions, %lld queued, best %.2f us, %.2f s",
                        static_cast<long long>(p.expansions), static_cast<long long>(p.queued),
                        p.best_cost, p.seconds));
    };
  Expected<opt::OptimizeResult> r = opt::optimize(input->graph, (*rules)->index, cost, options);
  if (!r) {
    if (r.error().message.rfind("numerical check failed", 0) == 0) *failure = Failure::kCheckFailed;
    return Error{source.path + ": " + r.error().message + "; nothing written"};
  }

  OptimizedModel out;
  if (!o.missing_costs.empty()) {
    Expected<SignatureModels> m =
        write_signature_models((*target)->table->missed(), o.missing_costs,
                               input->is_onnx ? input->onnx.info : OnnxModelInfo{}, 1);
    if (!m) {
      *failure = Failure::kIo;
      return Error{m.error().message + "; nothing written"};
    }
    out.missing_written = m->written;
    out.missing_not_exported = m->not_exported.size();
  }
  out.report = report_context(source.path, **rules, cost, o, *r);
  // The report holds what it needs of the rules; the speed check, which
  // holds both graphs and their executors' weight copies, does not need the
  // parsed rules (80 MB for the shipped files).
  rules->reset();
  out.report.measured_costs = (*target)->table || (*target)->cache;
  // Never slower: the optimized graph is kept only if it measures no slower
  // than the input on the runtime (verify_speed false: always).
  out.report.speed.note = "--no-verify-speed";
  if (o.verify_speed) out.report.speed = check_speed(**target, input->graph, *r, o.progress);
  out.input = std::move(*input);
  out.result = std::move(*r);
  return out;
}

}  // namespace tso::driver
