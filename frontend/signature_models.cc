#include "frontend/signature_models.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"

namespace tso {

Expected<SignatureModels> write_signature_models(std::span<const SignatureNode> nodes,
                                                 const std::string& dir, const OnnxModelInfo& info,
                                                 uint64_t seed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create the directory: " + ec.message()};
  SignatureModels result;
  nlohmann::ordered_json index = {{"format", "tso-signature-models"}, {"version", 1}};
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (const SignatureNode& s : nodes) {
    const std::string op(op_name(s.node.op));
    Expected<Graph> g = signature_graph(s.node, s.inputs, weight_args(s.node, s.inputs), seed);
    const std::string file = std::to_string(result.written) + ".onnx";
    Status written = g ? export_onnx(*g, info, (fs::path(dir) / file).string()) : g.error();
    if (!written.ok()) {
      result.not_exported.push_back({s.signature, written.error().message});
      failed.push_back(
          {{"signature", s.signature}, {"op", op}, {"reason", written.error().message}});
      continue;
    }
    models.push_back({{"signature", s.signature}, {"op", op}, {"file", file}});
    ++result.written;
  }
  index["models"] = std::move(models);
  index["not_exported"] = std::move(failed);
  TSO_RETURN_IF_ERROR(
      write_file_atomically((fs::path(dir) / "index.json").string(), index.dump(2) + "\n"));
  return result;
}

}  // namespace tso
