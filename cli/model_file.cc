#include "cli/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/table.h"
#include "core/text_format.h"

namespace tso::cli {

void add_model_file_options(CLI::App* app, ModelFileOptions* opts) {
  app->add_option("--random-weights", opts->random_weights_seed,
                  "fill initializers whose external data file is missing with seeded random "
                  "values (graph-only ONNX models)");
  app->add_option("--batch", opts->batch,
                  "import an ONNX model at batch N: inputs whose first dimension is the model's "
                  "batch get N, and Reshape shapes that start with the old batch are rewritten");
}

std::optional<ModelFile> load_model_file(const ModelFileOptions& opts, const char* command,
                                         int* exit_code) {
  std::error_code ec;
  if (std::filesystem::is_directory(opts.file, ec)) {
    std::fprintf(stderr, "tso %s: cannot read '%s': is a directory\n", command, opts.file.c_str());
    *exit_code = kExitIoError;
    return std::nullopt;
  }
  std::ifstream in(opts.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "tso %s: cannot open '%s': %s\n", command, opts.file.c_str(),
                 std::strerror(errno));
    *exit_code = kExitIoError;
    return std::nullopt;
  }
  ModelFile m;
  if (std::filesystem::path(opts.file).extension() == ".onnx") {
    ImportOptions io;
    io.random_weights_seed = opts.random_weights_seed;
    io.batch = opts.batch;
    Expected<ImportedModel> r = import_onnx(opts.file, io);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
      *exit_code = kExitBadInput;
      return std::nullopt;
    }
    for (const std::string& w : r->warnings)
      std::fprintf(stderr, "%s: warning: %s\n", opts.file.c_str(), w.c_str());
    m.is_onnx = true;
    m.graph = std::move(r->graph);
    m.onnx = std::move(*r);
    return m;
  }
  if (opts.batch) {
    std::fprintf(stderr, "tso %s: --batch applies to ONNX models only, not '%s'\n", command,
                 opts.file.c_str());
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  Expected<Graph> g = parse_graph(text.str(), opts.file);
  if (!g) {
    std::fprintf(stderr, "%s\n", g.error().message.c_str());
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  m.graph = std::move(*g);
  return m;
}

void print_opaque_nodes(std::ostream& out, const std::vector<OpaqueNodeInfo>& nodes) {
  if (nodes.empty()) return;
  Table t({{"node"}, {"ONNX op"}, {"reason"}});
  for (const OpaqueNodeInfo& n : nodes)
    t.add_row({n.name, n.domain.empty() ? n.op_type : n.domain + "." + n.op_type, n.reason});
  out << "\nopaque nodes\n";
  t.print(out, 2);
}

}  // namespace tso::cli
