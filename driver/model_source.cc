#include "driver/model_source.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/text_format.h"

namespace tso::driver {

Status check_readable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error{"cannot read '" + path + "': is a directory"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open '" + path + "': " + std::strerror(errno)};
  return Status::Ok();
}

Expected<LoadedModel> load_model(const ModelSource& source) {
  LoadedModel m;
  const bool onnx = source.bytes || std::filesystem::path(source.path).extension() == ".onnx";
  if (!source.bytes) TSO_RETURN_IF_ERROR(check_readable(source.path));
  if (onnx) {
    Expected<ImportedModel> r =
        source.bytes ? import_onnx_bytes(*source.bytes, source.path,
                                         std::filesystem::path(source.path).parent_path().string(),
                                         source.import)
                     : import_onnx(source.path, source.import);
    if (!r) return r.error();
    m.is_onnx = true;
    m.graph = std::move(r->graph);
    m.onnx = std::move(*r);
    return m;
  }
  if (source.import.batch || !source.import.input_shapes.empty())
    return Error{std::string(source.import.batch ? "--batch" : "--input-shape") +
                 " applies to ONNX models only, not '" + source.path + "'"};
  std::ifstream in(source.path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  Expected<Graph> g = parse_graph(text.str(), source.path);
  if (!g) return g.error();
  m.graph = std::move(*g);
  return m;
}

}  // namespace tso::driver
