// `tso run MODEL`: executes a model on a device and prints its outputs'
// statistics; `--inputs DIR` / `--outputs DIR` read and write tensors in the
// ONNX test-data convention (input_0.pb, ..., output_0.pb). The device choice
// dispatches to one small function per device (kDevices below).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "cli/commands.h"
#include "cli/model_file.h"
#include "driver/cpu_costs.h"
#include "driver/execute.h"
#include "frontend/constant_folding.h"
#include "frontend/tensor_file.h"
#include "runtime/common/memory.h"
#include "runtime/cpu/run_model.h"
#ifdef TSO_HAVE_CUDA_RUNTIME
#include "runtime/cuda/run_model.h"
#endif

namespace tso::cli {
namespace {

struct RunOptions {
  ModelFileOptions model;
  std::string device = "cpu";
  std::string inputs_dir, outputs_dir;
  uint64_t input_seed = 0;
  int iters = 0;            // timed runs; 0: the device's default
  int threads = 0;          // --device cpu: OpenMP threads, 0: all cores
  int profile = 0;          // --device cpu: runs that time every step
  std::string tf32 = "on";  // --device cuda
};

// A device runs the graph on one tensor per graph input (in input-node
// order) and returns one tensor per graph output.
using DeviceRun = Expected<std::vector<WeightData>> (*)(const Graph&,
                                                        const std::vector<WeightData>&);

struct Device {
  const char* name;
  DeviceRun run;
};
const Device kDevices[] = {{"reference", driver::run_reference}};

// Seeded random values of `type`: normal for floats; 0 or 1 for integers
// and bools, which are valid token ids, attention masks and indices into
// any table of two rows or more.
WeightData random_input(const TensorType& type, uint64_t seed) {
  onnx_frontend::HostTensor h = onnx_frontend::HostTensor::zeros(type.dtype, type.shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  for (double& x : h.f) x = normal(rng);
  for (int64_t& x : h.i) x = coin(rng);
  WeightData w = onnx_frontend::weight_from_host(h);
  w.type = type;
  return w;
}

// Reads input_K.pb for each graph input, or makes seeded random ones, after
// checking that they fit in memory.
Expected<std::vector<WeightData>> make_inputs(const Graph& g, const RunOptions& opts) {
  Count total = 0;
  for (int i : g.input_nodes())
    if (g.node(i).op == Op::Input) total = total + byte_size(g.node(i).outs[0]);
  if (!total.fits()) return Error{"the graph's inputs together exceed 2^63 bytes"};
  TSO_RETURN_IF_ERROR(rt::check_allocation(*total.value(), "the graph's inputs"));
  std::vector<WeightData> inputs;
  int k = 0;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    if (opts.inputs_dir.empty()) {
      inputs.push_back(random_input(n.outs[0], opts.input_seed + k++));
      continue;
    }
    std::string path =
        (std::filesystem::path(opts.inputs_dir) / ("input_" + std::to_string(k++) + ".pb"))
            .string();
    Expected<NamedTensor> t = read_tensor_file(path);
    if (!t) return t.error();
    if (!(t->value.type == n.outs[0]))
      return Error{path + ": holds " + to_string(t->value.type) + " but input '" + n.name +
                   "' is " + to_string(n.outs[0])};
    inputs.push_back(std::move(t->value));
  }
  return inputs;
}

// Statistics of an output of any element type (bool as 0 and 1).
void print_output(const std::string& name, const WeightData& w) {
  const onnx_frontend::HostTensor h = onnx_frontend::host_from_weight(w);
  const int64_t n = h.numel();
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double v = h.get_f(k);
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  }
  std::printf("  %s  %s  min %.6g  max %.6g  mean %.6g\n", name.c_str(), to_string(w.type).c_str(),
              n ? lo : 0.0, n ? hi : 0.0, n ? sum / n : 0.0);
}

// The outputs, output_<k>.pb, are all written to temporaries before the
// first is renamed (frontend/tensor_file.h).
Status write_outputs(const RunOptions& opts, const std::vector<GraphOutput>& names,
                     std::vector<WeightData> outs) {
  if (opts.outputs_dir.empty()) return {};
  std::error_code ec;
  std::filesystem::create_directories(opts.outputs_dir, ec);
  std::vector<std::string> paths;
  std::vector<NamedTensor> tensors;
  for (size_t k = 0; k < names.size(); ++k) {
    paths.push_back(
        (std::filesystem::path(opts.outputs_dir) / ("output_" + std::to_string(k) + ".pb"))
            .string());
    tensors.push_back({names[k].name, std::move(outs[k])});
  }
  return write_tensor_files(paths, tensors);
}

// --device cpu: the oneDNN runtime runs the inputs once, then times many
// runs (runtime/cpu/run_model.h). The graph is moved in, so that its weights
// are freed as the runtime copies them.
int run_cpu(const RunOptions& opts, Graph g, std::vector<WeightData> inputs) {
  cpu::RunOptions o;
  o.iters = opts.iters > 0 ? opts.iters : 50;
  o.threads = opts.threads;
  o.profile_iters = opts.profile;
  o.choices_file = driver::plan_choices_path(opts.threads);
  o.inputs = std::move(inputs);
  const std::vector<GraphOutput> outputs = g.outputs();
  Expected<cpu::RunReport> r = cpu::run_model(std::move(g), o);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", opts.model.file.c_str(), r.error().message.c_str());
    return kExitBadInput;
  }
  std::printf("ran %s on cpu\n%soutputs\n", opts.model.file.c_str(),
              cpu::format_run_report(*r).c_str());
  for (size_t k = 0; k < outputs.size(); ++k) print_output(outputs[k].name, r->outputs[k]);
  if (Status s = write_outputs(opts, outputs, std::move(r->outputs)); !s) {
    std::fprintf(stderr, "tso run: %s\n", s.error().message.c_str());
    return kExitIoError;
  }
  return kExitOk;
}

