// Calibrating the analytic model to a machine: a Device whose roofline
// (AnalyticCost) predicts measured operator times as closely as four numbers
// can. `tso calibrate` measures every operator signature of some models on
// the CPU runtime and fits a device file from them, so the analytic model
// serves a machine it was never given a datasheet for.
//
// The fit minimises the sum over samples of (ln predicted - ln measured)^2:
// every signature counts alike whether it takes 2 us or 20 ms, and a factor
// of two is the same error either way. Views (no kernel) and samples measured
// at 0 (nothing ran) say nothing about the four numbers and are left out. The
// search is Hooke and Jeeves' pattern search over the logarithms of the four
// parameters, from a start read off the samples (medians of the achieved
// rates, the fastest measurement as the launch cost), with a budget of
// objective evaluations; the result says why it stopped. A launch cost that
// falls below a thousandth of the fastest measurement is negligible and
// written as 0.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/cost_model.h"

namespace tso::opt {

// One measured operator signature.
struct CalibrationSample {
  Node node;
  std::vector<TensorType> inputs;  // argument types
  double us = 0;                   // measured time, microseconds
};

// The distinct operator signatures of `graphs` that the search costs (not
// sources, not weight-only nodes), the first node of each, with the time
// `measured` gives it (the CLI passes a CachedCost measuring on demand).
// `progress(done, total)` is called after each.
std::vector<CalibrationSample> measure_signatures(
    std::span<const Graph> graphs, const CostModel& measured,
    const std::function<void(int, int)>& progress = {});

// How far predictions are from measurements: |ln(predicted / measured)|.
struct FitQuality {
  int samples = 0;
  double median = 0;  // median |log ratio|
  double p90 = 0;     // 90th percentile (nearest rank)
};

struct CalibrateOptions {
  std::string name;               // the fitted device's name
  int max_evaluations = 200'000;  // objective evaluations the search may spend
  double min_step = 1e-6;         // stop when the step in ln(parameter) falls below
};

struct Calibration {
  Device device;
  FitQuality overall;
  // Per operator name, in name order.
  std::vector<std::pair<std::string, FitQuality>> per_op;
  int fitted = 0;  // samples in the fit
  int views = 0;   // left out: views
  int zero = 0;    // left out: measured at 0
  // Fitted samples whose prediction each term of the roofline decides: a
  // parameter that decides none is only bounded (any value past it fits as
  // well), which the CLI says.
  int matmul_bound = 0;    // FLOPs at the matmul peak
  int vector_bound = 0;    // FLOPs at the vector peak
  int memory_bound = 0;    // bytes at the bandwidth
  int evaluations = 0;     // objective evaluations spent
  bool converged = false;  // the step fell below min_step; else the budget ran out
};

// Fits a device to `samples`. An error when nothing is left to fit, or when
// no sample decides the matmul or the vector peak (no conv2d, matmul or gemm;
// no other operator with FLOPs): those would be numbers nothing measured.
Expected<Calibration> calibrate(std::span<const CalibrationSample> samples,
                                const CalibrateOptions& options);

}  // namespace tso::opt
