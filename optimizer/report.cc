#include "optimizer/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace tso::opt {

std::vector<RuleCount> count_rules(const std::vector<AppliedRewrite>& applied) {
  std::map<std::string, RuleCount> by_name;
  for (const AppliedRewrite& a : applied) {
    RuleCount& c = by_name[a.rule];
    c.rule = a.rule;
    ++c.count;
    c.nodes.push_back(a.nodes);
  }
  std::vector<RuleCount> out;
  for (auto& [name, c] : by_name) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const RuleCount& a, const RuleCount& b) { return a.count > b.count; });
  return out;
}

RewriteKind applied_kind(const ReportContext& c, size_t i) {
  return i < c.applied_kinds.size() ? c.applied_kinds[i] : RewriteKind::kOther;
}

std::array<KindGain, kNumRewriteKinds> kind_gains(const SearchResult& s, const ReportContext& c) {
  std::array<KindGain, kNumRewriteKinds> g{};
  for (size_t i = 0; i < s.applied.size(); ++i) {
    KindGain& k = g[static_cast<int>(applied_kind(c, i))];
    ++k.applications;
    k.predicted_gain_us += site_cost(s.applied[i].before) - site_cost(s.applied[i].after);
  }
  return g;
}

namespace {

bool faster_by_min_and_median(const SpeedCheck& s) {
  return s.optimized_ms < s.input_ms && s.optimized_median_ms < s.input_median_ms;
}

}  // namespace

bool optimized_wins(const SpeedCheck& s) {
  // Four in five of one stage, eleven in fifteen of two, rounded up.
  const int need = s.stages == 1 ? (4 * s.rounds + 4) / 5 : (11 * s.rounds + 14) / 15;
  return faster_by_min_and_median(s) && s.rounds_faster >= need;
}

bool worth_a_second_stage(const SpeedCheck& s) {
  return s.stages == 1 && !optimized_wins(s) && faster_by_min_and_median(s) &&
         s.rounds_faster >= (3 * s.rounds + 4) / 5;
}

std::string kept_input_reason(const SpeedCheck& s) {
  const bool by_min = s.optimized_ms < s.input_ms;
  const bool by_median = s.optimized_median_ms < s.input_median_ms;
  if (!by_min && !by_median && s.rounds_faster == 0) return "the optimized one measured slower";
  return std::string("the optimized one was faster ") + (by_min ? "" : "not ") +
         "by its minimum, " + (by_median ? "" : "not ") + "by its median, in " +
         std::to_string(s.rounds_faster) + " of " + std::to_string(s.rounds) + " rounds";
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string join(const std::vector<std::string>& xs, const char* sep) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? sep : "") + xs[i];
  return s;
}

std::string check_text(const OptimizeResult& r, double tolerance) {
  if (!r.checked) return "not needed (the graph is unchanged)";
  return std::to_string(r.check.runs) + " random input sets, max relative error " +
         fmt("%.3g", r.check.max_relative_error) + " (bound " + fmt("%.3g", tolerance) + ")" +
         check_notes(r.check);
}

std::string speed_text(const SpeedCheck& s) {
  if (!s.ran) return "speed check: not run (" + s.note + ")";
  return "measured end to end: input " + fmt("%.3f", s.input_ms) + " ms (median " +
         fmt("%.3f", s.input_median_ms) + "), optimized " + fmt("%.3f", s.optimized_ms) +
         " ms (median " + fmt("%.3f", s.optimized_median_ms) + ") (" + s.note + "); written: " +
         (s.kept_input ? "the input graph, since " + kept_input_reason(s) : "the optimized graph");
}

std::string progress_text(const SearchResult& s, double min_gain) {
  if (s.best_over_time.size() < 2) return "no cheaper graph found";
  const BestCostPoint& last = s.best_over_time.back();
  return std::to_string(s.best_over_time.size() - 1) + " improvements, the last at " +
         fmt("%.3f", last.seconds) + " s (expansion " + std::to_string(last.expansions) + ")" +
         (s.below_min_gain_cost > 0
              ? "; the best, " + fmt("%.2f", s.below_min_gain_cost) +
                    " us, gains less than the minimum (" + fmt("%g", 100 * min_gain) +
                    "% of the input's cost): the input kept"
              : std::string());
}

std::string costs_text(const ReportContext& c) {
  return c.measured_costs ? "measured per operator (" + c.cost_model + ")"
                          : "analytic, predicted per operator (" + c.cost_model + ")";
}

