#include "optimizer/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "core/signature.h"
#include "optimizer/graph_index.h"

namespace tso::opt {
namespace {

// A sample the fit uses: its roofline work and its measured time.
struct Prepared {
  KernelWork work;
  double log_us = 0;
  std::string op;
};

// The four parameters as the search moves them: their natural logarithms.
using Params = std::array<double, 4>;  // matmul FLOP/s, vector FLOP/s, bytes/s, launch us

Device to_device(const Params& x, const std::string& name) {
  Device d;
  d.name = name;
  d.matmul_flops = std::exp(x[0]);
  d.vector_flops = std::exp(x[1]);
  d.bytes_per_s = std::exp(x[2]);
  d.launch_us = std::exp(x[3]);
  return d;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

FitQuality quality_of(std::vector<double> abs_log) {
  FitQuality q;
  q.samples = static_cast<int>(abs_log.size());
  if (abs_log.empty()) return q;
  q.median = median_of(abs_log);
  std::sort(abs_log.begin(), abs_log.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * double(abs_log.size())));
  q.p90 = abs_log[std::max<size_t>(rank, 1) - 1];
  return q;
}

// Hooke and Jeeves' pattern search: exploratory moves along each axis, then
// jumps along the direction that paid off while they keep paying off; the
// step halves when no axis move improves. The launch cost stays at or above
// `min_log_launch`: where it is negligible the objective keeps falling by
// ever smaller amounts as it shrinks, and it would creep towards 0 for ever.
class PatternSearch {
 public:
  PatternSearch(std::span<const Prepared> samples, double min_log_launch,
                const CalibrateOptions& options)
      : samples_(samples), min_log_launch_(min_log_launch), options_(options) {}

  Params run(Params x, Calibration* result) {
    double fx = objective(x);
    double step = std::log(2.0);
    while (step >= options_.min_step && within_budget()) {
      auto [y, fy] = explore(x, fx, step);
      if (fy >= fx) {
        step /= 2;
        continue;
      }
      while (within_budget()) {
        Params z;
        for (int k = 0; k < 4; ++k) z[k] = 2 * y[k] - x[k];
        z[3] = std::max(z[3], min_log_launch_);
        x = y;
        fx = fy;
        auto [w, fw] = explore(z, objective(z), step);
        if (fw >= fx) break;
        y = w;
        fy = fw;
      }
      x = y;
      fx = fy;
    }
    result->evaluations = evaluations_;
    result->converged = step < options_.min_step;
    return x;
  }

 private:
  bool within_budget() const { return evaluations_ < options_.max_evaluations; }

  double objective(const Params& x) {
    ++evaluations_;
    const Device d = to_device(x, "");
    double sum = 0;
    for (const Prepared& s : samples_) {
      const double r = std::log(roofline_us(d, s.work)) - s.log_us;
      sum += r * r;
    }
    return sum;
  }

  std::pair<Params, double> explore(Params x, double fx, double step) {
    for (int k = 0; k < 4; ++k) {
      for (double sign : {1.0, -1.0}) {
        if (!within_budget()) return {x, fx};
        Params y = x;
        y[k] += sign * step;
        y[3] = std::max(y[3], min_log_launch_);
        const double fy = objective(y);
        if (fy < fx) {
          x = y;
          fx = fy;
          break;
        }
      }
    }
    return {x, fx};
  }