#ifdef TSO_HAVE_CUDA_RUNTIME
// --device cuda: the CUDA runtime runs the inputs once, then replays the
// captured run to measure its latency (runtime/cuda/run_model.h).
int run_cuda(const RunOptions& opts, const Graph& g, std::vector<WeightData> inputs) {
  cuda::RunOptions o;
  o.iters = opts.iters > 0 ? opts.iters : 200;
  o.tf32 = opts.tf32 == "on";
  o.seed = opts.model.random_weights_seed.value_or(1);
  o.inputs = std::move(inputs);
  Expected<cuda::RunReport> r = cuda::run_model(g, o);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", opts.model.file.c_str(), r.error().message.c_str());
    return kExitBadInput;
  }
  std::printf("ran %s on cuda\n%soutputs\n", opts.model.file.c_str(),
              cuda::format_run_report(*r).c_str());
  for (size_t k = 0; k < g.outputs().size(); ++k) print_output(g.outputs()[k].name, r->outputs[k]);
  return kExitOk;
}
#endif

// Loads the model and its inputs; nullopt (with `*code` set) on failure.
std::optional<std::pair<ModelFile, std::vector<WeightData>>> load(const RunOptions& opts,
                                                                  int* code) {
  std::optional<ModelFile> m = load_model_file(opts.model, "run", code, ModelUse::kRun);
  if (!m) return std::nullopt;
  Expected<std::vector<WeightData>> inputs = make_inputs(m->graph, opts);
  if (!inputs) {
    std::fprintf(stderr, "tso run: %s\n", inputs.error().message.c_str());
    *code = kExitBadInput;
    return std::nullopt;
  }
  return std::make_pair(std::move(*m), std::move(*inputs));
}

int run_model(const RunOptions& opts) {
  int code = kExitOk;
  if (opts.device == "cpu") {
    auto loaded = load(opts, &code);
    return loaded ? run_cpu(opts, std::move(loaded->first.graph), std::move(loaded->second)) : code;
  }
#ifdef TSO_HAVE_CUDA_RUNTIME
  if (opts.device == "cuda") {
    auto loaded = load(opts, &code);
    return loaded ? run_cuda(opts, loaded->first.graph, std::move(loaded->second)) : code;
  }
#endif
  const Device* device = nullptr;
  for (const Device& d : kDevices)
    if (opts.device == d.name) device = &d;
  if (!device) {
    std::fprintf(stderr, "tso run: device '%s' is not in this build (no CUDA compiler was found)\n",
                 opts.device.c_str());
    return kExitBadInput;
  }
  auto load_start = std::chrono::steady_clock::now();
  auto loaded = load(opts, &code);
  if (!loaded) return code;
  const Graph& g = loaded->first.graph;
  double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  auto start = std::chrono::steady_clock::now();
  Expected<std::vector<WeightData>> outs = device->run(g, loaded->second);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outs) {
    std::fprintf(stderr, "%s: %s\n", opts.model.file.c_str(), outs.error().message.c_str());
    return kExitBadInput;
  }
  std::printf("loaded %s in %.1f ms (%d operators)\n", opts.model.file.c_str(), load_ms,
              g.num_operators());
  std::printf("ran it on %s in %.1f ms\noutputs\n", device->name, ms);
  const auto& go = g.outputs();
  for (size_t k = 0; k < go.size(); ++k) print_output(go[k].name, (*outs)[k]);
  if (Status s = write_outputs(opts, g.outputs(), std::move(*outs)); !s) {
    std::fprintf(stderr, "tso run: %s\n", s.error().message.c_str());
    return kExitIoError;
  }
  return kExitOk;
}

}  // namespace

Command add_run(CLI::App& tso) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* app = tso.add_subcommand("run", "Execute a model and print its outputs");
  app->add_option("MODEL", opts->model.file, "an ONNX model (.onnx) or a .tso graph with weights")
      ->required();
  add_model_file_options(app, &opts->model);
  app->add_option("--device", opts->device,
                  "where to run: cpu (the oneDNN runtime), reference (the reference executor) "
                  "or cuda (the GPU runtime)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "reference", "cuda"}));
  app->add_option("--iters", opts->iters,
                  "timed runs (cpu, default 50) or replays of the captured run (cuda, default 200)")
      ->check(CLI::PositiveNumber);
  app->add_option("--threads", opts->threads, "--device cpu: threads (0: all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--profile", opts->profile,
                  "--device cpu: also time every step over N runs and list them, slowest first")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--tf32", opts->tf32, "--device cuda: TF32 tensor cores for conv and matmul")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option("--inputs", opts->inputs_dir, "directory with input_0.pb, input_1.pb, ...");
  app->add_option("--outputs", opts->outputs_dir, "directory to write output_0.pb, ... into");
  app->add_option("--seed", opts->input_seed, "seed of the random inputs (without --inputs)")
      ->capture_default_str();
  return {app, [opts] { return run_model(*opts); }};
}

}  // namespace tso::cli
