// The report: rule counts grouped and ordered, and both formats carry the
// figures the issue asks for.
#include "optimizer/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tso::opt {
namespace {

OptimizeResult sample() {
  OptimizeResult r;
  r.operators_before = 7;
  r.operators_after = 2;
  r.cost_before = 30.5;
  r.cost_after = 9.25;
  r.search.expansions = 12;
  r.search.candidates = 40;
  r.search.duplicates = 3;
  r.search.seconds = 0.002;
  r.search.stop = StopReason::kExhausted;
  r.search.lookaheads = 2;
  r.search.lookahead_found = 1;
  r.search.lookahead_expansions = 5;
  r.search.best_over_time = {{0, 0, 0, 30.5}, {0.001, 0.0004, 3, 12.0}, {0.0015, 0.0004, 7, 9.25}};
  r.search.applied = {{"fuse", {"%a", "%b"}}, {"merge", {"%c", "%d"}}, {"fuse", {"%e", "%f"}}};
  r.fold.folded = 1;
  r.checked = true;
  r.check.runs = 2;
  r.check.max_relative_error = 3e-7;
  return r;
}

ReportContext context() {
  ReportContext c;
  c.model = "fire.onnx";
  c.rule_files = {"a.rules"};
  c.rules_used = 5;
  c.rules_reversed = 2;
  c.not_reversed = 1;
  c.skipped = {{"bad", "status refuted"}};
  c.cost_model = "analytic (toy)";
  c.alpha = 1.05;
  c.budget = 1000;
  c.time_limit_s = 60;
  c.rewrite_kinds[static_cast<int>(RewriteKind::kFuseActivation)] = 2;
  c.rewrite_kinds[static_cast<int>(RewriteKind::kMergeConvs)] = 1;
  return c;
}

TEST(Report, CountsRulesMostFrequentFirst) {
  std::vector<RuleCount> c = count_rules(sample().search.applied);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].rule, "fuse");
  EXPECT_EQ(c[0].count, 2);
  EXPECT_EQ(c[0].nodes[1], (std::vector<std::string>{"%e", "%f"}));
  EXPECT_EQ(c[1].rule, "merge");
}