  std::span<const Prepared> samples_;
  double min_log_launch_;
  const CalibrateOptions& options_;
  int evaluations_ = 0;
};

// The start: each peak the median rate its samples achieved, the bandwidth
// likewise, the launch cost the fastest measurement. Achieved rates lie
// below the peaks a roofline through the samples implies, so every term
// starts active and the search raises it. A term that ends above all its
// samples is flat, and the search never comes back down: on the shared
// models, rates started 100x higher left the vector peak deciding no sample,
// a local minimum with a worse fit.
Expected<Params> start_point(std::span<const Prepared> samples) {
  std::vector<double> matmul, vector, bandwidth;
  double fastest = samples.front().log_us;
  for (const Prepared& s : samples) {
    const double seconds = std::exp(s.log_us) * 1e-6;
    if (s.work.flops > 0) (s.work.matmul ? matmul : vector).push_back(s.work.flops / seconds);
    if (s.work.bytes > 0) bandwidth.push_back(s.work.bytes / seconds);
    fastest = std::min(fastest, s.log_us);
  }
  if (matmul.empty())
    return Error{"no conv2d, matmul or gemm among the samples: nothing decides the matmul peak"};
  if (vector.empty())
    return Error{
        "no operator with FLOPs other than conv2d, matmul and gemm among the samples: "
        "nothing decides the vector peak"};
  return Params{std::log(median_of(matmul)), std::log(median_of(vector)),
                std::log(median_of(bandwidth)), fastest};
}

}  // namespace

std::vector<CalibrationSample> measure_signatures(std::span<const Graph> graphs,
                                                  const CostModel& measured,
                                                  const std::function<void(int, int)>& progress) {
  std::vector<CalibrationSample> samples;
  std::set<std::string> seen;
  for (const Graph& g : graphs) {
    const GraphIndex index(g);
    for (int i = 0; i < g.size(); ++i) {
      const Node& n = g.node(i);
      if (is_source(n.op) || index.constant[i] || !seen.insert(op_signature(g, i)).second) continue;
      CalibrationSample s;
      s.node = n;
      for (TensorRef a : n.args) s.inputs.push_back(g.type(a));
      samples.push_back(std::move(s));
    }
  }
  const int total = static_cast<int>(samples.size());
  for (int i = 0; i < total; ++i) {
    samples[i].us = measured.node_us(samples[i].node, samples[i].inputs);
    if (progress) progress(i + 1, total);
  }
  return samples;
}

Expected<Calibration> calibrate(std::span<const CalibrationSample> samples,
                                const CalibrateOptions& options) {
  Calibration c;
  std::vector<Prepared> prepared;
  for (const CalibrationSample& s : samples) {
    if (s.us <= 0) {
      ++c.zero;
    } else if (is_view(s.node, s.inputs)) {
      ++c.views;
    } else {
      prepared.push_back(
          {kernel_work(s.node, s.inputs), std::log(s.us), std::string(op_name(s.node.op))});
    }
  }
  if (prepared.empty())
    return Error{"nothing to fit: " + std::to_string(samples.size()) + " samples, " +
                 std::to_string(c.views) + " of them views and " + std::to_string(c.zero) +
                 " measured at 0"};
  Expected<Params> start = start_point(prepared);
  if (!start) return start.error();

  // A launch cost below a thousandth of the fastest measurement changes no
  // prediction by more than 0.1%: the search stops there and calls it 0.
  const double min_log_launch = (*start)[3] + std::log(1e-3);
  const Params x = PatternSearch(prepared, min_log_launch, options).run(*start, &c);
  c.device = to_device(x, options.name);
  if (x[3] <= min_log_launch) c.device.launch_us = 0;
  c.fitted = static_cast<int>(prepared.size());

  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_op;
  for (const Prepared& s : prepared) {
    const double predicted = roofline_us(c.device, s.work);
    const double e = std::abs(std::log(predicted) - s.log_us);
    all.push_back(e);
    by_op[s.op].push_back(e);
    const double compute =
        s.work.flops / (s.work.matmul ? c.device.matmul_flops : c.device.vector_flops);
    if (s.work.bytes / c.device.bytes_per_s >= compute)
      ++c.memory_bound;
    else
      ++(s.work.matmul ? c.matmul_bound : c.vector_bound);
  }
  c.overall = quality_of(std::move(all));
  for (auto& [op, errors] : by_op) c.per_op.emplace_back(op, quality_of(std::move(errors)));
  return c;
}

}  // namespace tso::opt
