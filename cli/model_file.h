// The flags that say how to load a model, shared by every subcommand that
// takes one; loading it is driver::load_model (driver/model_source.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "driver/model_source.h"
#include "frontend/onnx.h"

namespace tso::cli {

struct ModelFileOptions {
  std::string file;
  std::optional<uint64_t> random_weights_seed;
  std::optional<int64_t> batch;  // ONNX models only (ImportOptions::batch)
  // ONNX models only: `NAME:D0,D1,...` or `D0,D1,...` (ImportOptions::input_shapes).
  std::vector<std::string> input_shapes;
};

// Adds `--random-weights SEED`, `--batch N` and `--input-shape NAME:D0,D1,...`.
void add_model_file_options(CLI::App* app, ModelFileOptions* opts);

// The import options the flags give; errors for a malformed --input-shape or
// one given twice.
Expected<ImportOptions> import_options(const ModelFileOptions& opts);

using ModelFile = driver::LoadedModel;

// What a command does with the model: transform or describe it, or run it,
// which needs its whole function on tso's runtimes (no dynamic part).
enum class ModelUse { kTransform, kRun };

// Loads the file; prints import warnings to stderr. On failure prints the
// error and returns the exit code in `*exit_code`.
std::optional<ModelFile> load_model_file(const ModelFileOptions& opts, const char* command,
                                         int* exit_code, ModelUse use = ModelUse::kTransform);

// Prints the opaque nodes of an imported model, one row each, with why.
void print_opaque_nodes(std::ostream& out, const std::vector<OpaqueNodeInfo>& nodes);

}  // namespace tso::cli
