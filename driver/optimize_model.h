// `tso optimize` as a function, shared by the CLI and the Python module: read
// the rule files, open the target (driver/cost_target.h), load the model,
// search, fold and check it numerically (optimizer/optimize.h), optionally
// write the signatures a cost table lacks, and time the input against the
// result on the target's runtime. It writes no model: the caller writes
// `written()` where it wants, and the report from `report`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "driver/cost_target.h"
#include "driver/model_source.h"
#include "optimizer/optimize.h"
#include "optimizer/report.h"

namespace tso::driver {

struct OptimizeModelOptions {
  std::vector<std::string> rules;  // rule files; empty: opt::default_rule_files()
  bool allow_unverified = false;   // also rules not proved: for tests only
  CostTargetFlags target;
  opt::SearchOptions search;  // its `progress` is set from `progress` below
  opt::CheckOptions check;    // the numerical check of the result
  // With `target.cost`: write each signature the table lacks as a
  // one-operator ONNX model into this directory (frontend/signature_models.h).
  std::string missing_costs;
  bool verify_speed = true;  // false: the optimized graph is kept untimed
  // One line each, without a newline; unset sinks hear nothing.
  // `warning`: what the user should know (import warnings, refused rules, a
  // cache that could not be saved); `info`: the cost cache's counts, which
  // the command always prints; `progress`: what the run is doing (search,
  // measuring, timing).
  std::function<void(const std::string&)> warning;
  std::function<void(const std::string&)> info;
  std::function<void(const std::string&)> progress;
};

// Why optimize_model failed, for the CLI's exit code. kBadModel: the model is
// malformed or ill-typed, and the message starts with its location
// ("model.onnx: node 'conv1' (Conv): ...", "graph.tso:5:15: ...").
enum class Failure { kIo, kBadInput, kBadModel, kCheckFailed };

struct OptimizedModel {
  LoadedModel input;
  opt::OptimizeResult result;
  opt::ReportContext report;  // with the speed check
  int missing_written = 0;    // with missing_costs: signatures written there
  size_t missing_not_exported = 0;
  // The graph to write: the optimized one, or the input where it measured
  // faster (report.speed.kept_input).
  const Graph& written() const { return report.speed.kept_input ? input.graph : result.graph; }
};

// `source.path` names the model in messages and the report. Errors carry
// the messages `tso optimize` prints; `failure`, when given, says which kind.
Expected<OptimizedModel> optimize_model(const ModelSource& source,
                                        const OptimizeModelOptions& options,
                                        Failure* failure = nullptr);

}  // namespace tso::driver
