// `tso zoo NAME -o FILE`: writes a benchmark model that has no ONNX file of
// its own (TASO's NasRNN, PET's CSRNet, torchvision's ResNet-18) as ONNX.
#include <charconv>
#include <cstdio>

#include "cli/commands.h"
#include "frontend/csrnet.h"
#include "frontend/nasrnn.h"
#include "frontend/onnx.h"
#include "frontend/resnet18.h"

namespace tso::cli {
namespace {

struct ZooOptions {
  std::string model;
  std::string output;
  uint64_t seed = 0;
  int64_t batch = 1;
  std::string size = "224x224";
  CLI::Option* batch_flag = nullptr;
  CLI::Option* size_flag = nullptr;
};

// "HxW" with both positive.
bool parse_size(const std::string& text, int64_t* height, int64_t* width) {
  const char* end = text.data() + text.size();
  auto [x, e1] = std::from_chars(text.data(), end, *height);
  if (e1 != std::errc() || x == end || *x != 'x') return false;
  auto [rest, e2] = std::from_chars(x + 1, end, *width);
  return e2 == std::errc() && rest == end && *height > 0 && *width > 0;
}

Expected<Graph> build(const ZooOptions& opts) {
  if (opts.model == "nasrnn") {
    if (opts.batch_flag->count() || opts.size_flag->count())
      return Error{
          "--batch and --size apply to csrnet and resnet18 only (nasrnn has batch 1, no image)"};
    NasRnnOptions o;
    o.seed = opts.seed;
    return build_nasrnn(o);
  }
  int64_t height = 0, width = 0;
  if (!parse_size(opts.size, &height, &width))
    return Error{"--size must be HEIGHTxWIDTH, e.g. 224x224, not '" + opts.size + "'"};
  if (opts.model == "resnet18")
    return build_resnet18(
        {.batch = opts.batch, .height = height, .width = width, .seed = opts.seed});
  return build_csrnet({.batch = opts.batch, .height = height, .width = width, .seed = opts.seed});
}

int run_zoo(const ZooOptions& opts) {
  Expected<Graph> g = build(opts);
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
  app->add_option("MODEL", opts->model,
                  "the model: nasrnn (TASO's NasRNN, 5 steps, hidden 512), csrnet (PET's "
                  "CSRNet: VGG-16's first ten convolutions, six dilated ones, a 1x1 to a "
                  "density map at 1/8 of the image) or resnet18 (torchvision's ResNet-18: "
                  "BasicBlocks with batchnorm, 1000 logits)")
      ->required()
      ->check(CLI::IsMember({"nasrnn", "csrnet", "resnet18"}));
  app->add_option("-o,--output", opts->output, "the ONNX file to write")->required();
  app->add_option("--seed", opts->seed, "seed of the random weights")->capture_default_str();
  opts->batch_flag = app->add_option("--batch", opts->batch, "csrnet, resnet18: images per batch")
                         ->capture_default_str();
  opts->size_flag = app->add_option("--size", opts->size,
                                    "csrnet, resnet18: image HEIGHTxWIDTH (224x224 as ImageNet's; "
                                    "csrnet needs at least 8x8)")
                        ->capture_default_str();
  return {app, [opts] { return run_zoo(*opts); }};
}

}  // namespace tso::cli
