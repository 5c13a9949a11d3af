// speed_check_bench: how often `tso optimize`'s speed check would write a
// graph that is not faster. A model is compared with itself, two executors of
// one graph in one process as the check compares the input and the optimized
// graph, `trials` times; each trial is judged by the check's rule (faster by
// the minimum, by the median of the rounds' medians and in every round's
// minimum: opt::optimized_wins), by the parts of it alone, and by the check
// with close calls timed again (driver::retime_close_call). The two graphs are
// the same, so every trial a rule would write is a false win; it prints each
// rule's rate, the spread of the trials' ratios and how many rounds the second
// graph won. Given OTHER (a file tso optimize wrote, say), the model is
// compared with it instead, and the rates say how often each rule writes it.
//   build/driver/speed_check_bench MODEL.onnx [trials=40] [rounds=3] [runs=5] [OTHER.onnx]
// Graph-only models get seeded random weights.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver/cost_target.h"
#include "driver/model_source.h"
#include "optimizer/report.h"

namespace {

int arg(int argc, char** argv, int i, int fallback) {
  return argc > i ? std::max(1, std::atoi(argv[i])) : fallback;
}

tso::Expected<tso::driver::LoadedModel> load(const char* path) {
  tso::driver::ModelSource source;
  source.path = path;
  source.import.random_weights_seed = 0;
  return tso::driver::load_model(source);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: speed_check_bench MODEL.onnx [trials] [rounds] [runs] [OTHER.onnx]\n");
    return 2;
  }
  const int trials = arg(argc, argv, 2, 40);
  tso::cpu::CompareOptions o;
  o.rounds = arg(argc, argv, 3, 3);
  o.runs = arg(argc, argv, 4, 5);
  tso::Expected<tso::driver::LoadedModel> m = load(argv[1]);
  if (!m) {
    std::fprintf(stderr, "speed_check_bench: %s\n", m.error().message.c_str());
    return 1;
  }
  tso::Expected<tso::driver::LoadedModel> other = load(argc > 5 ? argv[5] : argv[1]);
  if (!other) {
    std::fprintf(stderr, "speed_check_bench: %s\n", other.error().message.c_str());
    return 1;
  }
  std::vector<int> rounds_won(o.rounds + 1);
  int min_wins = 0, both_win = 0, every_round = 0, all_three = 0, close = 0, confirmed = 0;
  std::vector<double> ratios;  // second / first, by the minimum
  for (int t = 0; t < trials; ++t) {
    tso::Expected<tso::cpu::Comparison> c = tso::cpu::compare_graphs(m->graph, other->graph, o);
    if (!c) {
      std::fprintf(stderr, "speed_check_bench: %s\n", c.error().message.c_str());
      return 1;
    }
    tso::opt::SpeedCheck s = tso::driver::speed_figures(*c);
    const bool by_min = s.optimized_ms < s.input_ms;
    const bool by_median = s.optimized_median_ms < s.input_median_ms;
    min_wins += by_min;
    both_win += by_min && by_median;
    every_round += s.rounds_faster == s.rounds;
    ++rounds_won[s.rounds_faster];
    all_three += tso::opt::optimized_wins(s);
    ratios.push_back(c->b_min_ms / c->a_min_ms);
    // One graph against itself: predicted equal.
    close += tso::opt::close_call(s, 1);
    tso::Expected<tso::cpu::Comparison> retimed =
        tso::driver::retime_close_call(*c, 1, [&](int rounds) {
          tso::cpu::CompareOptions more = o;
          more.rounds = rounds;
          return tso::cpu::compare_graphs(m->graph, other->graph, more);
        });
    if (!retimed) {
      std::fprintf(stderr, "speed_check_bench: %s\n", retimed.error().message.c_str());
      return 1;
    }
    confirmed += tso::opt::optimized_wins(tso::driver::speed_figures(*retimed));
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%s: %d trials of %d alternating rounds of %d runs, against %s\n", argv[1],
              trials, o.rounds, o.runs, argc > 5 ? argv[5] : "itself");
  std::printf("written by the minimum alone:          %3d of %d (%.0f%%)\n", min_wins, trials,
              100.0 * min_wins / trials);
  std::printf("written by the minimum and the median: %3d of %d (%.0f%%)\n", both_win, trials,
              100.0 * both_win / trials);
  std::printf("written by every round's minimum:      %3d of %d (%.0f%%)\n", every_round, trials,
              100.0 * every_round / trials);
  std::printf("written by all three (the check):      %3d of %d (%.0f%%)\n", all_three, trials,
              100.0 * all_three / trials);
  std::printf("close calls (won by under %.0f%% or by more): %3d of %d\n",
              100 * tso::opt::kCloseMargin, close, trials);
  std::printf("written with close calls timed again:  %3d of %d (%.0f%%)\n", confirmed, trials,
              100.0 * confirmed / trials);
  std::printf("ratio of the minimums: %.3f to %.3f, median %.3f\n", ratios.front(), ratios.back(),
              ratios[ratios.size() / 2]);
  std::printf("rounds won by the second graph:");
  for (int k = 0; k <= o.rounds; ++k)
    if (rounds_won[k]) std::printf(" %d in %d", k, rounds_won[k]);
  std::printf("\n");
  return 0;
}
