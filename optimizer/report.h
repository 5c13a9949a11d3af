// The optimization report, in markdown or JSON: rules applied (name, how
// many times, on which nodes), operator count and predicted cost before and
// after, the measured end-to-end times, the classic rewrites among them with
// their predicted gains, each rewrite site's nodes before and after with
// their costs, search time, expansions and why the search stopped, weight
// folding and the numerical check. The HTML page is report_html.h.
#pragma once

#include <string>
#include <vector>

#include "optimizer/optimize.h"
#include "optimizer/rewrite_kind.h"

namespace tso::opt {

// `tso optimize`'s end-to-end check on the target runtime: both graphs timed,
// and the faster one written.
struct SpeedCheck {
  bool ran = false;
  std::string note;     // why it did not run, or how it was timed
  double input_ms = 0;  // minimum over the timed runs
  double optimized_ms = 0;
  double input_median_ms = 0;  // median of the rounds' medians
  double optimized_median_ms = 0;
  int rounds = 0;           // alternating rounds timed
  int rounds_faster = 0;    // of them, those whose minimum the optimized graph won
  int stages = 1;           // 2: the first stage's rounds were inconclusive, as many again timed
  bool kept_input = false;  // the optimized graph did not win (optimized_wins)
};

// The speed check times kCheckPairs pairs of executors, one of each graph
// planned afresh for each pair (every other pair the optimized graph's
// first), kCheckRounds alternating rounds each: a pair's two executors
// differ by a few percent that its rounds do not average away
// (driver/README.md).
constexpr int kCheckPairs = 5;
constexpr int kCheckRounds = 3;

// Whether the optimized graph is written: faster than the input by its
// minimum, by the median of the rounds' medians, and in enough rounds by the
// round's minimum: four in five of one stage (12 of the check's 15), eleven
// in fifteen of two (22 of 30). One graph against itself wins 12 of 15 fair
// rounds 1.8% of the time, and is written by the two stages 2.2% of the
// time; timed so, SqueezeNet was written in 0 of 100 trials by one stage
// and in 3 of 100 by two (another day), ResNet-50 in 2 of 30 by one,
// while SqueezeNet's split concats (5% faster) were written in 23 of 30 by
// one stage (driver/speed_check_bench, driver/README.md).
bool optimized_wins(const SpeedCheck& s);

// Whether one stage's verdict is too close to call, so that the check times
// a second stage as long as the first and judges both together: the
// optimized graph lost (optimized_wins) though faster by its minimum and its
// median and in at least three rounds in five (9 of 15). A graph 3% faster
// wins about 11 rounds in 15 here: one stage writes it 39% of the time, two
// 63% (a fair sign test's figures at that rate).
bool worth_a_second_stage(const SpeedCheck& s);

// Why the input graph was kept: "the optimized one measured slower", or
// which figures it won ("... faster by its minimum, not by its median, in
// 11 of 15 rounds").
std::string kept_input_reason(const SpeedCheck& s);

struct ReportContext {
  std::string model;  // the input file
  std::vector<std::string> rule_files;
  int rules_used = 0;      // compiled rules the search could apply
  int rules_reversed = 0;  // of them, reverses of verified rules
  int not_reversed = 0;    // verified rules whose reverse was not compiled
  std::vector<RuleIndex::Skipped> skipped;
  std::string cost_model;  // CostModel::describe()
  double alpha = 0;
  double min_gain = 0;
  int64_t budget = 0;
  double time_limit_s = 0;
  LookaheadOptions lookahead;
  double tolerance = 1e-4;
  // Applications per RewriteKind (count_rewrite_kinds).
  std::array<int, kNumRewriteKinds> rewrite_kinds{};
  // Per applied rewrite, its kind (classify_applied).
  std::vector<RewriteKind> applied_kinds;
  // Whether the cost model's node costs were measured (--device cpu|cuda,
  // --cost TABLE) rather than the analytic model's.
  bool measured_costs = false;
  SpeedCheck speed;
};

// Per kind, its applications and predicted gain: over its sites, the cost
// of the nodes removed less that of the nodes added (microseconds; the cost
// model's, never measured).
struct KindGain {
  int applications = 0;
  double predicted_gain_us = 0;
};
std::array<KindGain, kNumRewriteKinds> kind_gains(const SearchResult& s, const ReportContext& c);
// The kind of applied rewrite `i` (other where the context lacks it).
RewriteKind applied_kind(const ReportContext& c, size_t i);

struct RuleCount {
  std::string rule;
  int count = 0;
  std::vector<std::vector<std::string>> nodes;  // per application, the nodes it replaced
};
// Applications grouped by rule, most frequent first (ties by name).
std::vector<RuleCount> count_rules(const std::vector<AppliedRewrite>& applied);

std::string report_markdown(const OptimizeResult& r, const ReportContext& c);
std::string report_json(const OptimizeResult& r, const ReportContext& c);

}  // namespace tso::opt