TEST(Report, MarkdownShowsCountsCostsAndStopReason) {
  std::string m = report_markdown(sample(), context());
  EXPECT_NE(m.find("| operators | 7 | 2 |"), std::string::npos) << m;
  EXPECT_NE(m.find("| predicted cost (us) | 30.50 | 9.25 |"), std::string::npos) << m;
  EXPECT_NE(m.find("12 expansions"), std::string::npos) << m;
  EXPECT_NE(m.find("stopped: exhausted"), std::string::npos) << m;
  EXPECT_NE(m.find("lookahead past plateaus: 1 of 2 found a cheaper graph, 5 graphs expanded "
                   "(bound 1.3, depth 2, budget 50)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("best cost over time: 2 improvements, the last at 0.002 s (expansion 7)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("| fuse | 2 | %a+%b, %e+%f |"), std::string::npos) << m;
  EXPECT_NE(m.find("- bad: status refuted"), std::string::npos) << m;
  EXPECT_NE(m.find("2 reverse directions of verified rules among the usable, 1 verified rules not"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("max relative error 3e-07"), std::string::npos) << m;
  EXPECT_NE(m.find("| fuse activation | 2 |"), std::string::npos) << m;
  EXPECT_NE(m.find("| merge convolutions | 1 |"), std::string::npos) << m;
}

TEST(Report, MarkdownSaysWhenNoCheaperGraphWasFound) {
  OptimizeResult r = sample();
  r.search.best_over_time = {{0, 0, 0, 30.5}};
  EXPECT_NE(report_markdown(r, context()).find("best cost over time: no cheaper graph found"),
            std::string::npos);
}

TEST(Report, JsonCarriesTheSameFigures) {
  nlohmann::json j = nlohmann::json::parse(report_json(sample(), context()));
  EXPECT_EQ(j["format"], "tso-optimize-report");
  EXPECT_EQ(j["operators"]["after"], 2);
  EXPECT_EQ(j["predicted_cost_us"]["before"], 30.5);
  EXPECT_EQ(j["search"]["stop_reason"], "exhausted");
  EXPECT_EQ(j["search"]["expansions"], 12);
  EXPECT_EQ(j["search"]["lookahead"]["found"], 1);
  EXPECT_EQ(j["search"]["lookahead"]["expansions"], 5);
  EXPECT_EQ(j["search"]["lookahead"]["bound"], 1.3);
  ASSERT_EQ(j["search"]["best_over_time"].size(), 3u);
  EXPECT_EQ(j["search"]["best_over_time"][0]["best_cost_us"], 30.5);
  EXPECT_EQ(j["search"]["best_over_time"][0]["seconds"], 0.0);
  EXPECT_EQ(j["search"]["best_over_time"][2]["expansions"], 7);
  EXPECT_EQ(j["search"]["best_over_time"][2]["seconds"], 0.0015);
  EXPECT_EQ(j["search"]["best_over_time"][1]["measuring_seconds"], 0.0004);
  EXPECT_EQ(j["rules_applied"][0]["rule"], "fuse");
  EXPECT_EQ(j["rules_applied"][0]["count"], 2);
  EXPECT_EQ(j["rules_applied"][1]["nodes"][0][1], "%d");
  EXPECT_EQ(j["check"]["runs"], 2);
  EXPECT_EQ(j["rules_reversed"], 2);
  EXPECT_EQ(j["rules_not_reversed"], 1);
  EXPECT_EQ(j["classic_rewrites"]["fuse_activation"], 2);
  EXPECT_EQ(j["classic_rewrites"]["merge_convolutions"], 1);
  EXPECT_EQ(j["classic_rewrites"]["fold_batchnorm"], 0);
}

SpeedCheck timed(double input_min, double optimized_min, double input_median,
                 double optimized_median, int rounds_faster = 15) {
  SpeedCheck s;
  s.ran = true;
  s.note = "15 rounds";
  s.input_ms = input_min;
  s.optimized_ms = optimized_min;
  s.input_median_ms = input_median;
  s.optimized_median_ms = optimized_median;
  s.rounds = 15;
  s.rounds_faster = rounds_faster;
  s.kept_input = !optimized_wins(s);
  return s;
}

TEST(Report, TheOptimizedGraphWinsByItsMinimumItsMedianAndFourRoundsInFive) {
  EXPECT_TRUE(optimized_wins(timed(10, 9, 11, 10)));
  EXPECT_TRUE(optimized_wins(timed(10, 9, 11, 10, 12)));
  EXPECT_FALSE(optimized_wins(timed(10, 9, 11, 10, 11)));
  EXPECT_FALSE(optimized_wins(timed(10, 9, 11, 11.5)));
  EXPECT_FALSE(optimized_wins(timed(10, 10.5, 11, 10)));
  EXPECT_FALSE(optimized_wins(timed(10, 10, 11, 11)));  // a tie keeps the input
  EXPECT_EQ(kept_input_reason(timed(10, 11, 11, 12, 0)), "the optimized one measured slower");
  EXPECT_EQ(kept_input_reason(timed(10, 9, 11, 12, 7)),
            "the optimized one was faster by its minimum, not by its median, in 7 of 15 rounds");
  EXPECT_EQ(kept_input_reason(timed(10, 9, 11, 10, 11)),
            "the optimized one was faster by its minimum, by its median, in 11 of 15 rounds");
}

TEST(Report, TwoStagesWinInElevenRoundsOfFifteen) {
  SpeedCheck s = timed(10, 9, 11, 10, 22);
  s.rounds = 30;
  s.stages = 2;
  EXPECT_TRUE(optimized_wins(s));
  s.rounds_faster = 21;
  EXPECT_FALSE(optimized_wins(s));
  EXPECT_FALSE(worth_a_second_stage(s));  // only the first stage is extended
}

TEST(Report, AFirstStageFasterByBothFiguresInNineToElevenRoundsIsTooCloseToCall) {
  EXPECT_FALSE(worth_a_second_stage(timed(10, 9, 11, 10, 8)));
  EXPECT_TRUE(worth_a_second_stage(timed(10, 9, 11, 10, 9)));
  EXPECT_TRUE(worth_a_second_stage(timed(10, 9, 11, 10, 11)));
  EXPECT_FALSE(worth_a_second_stage(timed(10, 9, 11, 10, 12)));  // written already
  EXPECT_FALSE(worth_a_second_stage(timed(10, 9, 11, 11.5, 11)));
  EXPECT_FALSE(worth_a_second_stage(timed(10, 10.5, 11, 10, 11)));
}

TEST(Report, BothFormatsSayWhichCostsWereConfirmed) {
  OptimizeResult r = sample();
  EXPECT_EQ(report_markdown(r, context()).find("costs confirmed"), std::string::npos);
  r.remeasured = 3;
  r.searched_again = true;
  r.first_search_seconds = 1.5;
  const std::string m = report_markdown(r, context());
  EXPECT_NE(
      m.find("- costs confirmed: 3 measured costs of the input and the result measured a "
             "second time, which moved a prediction by over 5% or left the result no cheaper: "
             "searched again (the first "
             "search took 1.500 s)"),
      std::string::npos)
      << m;
  nlohmann::json j = nlohmann::json::parse(report_json(r, context()));
  EXPECT_EQ(j["cost_confirmation"]["remeasured"], 3);
  EXPECT_EQ(j["cost_confirmation"]["searched_again"], true);
  EXPECT_EQ(j["cost_confirmation"]["first_search_seconds"], 1.5);
  EXPECT_EQ(j["cost_confirmation"]["discarded_rewrites"], 0);
}

TEST(Report, BothFormatsSayWhenTheBestGainedLessThanTheMinimum) {
  OptimizeResult r = sample();
  ReportContext c = context();
  c.min_gain = 0.001;
  r.search.best_over_time = {{0, 0, 0, 30.5}, {0.001, 0, 3, 30.49}};
  r.search.below_min_gain_cost = 30.49;
  const std::string m = report_markdown(r, c);
  EXPECT_NE(m.find("the best, 30.49 us, gains less than the minimum (0.1% of the input's cost): "
                   "the input kept"),
            std::string::npos)
      << m;
  nlohmann::json j = nlohmann::json::parse(report_json(r, c));
  EXPECT_EQ(j["search"]["min_gain"], 0.001);
  EXPECT_EQ(j["search"]["below_min_gain_cost_us"], 30.49);
}

TEST(Report, BothFormatsSayWhenTheConfirmedCostsKeptTheInput) {
  OptimizeResult r = sample();
  r.remeasured = 4;
  r.discarded_rewrites = 7;
  r.discarded_cost = 123.456;
  const std::string m = report_markdown(r, context());
  EXPECT_NE(m.find("measured a second time; the search's graph (7 rewrites, 123.46 us) is no "
                   "cheaper than the input by them: kept the input"),
            std::string::npos)
      << m;
  nlohmann::json j = nlohmann::json::parse(report_json(r, context()));
  EXPECT_EQ(j["cost_confirmation"]["discarded_rewrites"], 7);
  EXPECT_EQ(j["cost_confirmation"]["discarded_cost_us"], 123.456);
}

TEST(Report, BothFormatsGiveTheSpeedChecksFigures) {
  ReportContext c = context();
  c.speed = timed(10, 9, 11, 12, 2);
  std::string m = report_markdown(sample(), c);
  EXPECT_NE(m.find("| measured end to end, minimum (ms) | 10.000 | 9.000 |"), std::string::npos)
      << m;
  EXPECT_NE(m.find("| measured, median (ms) | 11.000 | 12.000 |"), std::string::npos) << m;
  EXPECT_NE(m.find("written: the input graph, since the optimized one was faster by its minimum, "
                   "not by its median, in 2 of 15 rounds"),
            std::string::npos)
      << m;
  nlohmann::json j = nlohmann::json::parse(report_json(sample(), c));
  EXPECT_EQ(j["speed_check"]["input_median_ms"], 11.0);
  EXPECT_EQ(j["speed_check"]["optimized_median_ms"], 12.0);
  EXPECT_EQ(j["speed_check"]["rounds"], 15);
  EXPECT_EQ(j["speed_check"]["rounds_faster"], 2);
  EXPECT_EQ(j["speed_check"]["stages"], 1);
  EXPECT_EQ(j["speed_check"]["written"], "input");
}

}  // namespace
}  // namespace tso::opt
