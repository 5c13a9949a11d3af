// The machine `tso optimize` (and the Python module's tso.optimize) optimizes
// for: how the search costs graphs there and how the result is timed end to
// end before it is written.
//
//   --cost TABLE      a table measured elsewhere (tso profile, ONNX Runtime
//                     through experiments/ort_costs.py); timed end to end
//                     only when tso's own runtime measured it here
//   --device cpu      costs measured on demand on tso's CPU runtime, cached
//   --device cuda     the same on the GPU runtime
//   --device FILE     the analytic model of a device file (no runtime)
//   (neither)         cuda when a GPU is visible, else cpu
//
// Measured models fall back to the analytic model (the calibrated CPU
// device file, or h100.json for a GPU) for signatures they cannot measure.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/cost_cache.h"
#include "optimizer/measured_cost.h"
#include "optimizer/optimize.h"
#include "optimizer/report.h"
#include "runtime/cpu/run_model.h"

namespace tso::driver {

struct CostTargetFlags {
  std::string device;      // "cpu", "cuda", a device file, or empty
  std::string cost;        // a cost table, or empty
  std::string cost_cache;  // the on-demand cache file, or empty for the default
};

enum class TargetRuntime { kNone, kCpu, kCuda };

struct CostTarget {
  std::string name;  // "cpu", "cuda", the device file or the table
  std::unique_ptr<opt::AnalyticCost> analytic;
  std::unique_ptr<opt::MeasuredCost> table;  // --cost
  std::unique_ptr<opt::CachedCost> cache;    // --device cpu|cuda
  const opt::CostModel* model = nullptr;     // the one the search uses
  TargetRuntime runtime = TargetRuntime::kNone;
  std::string no_runtime;  // why the result is not timed, when runtime is kNone
};

// Errors name the file (a device file, table or cache that is malformed or
// of another device) or say why a runtime is not available.
Expected<std::unique_ptr<CostTarget>> open_cost_target(const CostTargetFlags& flags);

// For a target measured on the CPU runtime: whether `g`'s weights stay
// cached between its runs (cpu::measure_weight_residency, on `g` itself), so
// that its operators are timed with their weights in the last-level cache
// or from memory; said in the cost model's description. Other targets are
// left alone.
void set_weight_residency(CostTarget& target, const Graph& g);

// Whether a model measured as `r` has its operators timed with their
// weights cached. A steady state faster than the evicted runs (r.cached())
// shows that some weights stay cached, not that all do: NasRNN's 84 MB ran
// 1.74 ms run after run and 2.09 ms evicted, and its operators timed with
// their weights cached summed to 0.71 ms. So of the two ways to time them,
// the one whose sum over the model (`operators_ms(cached)`, asked only when
// r.cached()) is nearer the steady state is taken.
bool time_weights_cached(const cpu::WeightResidency& r,
                         const std::function<double(bool cached)>& operators_ms);

// The check's figures from a comparison of the input (a) with the optimized
// graph (b) over `stages` stages, `kept_input` unless opt::optimized_wins;
// the note is left empty.
opt::SpeedCheck speed_figures(const cpu::Comparison& c, int stages = 1);

// `compare(a, b, n)`: n alternating rounds of graphs a and b on a runtime,
// each planned afresh.
using CompareRounds =
    std::function<Expected<cpu::Comparison>(const Graph& a, const Graph& b, int rounds)>;

// The check's timing of `input` (a) against `optimized` (b): opt::kCheckPairs
// comparisons of `rounds` rounds joined into one, every other one planning
// the optimized graph first (its figures put back in b's place).
Expected<cpu::Comparison> compare_in_pairs(const Graph& input, const Graph& optimized,
                                           const CompareRounds& compare,
                                           int rounds = opt::kCheckRounds);

// The check's timing and verdict: compare_in_pairs, and where that stage is
// too close to call (opt::worth_a_second_stage) a second one, judged with
// the first. `comparison`, when set, receives the rounds (both stages').
Expected<opt::SpeedCheck> time_in_stages(const Graph& input, const Graph& optimized,
                                         const CompareRounds& compare,
                                         int rounds = opt::kCheckRounds,
                                         cpu::Comparison* comparison = nullptr);

// Times `input` and `r.graph` end to end on the target's runtime,
// alternating, and says which to write (optimized_wins); not run when nothing
// changed, the target has no runtime here, or a graph cannot run there.
// `progress`, when set, hears that the timing starts.
opt::SpeedCheck check_speed(const CostTarget& target, const Graph& input,
                            const opt::OptimizeResult& r,
                            const std::function<void(const std::string&)>& progress);

}  // namespace tso::driver
