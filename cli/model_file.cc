#include "cli/model_file.h"

#include <cstdio>

#include "cli/commands.h"
#include "cli/table.h"

namespace tso::cli {

void add_model_file_options(CLI::App* app, ModelFileOptions* opts) {
  app->add_option("--random-weights", opts->random_weights_seed,
                  "fill initializers whose external data file is missing with seeded random "
                  "values (graph-only ONNX models)");
  app->add_option("--batch", opts->batch,
                  "import an ONNX model at batch N: inputs whose first dimension is the model's "
                  "batch get N, and Reshape shapes that start with the old batch are rewritten");
  app->add_option("--input-shape", opts->input_shapes,
                  "fix the dynamic dimensions of an ONNX model's input: NAME:D0,D1,... "
                  "(repeatable), or D0,D1,... for a model with one input")
      ->allow_extra_args(false);
}

namespace {

// `NAME:D0,D1,...` or `D0,D1,...`. The name is what comes before the last
// ':' (ONNX names may hold colons, e.g. TensorFlow's "input:0").
Expected<std::pair<std::string, Shape>> parse_input_shape(const std::string& text) {
  size_t colon = text.rfind(':');
  std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
  std::string dims = colon == std::string::npos ? text : text.substr(colon + 1);
  auto bad = [&](const std::string& why) {
    return Error{"--input-shape '" + text + "': " + why +
                 " (expected NAME:D0,D1,... or D0,D1,..., every D a positive integer)"};
  };
  if (colon != std::string::npos && name.empty()) return bad("the name is empty");
  Shape shape;
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 18)
      return bad("'" + d + "' is not an extent");
    int64_t v = std::stoll(d);
    if (v < 1) return bad("extent " + d + " is below 1");
    if (shape.rank() == Shape::kMaxRank)
      return bad("rank above " + std::to_string(Shape::kMaxRank));
    shape.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return std::pair(name, shape);
}

}  // namespace

Expected<ImportOptions> import_options(const ModelFileOptions& opts) {
  ImportOptions io;
  io.random_weights_seed = opts.random_weights_seed;
  io.batch = opts.batch;
  for (const std::string& text : opts.input_shapes) {
    Expected<std::pair<std::string, Shape>> r = parse_input_shape(text);
    if (!r) return r.error();
    if (!io.input_shapes.emplace(r->first, r->second).second)
      return Error{"--input-shape gives '" +
                   (r->first.empty() ? std::string("the model's input") : r->first) + "' twice"};
  }
  return io;
}

std::optional<ModelFile> load_model_file(const ModelFileOptions& opts, const char* command,
                                         int* exit_code, ModelUse use) {
  auto fail = [&](int code, const std::string& message) {
    std::fprintf(stderr, "tso %s: %s\n", command, message.c_str());
    *exit_code = code;
    return std::nullopt;
  };
  if (Status s = driver::check_readable(opts.file); !s.ok())
    return fail(kExitIoError, s.error().message);
  Expected<ImportOptions> io = import_options(opts);
  if (!io) return fail(kExitBadInput, io.error().message);
  Expected<ModelFile> m = driver::load_model({opts.file, std::nullopt, *io});
  if (!m) {
    std::fprintf(stderr, "%s\n", m.error().message.c_str());  // it carries its location
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  if (use == ModelUse::kRun)
    if (Status s = check_static(m->onnx.info, opts.file); !s.ok())
      return fail(kExitBadInput, s.error().message);
  for (const std::string& w : m->onnx.warnings)
    std::fprintf(stderr, "%s: warning: %s\n", opts.file.c_str(), w.c_str());
  return std::move(*m);
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
