#include "frontend/tensor_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/atomic_file.h"
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
  return write_tensor_files(std::span(&path, 1), std::span(&tensor, 1));
}

Status write_tensor_files(std::span<const std::string> paths,
                          std::span<const NamedTensor> tensors) {
  TSO_CHECK(paths.size() == tensors.size());
  std::vector<AtomicFile> files;
  for (size_t k = 0; k < paths.size(); ++k) {
    Expected<AtomicFile> f = AtomicFile::create(paths[k]);
    if (!f) return f.error();
    onnx::TensorProto t;
    onnx_frontend::store_tensor(tensors[k].value, tensors[k].name, &t);
    if (!t.SerializeToOstream(&f->out())) return Error{paths[k] + ": cannot write file"};
    files.push_back(std::move(*f));
  }
  for (AtomicFile& f : files) TSO_RETURN_IF_ERROR(f.commit());
  return Status::Ok();
}

}  // namespace tso
