// `tso profile MODEL --device cpu|cuda -o COSTS.json`: times every operator
// signature of a model with the runtime's own plan (runtime/cpu on oneDNN,
// or runtime/cuda's kernels) and writes the cost table the optimizer's
// measured cost model reads (runtime/common/cost_table.h).
#include <cstdio>

#include "cli/commands.h"
#include "cli/model_file.h"
#include "driver/cpu_costs.h"
#include "runtime/common/cost_table.h"
#include "runtime/cpu/profiler.h"
#ifdef TSO_HAVE_CUDA_RUNTIME
#include "runtime/cuda/profiler.h"
#endif

namespace tso::cli {
namespace {

struct ProfileFlags {
  ModelFileOptions model;
  std::string output;
  std::string device = "cpu";
  int iters = 100;
  int threads = 0;
  std::string tf32 = "on";
};

void print_progress(int done, int total, const std::string& sig) {
  std::fprintf(stderr, "\r[%d/%d] %.100s\033[K", done, total, sig.c_str());
  if (done == total) std::fprintf(stderr, "\n");
}

Expected<rt::CostTable> profile_on_device(const ProfileFlags& f, const Graph& g) {
  if (f.device == "cpu") {
    cpu::ProfileOptions o;
    o.iters = f.iters;
    o.threads = f.threads;
    o.choices_file = driver::plan_choices_path(f.threads);
    o.progress = print_progress;
    return cpu::profile_model(g, f.model.file, o);
  }
#ifdef TSO_HAVE_CUDA_RUNTIME
  cuda::ProfileOptions o;
  o.iters = f.iters;
  o.tf32 = f.tf32 == "on";
  o.progress = print_progress;
  return cuda::profile_graph(g, f.model.file, o);
#else
  return Error{"this tso was built without the CUDA runtime; use --device cpu"};
#endif
}

int profile(const ProfileFlags& f) {
  int code = kExitOk;
  std::optional<ModelFile> m = load_model_file(f.model, "profile", &code, ModelUse::kRun);
  if (!m) return code;
  Expected<rt::CostTable> table = profile_on_device(f, m->graph);
  if (!table) {
    std::fprintf(stderr, "tso profile: %s: %s\n", f.model.file.c_str(),
                 table.error().message.c_str());
    return kExitBadInput;
  }
  Status s = rt::write_cost_table(*table, f.output);
  if (!s.ok()) {
    std::fprintf(stderr, "tso profile: %s\n", s.error().message.c_str());
    return kExitIoError;
  }
  std::printf("%zu operator signatures of %s timed on %s, written to %s\n", table->entries.size(),
              f.model.file.c_str(), table->device.c_str(), f.output.c_str());
  return kExitOk;
}

}  // namespace

Command add_profile(CLI::App& tso) {
  auto f = std::make_shared<ProfileFlags>();
  CLI::App* app = tso.add_subcommand(
      "profile", "Time every operator signature of a model on a runtime and write a cost table");
  app->add_option("MODEL", f->model.file, "an ONNX model (.onnx) or a .tso graph")->required();
  add_model_file_options(app, &f->model);
  app->add_option("-o,--output", f->output, "the cost table to write (JSON)")->required();
  app->add_option("--device", f->device, "the runtime that times: cpu (oneDNN) or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--iters", f->iters, "timed runs per signature")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_option("--threads", f->threads, "CPU threads (--device cpu; 0: all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--tf32", f->tf32, "TF32 tensor cores for conv and matmul (--device cuda)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  return {app, [f] { return profile(*f); }};
}

}  // namespace tso::cli
