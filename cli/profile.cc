// `tso profile MODEL -o COSTS.json`: times every operator signature of a
// model on the GPU with the CUDA runtime's kernels and writes the cost table
// the optimizer's measured cost model reads (runtime/common/cost_table.h).
#include <cstdio>

#include "cli/commands.h"
#include "cli/model_file.h"
#ifdef TSO_HAVE_CUDA_RUNTIME
#include "runtime/common/cost_table.h"
#include "runtime/cuda/profiler.h"
#endif

namespace tso::cli {
namespace {

struct ProfileFlags {
  ModelFileOptions model;
  std::string output;
  int iters = 100;
  std::string tf32 = "on";
};

int profile(const ProfileFlags& f) {
#ifdef TSO_HAVE_CUDA_RUNTIME
  int code = kExitOk;
  std::optional<ModelFile> m = load_model_file(f.model, "profile", &code);
  if (!m) return code;
  cuda::ProfileOptions o;
  o.iters = f.iters;
  o.tf32 = f.tf32 == "on";
  o.progress = [](int done, int total, const std::string& sig) {
    std::fprintf(stderr, "\r[%d/%d] %.100s\033[K", done, total, sig.c_str());
    if (done == total) std::fprintf(stderr, "\n");
  };
  Expected<rt::CostTable> table = cuda::profile_graph(m->graph, f.model.file, o);
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
#else
  std::fprintf(stderr, "tso profile: this tso was built without the CUDA runtime\n");
  return kExitBadInput;
#endif
}

}  // namespace

Command add_profile(CLI::App& tso) {
  auto f = std::make_shared<ProfileFlags>();
  CLI::App* app = tso.add_subcommand(
      "profile", "Time every operator signature of a model on the GPU and write a cost table");
  app->add_option("MODEL", f->model.file, "an ONNX model (.onnx) or a .tso graph")->required();
  add_model_file_options(app, &f->model);
  app->add_option("-o,--output", f->output, "the cost table to write (JSON)")->required();
  app->add_option("--iters", f->iters, "timed replays per signature")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_option("--tf32", f->tf32, "TF32 tensor cores for conv and matmul")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  return {app, [f] { return profile(*f); }};
}

}  // namespace tso::cli
