// `tso calibrate MODEL... -o DEVICE.json`: measures every operator signature
// of the models on the CPU runtime, through the cost cache `tso optimize
// --device cpu` uses (so a signature either measured is not timed again),
// fits the analytic model's four numbers to the measurements
// (optimizer/calibrate.h), prints how well they fit and writes the device
// file `tso optimize --device FILE` reads.
#include "optimizer/calibrate.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_file.h"
#include "cli/table.h"
#include "driver/cpu_costs.h"

namespace tso::cli {
namespace {

struct CalibrateFlags {
  std::vector<std::string> models;
  ModelFileOptions model;  // --random-weights; `file` set per model
  std::string output;
  std::string name;
  std::string cost_cache;
};

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "tso calibrate: %s\n", message.c_str());
  return code;
}

std::string general(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// "median 0.31 (x1.36), 90th percentile 0.92 (x2.51)": the |log ratio| and
// the factor it means.
std::string describe(const opt::FitQuality& q) {
  return "median " + fixed(q.median, 3) + " (x" + fixed(std::exp(q.median), 2) +
         "), 90th percentile " + fixed(q.p90, 3) + " (x" + fixed(std::exp(q.p90), 2) + ")";
}

std::string decides(int samples) {
  return samples == 0 ? "decides no sample: a lower bound"
                      : "decides " + std::to_string(samples) + " samples";
}

// The models, comma-separated: their paths, or only their file names.
std::string model_list(const std::vector<std::string>& models, bool file_names) {
  std::string list;
  for (const std::string& m : models)
    list += (list.empty() ? "" : ", ") +
            (file_names ? std::filesystem::path(m).filename().string() : m);
  return list;
}

// What the device file says of where its figures come from.
std::string source_line(const opt::Calibration& c, const std::vector<std::string>& models,
                        const std::string& device) {
  return "fitted by tso calibrate to " + std::to_string(c.fitted) +
         " operator signatures measured on the CPU runtime (" + device + ") in " +
         model_list(models, true) + "; |ln(predicted / measured)|: " + describe(c.overall);
}

void print_fit(const opt::Calibration& c) {
  const opt::Device& d = c.device;
  std::printf(
      "fitted          %d signatures (%d views and %d measured at 0 left out), %s after %d "
      "evaluations\n",
      c.fitted, c.views, c.zero, c.converged ? "converged" : "budget spent", c.evaluations);
  std::printf("matmul peak     %s TFLOP/s (%s)\n", general(d.matmul_flops / 1e12).c_str(),
              decides(c.matmul_bound).c_str());
  std::printf("vector peak     %s TFLOP/s (%s)\n", general(d.vector_flops / 1e12).c_str(),
              decides(c.vector_bound).c_str());
  std::printf("bandwidth       %s GB/s (%s)\n", general(d.bytes_per_s / 1e9).c_str(),
              decides(c.memory_bound).c_str());
  std::printf("launch          %s us\n", general(d.launch_us).c_str());
  std::printf("fit             |ln(predicted / measured)|: %s\n", describe(c.overall).c_str());
  Table t({{"operator"},
           {"signatures", Table::Align::kRight},
           {"median", Table::Align::kRight},
           {"90th pct", Table::Align::kRight}});
  for (const auto& [op, q] : c.per_op)
    t.add_row({op, std::to_string(q.samples), fixed(q.median, 3), fixed(q.p90, 3)});
  std::cout << "\nper operator (|ln(predicted / measured)|)\n";
  t.print(std::cout, 2);
  std::cout.flush();
}

int calibrate(const CalibrateFlags& f) {
  std::unique_ptr<opt::CachedCost> cache;
  {
    Expected<std::unique_ptr<opt::CachedCost>> c =
        driver::open_cpu_cost_cache(f.cost_cache, nullptr);
    if (!c) return fail(kExitBadInput, c.error().message);
    cache = std::move(*c);
  }
  if (!cache->set_aside().empty())
    std::fprintf(stderr, "tso calibrate: warning: %s\n", cache->set_aside().c_str());
  std::vector<Graph> graphs;
  for (const std::string& path : f.models) {
    ModelFileOptions o = f.model;
    o.file = path;
    int code = kExitOk;
    std::optional<ModelFile> m = load_model_file(o, "calibrate", &code, ModelUse::kRun);
    if (!m) return code;
    graphs.push_back(std::move(m->graph));
  }

  const std::vector<opt::CalibrationSample> samples =
      opt::measure_signatures(graphs, *cache, [](int done, int total) {
        std::fprintf(stderr, "\rmeasuring %d/%d signatures\033[K", done, total);
        if (done == total) std::fprintf(stderr, "\n");
      });
  // Kept whatever the fit says: the measurements are the expensive part.
  if (Status s = cache->save(); !s.ok())
    std::fprintf(stderr, "tso calibrate: warning: %s\n", s.error().message.c_str());
  std::printf("measured        %zu signatures: %d timed now, %d found in %s, %zu not measurable\n",
              samples.size(), cache->measured(), cache->found(), cache->path().c_str(),
              cache->failed().size());

  const std::string device = driver::cpu_cost_device();
  Expected<opt::Calibration> c =
      opt::calibrate(samples, {.name = f.name.empty() ? device : f.name});
  if (!c) return fail(kExitBadInput, model_list(f.models, false) + ": " + c.error().message);
  print_fit(*c);
  if (Status s = opt::save_device(c->device, source_line(*c, f.models, device), f.output); !s.ok())
    return fail(kExitIoError, s.error().message);
  std::printf("\nwrote %s\n", f.output.c_str());
  return kExitOk;
}

}  // namespace

Command add_calibrate(CLI::App& tso) {
  auto f = std::make_shared<CalibrateFlags>();
  CLI::App* app = tso.add_subcommand(
      "calibrate",
      "Fit the analytic cost model to operator times measured on this CPU and write a device file");
  app->add_option("MODEL", f->models, "models whose operator signatures are measured (.onnx, .tso)")
      ->required();
  add_model_file_options(app, &f->model);
  app->add_option("-o,--output", f->output, "the device file to write (JSON)")->required();
  app->add_option("--name", f->name, "the device's name (default: the CPU device string)");
  app->add_option("--cost-cache", f->cost_cache,
                  "the cache of measured costs (default ~/.cache/tso/costs-<device hash>.json, "
                  "shared with tso optimize --device cpu)");
  return {app, [f] { return calibrate(*f); }};
}

}  // namespace tso::cli
