// speed_check_bench: how often `tso optimize`'s speed check would write a
// graph that is not faster. A model is compared with itself as the check
// compares the input and the optimized graph (driver::time_in_stages:
// opt::kCheckPairs pairs of freshly planned executors, the second graph's
// first every other pair, `rounds` alternating rounds of `runs` runs each,
// and as many again where that stage is too close to call), `trials` times;
// each trial is judged by the check's rule (faster by the minimum, by the
// median of the rounds' medians and in four rounds in five of one stage,
// eleven in fifteen of two: opt::optimized_wins) and by its parts alone. The
// two graphs are the same, so every trial a rule would write is a false win;
// it prints each rule's rate, how many trials took a second stage, the
// spread of the trials' ratios and how many rounds of the first stage the
// second graph won. Given OTHER (a file tso optimize wrote, say), the model
// is compared with it instead, and the rates say how often each rule writes
// it.
//   build/driver/speed_check_bench MODEL.onnx [trials=40] [rounds=3] [runs=5] [OTHER.onnx]
// Graph-only models get seeded random weights.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/stats.h"
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

// The first `rounds` rounds of `c` alone: the first stage, as the check
// judged it before timing a second.
tso::cpu::Comparison first_stage(tso::cpu::Comparison c, int rounds) {
  for (std::vector<double>* v :
       {&c.a_round_min_ms, &c.b_round_min_ms, &c.a_round_median_ms, &c.b_round_median_ms})
    v->resize(rounds);
  c.a_min_ms = *std::min_element(c.a_round_min_ms.begin(), c.a_round_min_ms.end());
  c.b_min_ms = *std::min_element(c.b_round_min_ms.begin(), c.b_round_min_ms.end());
  c.a_median_ms = tso::median(c.a_round_median_ms);
  c.b_median_ms = tso::median(c.b_round_median_ms);
  c.rounds = rounds;
  return c;
}

void rate(const char* what, int n, int trials) {
  std::printf("%-40s %3d of %d (%.0f%%)\n", what, n, trials, 100.0 * n / trials);
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
  const int rounds = arg(argc, argv, 3, tso::opt::kCheckRounds);
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
  const int stage_rounds = tso::opt::kCheckPairs * rounds;
  std::vector<int> rounds_won(stage_rounds + 1);
  int min_wins = 0, both_win = 0, one_stage = 0, second_stages = 0, written = 0;
  std::vector<double> ratios;  // second / first, by the minimum
  for (int t = 0; t < trials; ++t) {
    tso::cpu::Comparison c;
    tso::Expected<tso::opt::SpeedCheck> s = tso::driver::time_in_stages(
        m->graph, other->graph,
        [&](const tso::Graph& a, const tso::Graph& b, int n) {
          o.rounds = n;
          return tso::cpu::compare_graphs(a, b, o);
        },
        rounds, &c);
    if (!s) {
      std::fprintf(stderr, "speed_check_bench: %s\n", s.error().message.c_str());
      return 1;
    }
    const tso::opt::SpeedCheck first = tso::driver::speed_figures(first_stage(c, stage_rounds));
    const bool by_min = first.optimized_ms < first.input_ms;
    min_wins += by_min;
    both_win += by_min && first.optimized_median_ms < first.input_median_ms;
    one_stage += tso::opt::optimized_wins(first);
    second_stages += s->stages == 2;
    written += tso::opt::optimized_wins(*s);
    ++rounds_won[first.rounds_faster];
    ratios.push_back(s->optimized_ms / s->input_ms);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%s: %d trials of %d pairs of %d alternating rounds of %d runs, against %s\n",
              argv[1], trials, tso::opt::kCheckPairs, rounds, o.runs,
              argc > 5 ? argv[5] : "itself");
  rate("written by the minimum alone:", min_wins, trials);
  rate("written by the minimum and the median:", both_win, trials);
  rate("written by the first stage alone:", one_stage, trials);
  rate("timed a second stage:", second_stages, trials);
  rate("written by the check:", written, trials);
  std::printf("ratio of the minimums: %.3f to %.3f, median %.3f\n", ratios.front(), ratios.back(),
              ratios[ratios.size() / 2]);
  std::printf("first-stage rounds won by the second graph:");
  for (int k = 0; k <= stage_rounds; ++k)
    if (rounds_won[k]) std::printf(" %d in %d", k, rounds_won[k]);
  std::printf("\n");
  return 0;
}
