#include "frontend/onnx_util.h"

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tso::onnx_frontend {

namespace {

using onnx::TensorProto;

constexpr struct {
  int32_t onnx;
  DType dtype;
} kTypes[] = {
    {TensorProto::FLOAT, DType::kF32},  {TensorProto::FLOAT16, DType::kF16},
    {TensorProto::DOUBLE, DType::kF64}, {TensorProto::INT64, DType::kI64},
    {TensorProto::INT32, DType::kI32},  {TensorProto::BOOL, DType::kBool},
    {TensorProto::UINT8, DType::kU8},   {TensorProto::INT8, DType::kI8},
};

// Copies the elements of a typed repeated field into little-endian bytes of
// `t`, converting each value to the element type.
template <class Field>
Status copy_typed(const Field& field, DType t, int64_t numel, std::vector<std::byte>* out) {
  if (static_cast<int64_t>(field.size()) != numel)
    return Error{"holds " + std::to_string(field.size()) + " values for " + std::to_string(numel) +
                 " elements"};
  out->resize(numel * dtype_bytes(t));
  std::byte* p = out->data();
  for (int64_t k = 0; k < numel; ++k) {
    auto v = field.Get(static_cast<int>(k));
    switch (t) {
      case DType::kF32: {
        float x = static_cast<float>(v);
        std::memcpy(p + 4 * k, &x, 4);
        break;
      }
      case DType::kF64: {
        double x = static_cast<double>(v);
        std::memcpy(p + 8 * k, &x, 8);
        break;
      }
      case DType::kI64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p + 8 * k, &x, 8);
        break;
      }
      case DType::kI32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p + 4 * k, &x, 4);
        break;
      }
      case DType::kF16: {
        uint16_t x = static_cast<uint16_t>(v);
        std::memcpy(p + 2 * k, &x, 2);
        break;
      }
      case DType::kBool:
        p[k] = std::byte(v != 0);
        break;
      case DType::kU8:
      case DType::kI8:
        p[k] = std::byte(static_cast<uint8_t>(v));
        break;
    }
  }
  return Status::Ok();
}

// The file external data named `location` is read from: a relative path
// that stays, symbolic links followed, inside the model's folder
// `base_dir`, and names a regular file. A model is untrusted input: without
// these checks "../../home/u/.ssh/id_rsa" or "/etc/shadow" would be read
// into its weights, and `tso optimize` would write them into the model it
// writes (the traversal ONNX's checker closed, CVE-2022-25882). The
// lexical checks come first, so that a traversal to a file that does not
// exist is an error, not a missing file that random weights fill. Sets
// `*exists` to whether the file exists.
Expected<std::filesystem::path> external_path(const std::string& base_dir,
                                              const std::string& location, bool* exists) {
  namespace fs = std::filesystem;
  if (location.empty()) return Error{"is marked external but names no location"};
  if (location.find('\0') != std::string::npos)
    return Error{"has an external data location with a NUL character"};
  const fs::path loc(location);
  if (loc.has_root_name() || loc.has_root_directory())
    return Error{"names external data file '" + location +
                 "' by an absolute path; a location is relative to the model's folder"};
  const fs::path normal = loc.lexically_normal();
  if (normal.empty() || *normal.begin() == "..")
    return Error{"names external data file '" + location + "', outside the model's folder"};
  const fs::path base = base_dir.empty() ? fs::path(".") : fs::path(base_dir);
  const fs::path path = base / normal;
  std::error_code ec;
  *exists = fs::exists(path, ec);
  if (!*exists) return path;
  const fs::path real = fs::canonical(path, ec);
  std::error_code base_ec;
  const fs::path real_base = fs::canonical(base, base_ec);
  if (ec || base_ec) return Error{"cannot resolve external data file " + path.string()};
  const fs::path inside = real.lexically_relative(real_base);
  if (inside.empty() || *inside.begin() == "..")
    return Error{"names external data file " + path.string() + ", a link to " + real.string() +
                 " outside the model's folder"};
  if (!fs::is_regular_file(real, ec))
    return Error{"names external data file " + path.string() + ", which is not a regular file"};
  return path;
}

Status read_external(const TensorProto& t, const std::string& base_dir, int64_t nbytes,
                     LoadedTensor* out, std::vector<std::byte>* bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& e : t.external_data()) {
    try {
      if (e.key() == "location")
        location = e.value();
      else if (e.key() == "offset")
        offset = std::stoll(e.value());
      else if (e.key() == "length")
        length = std::stoll(e.value());
    } catch (const std::exception&) {
      return Error{"has a malformed external data entry '" + e.key() + "'"};
    }
  }
  bool exists = false;
  Expected<std::filesystem::path> path = external_path(base_dir, location, &exists);
  if (!path) return path.error();
  if (!exists) {
    out->missing_file = path->string();
    return Status::Ok();
  }
  if (length >= 0 && length != nbytes)
    return Error{"has external length " + std::to_string(length) + ", expected " +
                 std::to_string(nbytes) + " bytes"};
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(*path, ec);
  std::ifstream in(*path, std::ios::binary);
  if (!in || ec || offset < 0 || static_cast<uintmax_t>(offset) > size ||
      static_cast<uintmax_t>(nbytes) > size - static_cast<uintmax_t>(offset))
    return Error{"cannot read " + std::to_string(nbytes) + " bytes at offset " +
                 std::to_string(offset) + " of external data file " + path->string()};
  bytes->resize(nbytes);
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(bytes->data()), nbytes);
  if (!in) return Error{"failed reading external data file " + path->string()};
  return Status::Ok();
}

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  for (const auto& e : kTypes)
    if (e.onnx == elem_type) return e.dtype;
  return std::nullopt;
}