// "conv2d conv1 12.30 us, relu r 1.20 us"
std::string site_text(const std::vector<SiteNode>& site) {
  std::vector<std::string> parts;
  for (const SiteNode& n : site)
    if (!n.boundary) parts.push_back(n.op + " " + n.name + " " + fmt("%.2f", n.cost_us) + " us");
  return parts.empty() ? "(nothing)" : join(parts, ", ");
}

nlohmann::ordered_json site_json(const std::vector<SiteNode>& site) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const SiteNode& n : site)
    a.push_back({{"id", n.id},
                 {"op", n.op},
                 {"name", n.name},
                 {"type", n.type},
                 {"args", n.args},
                 {"cost_us", n.cost_us},
                 {"boundary", n.boundary}});
  return a;
}

}  // namespace

std::string report_markdown(const OptimizeResult& r, const ReportContext& c) {
  const SearchResult& s = r.search;
  std::string m = "# tso optimize: " + c.model + "\n\n";
  m += "| | before | after |\n| --- | --- | --- |\n";
  m += "| operators | " + std::to_string(r.operators_before) + " | " +
       std::to_string(r.operators_after) + " |\n";
  m += "| predicted cost (us) | " + fmt("%.2f", r.cost_before) + " | " + fmt("%.2f", r.cost_after) +
       " |\n";
  if (c.speed.ran) {
    m += "| measured end to end, minimum (ms) | " + fmt("%.3f", c.speed.input_ms) + " | " +
         fmt("%.3f", c.speed.optimized_ms) + " |\n";
    m += "| measured, median (ms) | " + fmt("%.3f", c.speed.input_median_ms) + " | " +
         fmt("%.3f", c.speed.optimized_median_ms) + " |\n";
  }
  m += "\n";
  m += "- cost model: " + c.cost_model + "\n";
  m += "- rules: " + std::to_string(c.rules_used) + " usable from " + join(c.rule_files, ", ") +
       " (" + std::to_string(c.skipped.size()) + " skipped; " + std::to_string(c.rules_reversed) +
       " reverse directions of verified rules among the usable, " + std::to_string(c.not_reversed) +
       " verified rules not reversed)\n";
  m += "- search: " + fmt("%.3f", s.seconds) + " s" +
       (s.measuring_seconds > 0
            ? " (" + fmt("%.3f", s.measuring_seconds) + " s of it measuring costs)"
            : std::string()) +
       ", " + std::to_string(s.expansions) + " expansions, " + std::to_string(s.candidates) +
       " candidates, " + std::to_string(s.duplicates) +
       " duplicates, stopped: " + stop_reason_name(s.stop) + " (alpha " + fmt("%g", c.alpha) +
       ", budget " + std::to_string(c.budget) + ", time limit " + fmt("%g", c.time_limit_s) +
       " s)\n";
  m += "- best cost over time: " + progress_text(s, c.min_gain) + "\n";
  if (r.remeasured > 0)
    m += "- costs confirmed: " + std::to_string(r.remeasured) +
         " measured costs of the input and the result measured a second time" +
         (r.searched_again ? ", which moved a prediction by over 5% or left the result no "
                             "cheaper: searched again (the first "
                             "search took " +
                                 fmt("%.3f", r.first_search_seconds) + " s)"
                           : std::string()) +
         (r.discarded_rewrites > 0
              ? "; the search's graph (" + std::to_string(r.discarded_rewrites) + " rewrites, " +
                    fmt("%.2f", r.discarded_cost) +
                    " us) is no cheaper than the input by them: kept the input"
              : std::string()) +
         "\n";
  m += "- lookahead past plateaus: " + std::to_string(s.lookahead_found) + " of " +
       std::to_string(s.lookaheads) + " found a cheaper graph, " +
       std::to_string(s.lookahead_expansions) + " graphs expanded (bound " +
       fmt("%g", c.lookahead.bound) + ", depth " + std::to_string(c.lookahead.depth) + ", budget " +
       std::to_string(c.lookahead.budget) + ")\n";
  m += "- weight folding: " + std::to_string(r.fold.folded) + " new weights\n";
  m += "- numerical check: " + check_text(r, c.tolerance) + "\n";
  m += "- " + speed_text(c.speed) + "\n\n";
  m += "## Classic rewrites\n\nPredicted gain: over the kind's sites, the cost of the nodes "
       "removed less that of the nodes added, by the cost model (" +
       costs_text(c) + "). Only the whole model is measured: " +
       (c.speed.ran ? fmt("%.3f", c.speed.input_ms) + " ms -> " +
                          fmt("%.3f", c.speed.optimized_ms) + " ms end to end."
                    : std::string("not run.")) +
       "\n\n| kind | applications | predicted gain (us) |\n| --- | --- | --- |\n";
  const std::array<KindGain, kNumRewriteKinds> gains = kind_gains(s, c);
  for (int k = 0; k < kNumRewriteKinds; ++k)
    m += "| " + std::string(rewrite_kind_name(static_cast<RewriteKind>(k))) + " | " +
         std::to_string(c.rewrite_kinds[k]) + " | " + fmt("%.2f", gains[k].predicted_gain_us) +
         " |\n";
  if (!s.applied.empty())
    m += "\n## Rewrite sites (" + std::to_string(s.applied.size()) +
         ")\n\nIn the order applied; node costs " + costs_text(c) +
         ".\n\n| # | kind | rule | before | after | predicted gain (us) |\n"
         "| --- | --- | --- | --- | --- | --- |\n";
  for (size_t i = 0; i < s.applied.size(); ++i) {
    const AppliedRewrite& a = s.applied[i];
    m += "| " + std::to_string(i + 1) + " | " + std::string(rewrite_kind_name(applied_kind(c, i))) +
         " | " + a.rule + " | " + site_text(a.before) + " | " + site_text(a.after) + " | " +
         fmt("%.2f", site_cost(a.before) - site_cost(a.after)) + " |\n";
  }
  m += "\n## Rules applied (" + std::to_string(s.applied.size()) + ")\n\n";
  if (s.applied.empty())
    m += "none\n";
  else
    m += "| rule | count | nodes |\n| --- | --- | --- |\n";
  for (const RuleCount& rc : count_rules(s.applied)) {
    std::vector<std::string> sites;
    for (const auto& n : rc.nodes) sites.push_back(join(n, "+"));
    m += "| " + rc.rule + " | " + std::to_string(rc.count) + " | " + join(sites, ", ") + " |\n";
  }
  std::vector<const AppliedRewrite*> regional;
  for (const AppliedRewrite& a : s.applied)
    if (a.region_rule) regional.push_back(&a);
  if (!regional.empty()) {
    m += "\n## Region rules applied (" + std::to_string(regional.size()) +
         ")\n\nDecided by the region check at the shapes they were applied at; a partial rule's "
         "correction recomputes the boxes its target gets wrong.\n\n"
         "| rule | nodes | corrected boxes | corrected elements |\n| --- | --- | --- | --- |\n";
    for (const AppliedRewrite* a : regional)
      m += "| " + a->rule + " | " + join(a->nodes, "+") + " | " +
           std::to_string(a->correction_boxes) + " | " + std::to_string(a->correction_elements) +
           " |\n";
  }
  if (!s.region_candidates.empty()) {
    m += "\n## Region rules considered (" + std::to_string(s.region_candidates.size()) +
         ")\n\nEvery exact or partial rule that matched an expanded graph: in how many, and "
         "the best predicted cost change it offered, correction included (negative: "
         "cheaper).\n\n| rule | matches | best predicted change (us) |\n| --- | --- | --- |\n";
    for (const auto& [rule, rc] : s.region_candidates)
      m += "| " + rule + " | " + std::to_string(rc.matches) + " | " + fmt("%.2f", rc.best_delta) +
           " |\n";
  }
  if (!c.skipped.empty()) {
    m += "\n## Rules skipped (" + std::to_string(c.skipped.size()) + ")\n\n";
    for (const RuleIndex::Skipped& k : c.skipped) m += "- " + k.rule + ": " + k.reason + "\n";
  }
  return m;
}

