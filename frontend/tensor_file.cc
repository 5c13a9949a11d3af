#include "frontend/tensor_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/onnx_util.h"

namespace tso {

Expected<NamedTensor> read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file"};
  std::ostringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto t;
  const std::string bytes = buf.str();
  if (!t.ParseFromString(bytes)) return Error{path + ": not a valid TensorProto"};
  Expected<onnx_frontend::LoadedTensor> lt =
      onnx_frontend::load_tensor(t, std::filesystem::path(path).parent_path().string());
  if (!lt) return Error{path + ": tensor " + lt.error().message};
  if (!lt->data) return Error{path + ": external data file " + lt->missing_file + " is missing"};
  return NamedTensor{t.name(), *lt->data};
}

Status write_tensor_file(const std::string& path, const NamedTensor& tensor) {
  onnx::TensorProto t;
  onnx_frontend::store_tensor(tensor.value, tensor.name, &t);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !t.SerializeToOstream(&out)) {
      std::filesystem::remove(tmp);
      return Error{path + ": cannot write file"};
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{path + ": cannot rename into place: " + ec.message()};
  return Status::Ok();
}

}  // namespace tso