int32_t onnx_from_dtype(DType t) {
  for (const auto& e : kTypes)
    if (e.dtype == t) return e.onnx;
  TSO_CHECK(false, "dtype without ONNX type");
  return 0;
}

std::string onnx_type_name(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  return "type " + std::to_string(elem_type);
}

Expected<Shape> shape_from_dims(const int64_t* dims, int n) {
  if (n > Shape::kMaxRank)
    return Error{"rank " + std::to_string(n) + " exceeds the IR's maximum of " +
                 std::to_string(Shape::kMaxRank)};
  Shape s;
  for (int i = 0; i < n; ++i) {
    if (dims[i] < 0) return Error{"has a negative dimension " + std::to_string(dims[i])};
    s.push_back(dims[i]);
  }
  return s;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t attr_int(const onnx::NodeProto& n, std::string_view name, int64_t def) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : def;
}

float attr_float(const onnx::NodeProto& n, std::string_view name, float def) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : def;
}

std::string attr_string(const onnx::NodeProto& n, std::string_view name, std::string def) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : def;
}

std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& n, std::string_view name) {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool reduce_axes_are_input(std::string_view op_type, int64_t opset) {
  return opset >= (op_type == "ReduceSum" ? 13 : 18);
}

void set_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void set_attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Expected<LoadedTensor> load_tensor(const TensorProto& t, const std::string& base_dir) {
  LoadedTensor out;
  std::optional<DType> dt = dtype_from_onnx(t.data_type());
  if (!dt)
    return Error{"has element type " + onnx_type_name(t.data_type()) +
                 ", which the IR does not support"};
  Expected<Shape> shape = shape_from_dims(t.dims().data(), t.dims_size());
  if (!shape) return shape.error();
  out.type = {*dt, *shape};
  if (!checked_byte_size(out.type))
    return Error{"has type " + to_string(out.type) +
                 ", which does not fit in memory: its size in bytes overflows int64"};
  const int64_t numel = shape->numel();
  const int64_t nbytes = byte_size(out.type);
  auto w = std::make_shared<WeightData>();
  w->type = out.type;
  if (t.data_location() == TensorProto::EXTERNAL) {
    TSO_RETURN_IF_ERROR(read_external(t, base_dir, nbytes, &out, &w->bytes));
    if (!out.missing_file.empty()) return out;
  } else if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != nbytes)
      return Error{"holds " + std::to_string(t.raw_data().size()) + " raw bytes for " +
                   to_string(out.type) + " (" + std::to_string(nbytes) + " expected)"};
    w->bytes.resize(nbytes);
    if (nbytes > 0) std::memcpy(w->bytes.data(), t.raw_data().data(), nbytes);
  } else {
    Status s;
    switch (*dt) {
      case DType::kF32:
        s = copy_typed(t.float_data(), *dt, numel, &w->bytes);
        break;
      case DType::kF64:
        s = copy_typed(t.double_data(), *dt, numel, &w->bytes);
        break;
      case DType::kI64:
        s = copy_typed(t.int64_data(), *dt, numel, &w->bytes);
        break;
      case DType::kF16:
      case DType::kI32:
      case DType::kBool:
      case DType::kU8:
      case DType::kI8:
        s = copy_typed(t.int32_data(), *dt, numel, &w->bytes);
        break;
    }
    if (!s.ok()) return s.error();
  }
  out.data = std::move(w);
  return out;
}

void store_tensor(const WeightData& w, const std::string& name, TensorProto* t) {
  t->set_name(name);
  t->set_data_type(onnx_from_dtype(w.type.dtype));
  for (int64_t d : w.type.shape) t->add_dims(d);
  t->set_raw_data(w.bytes.data(), w.bytes.size());
}

void set_value_info(const std::string& name, const TensorType& type, onnx::ValueInfoProto* v) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_from_dtype(type.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : type.shape) shape->add_dim()->set_dim_value(d);
}

std::string describe(const onnx::NodeProto& n) {
  std::string name = !n.name().empty()     ? n.name()
                     : n.output_size() > 0 ? n.output(0)
                                           : std::string();
  std::string type = n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
  return "node '" + name + "' (" + type + ")";
}

}  // namespace tso::onnx_frontend