std::string report_json(const OptimizeResult& r, const ReportContext& c) {
  const SearchResult& s = r.search;
  nlohmann::ordered_json j;
  j["format"] = "tso-optimize-report";
  j["version"] = 1;
  j["model"] = c.model;
  j["cost_model"] = c.cost_model;
  j["rule_files"] = c.rule_files;
  j["rules_used"] = c.rules_used;
  j["rules_reversed"] = c.rules_reversed;
  j["rules_not_reversed"] = c.not_reversed;
  j["operators"] = {{"before", r.operators_before}, {"after", r.operators_after}};
  j["predicted_cost_us"] = {{"before", r.cost_before}, {"after", r.cost_after}};
  j["cost_confirmation"] = {{"remeasured", r.remeasured},
                            {"searched_again", r.searched_again},
                            {"first_search_seconds", r.first_search_seconds},
                            {"discarded_rewrites", r.discarded_rewrites},
                            {"discarded_cost_us", r.discarded_cost}};
  j["search"] = {{"seconds", s.seconds},
                 {"measuring_seconds", s.measuring_seconds},
                 {"expansions", s.expansions},
                 {"candidates", s.candidates},
                 {"duplicates", s.duplicates},
                 {"rejected_matches", s.rejected},
                 {"stop_reason", stop_reason_name(s.stop)},
                 {"alpha", c.alpha},
                 {"min_gain", c.min_gain},
                 {"below_min_gain_cost_us", s.below_min_gain_cost},
                 {"budget", c.budget},
                 {"time_limit_s", c.time_limit_s},
                 {"lookahead",
                  {{"bound", c.lookahead.bound},
                   {"depth", c.lookahead.depth},
                   {"budget", c.lookahead.budget},
                   {"runs", s.lookaheads},
                   {"found", s.lookahead_found},
                   {"expansions", s.lookahead_expansions}}}};
  nlohmann::ordered_json progress = nlohmann::ordered_json::array();
  for (const BestCostPoint& p : s.best_over_time)
    progress.push_back({{"seconds", p.seconds},
                        {"measuring_seconds", p.measuring_seconds},
                        {"expansions", p.expansions},
                        {"best_cost_us", p.best_cost}});
  j["search"]["best_over_time"] = progress;
  j["folded_weights"] = r.fold.folded;
  j["check"] = {{"performed", r.checked},
                {"tolerance", c.tolerance},
                {"runs", r.check.runs},
                {"max_relative_error", r.check.max_relative_error},
                {"near_ties", r.check.near_ties},
                {"f64_max_relative_error", r.check.f64_max_relative_error >= 0
                                               ? nlohmann::json(r.check.f64_max_relative_error)
                                               : nlohmann::json(nullptr)}};
  j["speed_check"] = {{"ran", c.speed.ran},
                      {"note", c.speed.note},
                      {"input_ms", c.speed.input_ms},
                      {"optimized_ms", c.speed.optimized_ms},
                      {"input_median_ms", c.speed.input_median_ms},
                      {"optimized_median_ms", c.speed.optimized_median_ms},
                      {"rounds", c.speed.rounds},
                      {"rounds_faster", c.speed.rounds_faster},
                      {"stages", c.speed.stages},
                      {"written", c.speed.kept_input ? "input" : "optimized"}};
  nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
  for (int k = 0; k < kNumRewriteKinds; ++k)
    kinds[std::string(rewrite_kind_key(static_cast<RewriteKind>(k)))] = c.rewrite_kinds[k];
  j["classic_rewrites"] = kinds;
  const std::array<KindGain, kNumRewriteKinds> gains = kind_gains(s, c);
  nlohmann::ordered_json gain = nlohmann::ordered_json::object();
  for (int k = 0; k < kNumRewriteKinds; ++k)
    gain[std::string(rewrite_kind_key(static_cast<RewriteKind>(k)))] = {
        {"applications", gains[k].applications}, {"predicted_gain_us", gains[k].predicted_gain_us}};
  j["rewrite_gains"] = gain;
  j["node_costs"] = c.measured_costs ? "measured" : "analytic";
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (size_t i = 0; i < s.applied.size(); ++i) {
    const AppliedRewrite& a = s.applied[i];
    sites.push_back({{"rule", a.rule},
                     {"kind", rewrite_kind_key(applied_kind(c, i))},
                     {"predicted_gain_us", site_cost(a.before) - site_cost(a.after)},
                     {"before", site_json(a.before)},
                     {"after", site_json(a.after)}});
  }
  j["rewrite_sites"] = sites;
  nlohmann::ordered_json applied = nlohmann::ordered_json::array();
  for (const RuleCount& rc : count_rules(s.applied))
    applied.push_back({{"rule", rc.rule}, {"count", rc.count}, {"nodes", rc.nodes}});
  j["rules_applied"] = applied;
  nlohmann::ordered_json regional = nlohmann::ordered_json::array();
  for (const AppliedRewrite& a : s.applied)
    if (a.region_rule)
      regional.push_back({{"rule", a.rule},
                          {"nodes", a.nodes},
                          {"corrected_boxes", a.correction_boxes},
                          {"corrected_elements", a.correction_elements}});
  j["region_rules_applied"] = regional;
  nlohmann::ordered_json considered = nlohmann::ordered_json::array();
  for (const auto& [rule, c] : s.region_candidates)
    considered.push_back(
        {{"rule", rule}, {"matches", c.matches}, {"best_predicted_delta_us", c.best_delta}});
  j["region_rules_considered"] = considered;
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  for (const RuleIndex::Skipped& k : c.skipped)
    skipped.push_back({{"rule", k.rule}, {"reason", k.reason}});
  j["rules_skipped"] = skipped;
  return j.dump(2) + "\n";
}

}  // namespace tso::opt
