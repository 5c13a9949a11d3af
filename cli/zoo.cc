// `tso zoo NAME -o FILE`: writes a benchmark model that has no ONNX file of
// its own (TASO's NasRNN) as ONNX.
#include <cstdio>

#include "cli/commands.h"
#include "frontend/nasrnn.h"
#include "frontend/onnx.h"

namespace tso::cli {
namespace {

struct ZooOptions {
  std::string model;
  std::string output;
  uint64_t seed = 0;
};

int run_zoo(const ZooOptions& opts) {
  NasRnnOptions o;
  o.seed = opts.seed;
  Expected<Graph> g = build_nasrnn(o);
  if (!g) {
    std::fprintf(stderr, "tso zoo: %s\n", g.error().message.c_str());
    return kExitBadInput;
  }
  Status s = export_onnx(*g, opts.output);
  if (!s) {
    std::fprintf(stderr, "tso zoo: %s\n", s.error().message.c_str());
    return kExitIoError;
  }
  std::printf("wrote %s (%s, %d operators)\n", opts.output.c_str(), opts.model.c_str(),
              g->num_operators());
  return kExitOk;
}

}  // namespace

Command add_zoo(CLI::App& tso) {
  auto opts = std::make_shared<ZooOptions>();
  CLI::App* app = tso.add_subcommand("zoo", "Write a benchmark model without an ONNX file as ONNX");
  app->add_option("MODEL", opts->model, "the model: nasrnn (TASO's NasRNN, 5 steps, hidden 512)")
      ->required()
      ->check(CLI::IsMember({"nasrnn"}));
  app->add_option("-o,--output", opts->output, "the ONNX file to write")->required();
  app->add_option("--seed", opts->seed, "seed of the random weights")->capture_default_str();
  return {app, [opts] { return run_zoo(*opts); }};
}

}  // namespace tso::cli
