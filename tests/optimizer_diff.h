// Differential fuzzing of the optimizer (issue 17, point 4). A seeded graph
// of the rules' patterns (core/testing/pattern_graph.h) is optimized with
// every rule `tso optimize` loads by default (search and weight folding, as
// optimize() runs them, but without its own fp32 check, so that a wrong
// result is seen here rather than refused there) and also rewritten by a
// seeded walk of matches taken whatever they cost, which reaches the rules
// that never pay. Each result is compared with the original on the
// reference executor in double, and the original and the optimized graph
// run on the CPU runtime (oneDNN, float) against that double reference.
// Tolerances (relative error max|a-b| / max(max|b|, 1e-6), core/ops.h):
//   rewritten graphs, double             1e-9  (reassociation only)
//   optimized and folded graph, double   1e-5  (folded weights are f32)
//   CPU runtime, float                   1e-4  (core/ops.h's fp32 bound)
// The last two are raised, where that is larger, to 8 times the error of
// the reference executor run in float on the original graph (never on the
// graph under test, whose error a false rewrite would raise alike): an
// output whose sums cancel (relus that zero all but a few terms: 5e-4 at
// most, from terms of order 1) carries f32 rounding of its terms' size, in
// any f32 computation alike (seed 900348: 1.45e-4 on the CPU runtime, its
// values the float reference's bit for bit; seed 911715: 1.33e-5 folded,
// 3.83e-6 in float).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "optimizer/rewrite_kind.h"
#include "optimizer/search.h"

namespace tso::fuzz {

struct DiffOptions {
  int max_operators = 30;  // of each generated graph
  // A small search: a few milliseconds per graph, time limit never reached
  // (a result that depended on the clock could not be reproduced by seed).
  int64_t max_expansions = 24;
  int64_t stall_expansions = 8;
  int walk_steps = 4;  // rewrites of the walk (fewer when nothing matches)
  bool cpu = true;     // also run on the CPU runtime
  double exact_tolerance = 1e-9;
  double folded_tolerance = 1e-5;
  double cpu_tolerance = 1e-4;
  double f32_factor = 8;
};

// Where a graph and its reference disagree: "search" (the search's best
// graph), "walk", "fold" (the optimized graph after folding), "cpu original",
// "cpu optimized"; an error (a stage that failed) is a mismatch too.
struct Mismatch {
  std::string stage;
  std::string detail;
};

// A rewrite that fired: the rule, its kind (rewrite_kind.h) and the rule
// file it comes from.
struct Fired {
  std::string rule;
  opt::RewriteKind kind = opt::RewriteKind::kOther;
  std::string file;
};

struct DiffOutcome {
  int operators = 0;
  std::vector<Fired> searched;  // the path to the search's best graph
  std::vector<Fired> walked;
  std::vector<Mismatch> mismatches;
  // The graphs in the text format: the input, the search's best before and
  // after folding, the walk's result.
  std::string original, searched_graph, optimized, walk;
};

class OptimizerDiff {
 public:
  // Loads the rule files and the analytic cost model's device file.
  static Expected<std::unique_ptr<OptimizerDiff>> create(const std::vector<std::string>& rule_files,
                                                         const std::string& device_file,
                                                         const DiffOptions& options = {});
  ~OptimizerDiff();
  // Generates, optimizes, walks and compares the graph of `seed`.
  DiffOutcome run(uint64_t seed) const;
  int compiled_rules() const;

  struct Impl;

 private:
  explicit OptimizerDiff(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tso::fuzz
