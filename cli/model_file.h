// Loading the model a subcommand is given: an ONNX file (by its .onnx
// extension) through the frontend, anything else as the canonical text
// format. Shared by `tso inspect` and `tso run`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
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

struct ModelFile {
  Graph graph;
  bool is_onnx = false;
  ImportedModel onnx;  // set when is_onnx (its graph is moved into `graph`)
};

// Loads the file; prints import warnings to stderr. On failure prints the
// error and returns the exit code in `*exit_code`.
std::optional<ModelFile> load_model_file(const ModelFileOptions& opts, const char* command,
                                         int* exit_code);

// Prints the opaque nodes of an imported model, one row each, with why.
void print_opaque_nodes(std::ostream& out, const std::vector<OpaqueNodeInfo>& nodes);

}  // namespace tso::cli
