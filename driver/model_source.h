// Where a model comes from, and loading it: an ONNX file (by its .onnx
// extension) or ONNX bytes in memory through the frontend, any other file as
// the canonical text format. Shared by every `tso` subcommand that takes a
// model and by the Python module.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/graph.h"
#include "frontend/onnx.h"

namespace tso::driver {

struct ModelSource {
  // The file; with `bytes`, the name messages show (external data resolves
  // beside it when it names a file).
  std::string path;
  std::optional<std::string> bytes;  // a serialized ONNX model
  ImportOptions import;              // ONNX only; `batch` and `input_shapes` refuse text graphs
};

struct LoadedModel {
  Graph graph;
  bool is_onnx = false;
  ImportedModel onnx;  // set when is_onnx (its graph is moved into `graph`)
};

// Errors when `path` is a directory or cannot be opened ("cannot open
// 'x.onnx': No such file or directory"): the first step of load_model,
// exposed so that the CLI can tell an unreadable file from a malformed one.
Status check_readable(const std::string& path);

// Errors name the file and, where one is at fault, the node or line; import
// warnings are in `onnx.warnings`.
Expected<LoadedModel> load_model(const ModelSource& source);

}  // namespace tso::driver
