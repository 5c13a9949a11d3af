// Frontend internals shared by import, export and the operator mappings:
// element-type mapping, attribute access on NodeProto, and conversions between
// TensorProto and the IR's WeightData.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "core/types.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// ONNX TensorProto::DataType <-> DType; nullopt for types the IR lacks.
std::optional<DType> dtype_from_onnx(int32_t elem_type);
int32_t onnx_from_dtype(DType t);
std::string onnx_type_name(int32_t elem_type);  // "FLOAT", "UINT8", ... for messages

// A shape from ONNX dims; an error for a negative extent or a rank above
// Shape::kMaxRank.
Expected<Shape> shape_from_dims(const int64_t* dims, int n);

// Attribute access by name; defaults when absent.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name);
int64_t attr_int(const onnx::NodeProto& n, std::string_view name, int64_t def);
float attr_float(const onnx::NodeProto& n, std::string_view name, float def);
std::string attr_string(const onnx::NodeProto& n, std::string_view name, std::string def = {});
std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& n, std::string_view name);

// Whether a Reduce* node takes its axes as input 1 rather than an attribute:
// ReduceSum from opset 13, the others from 18.
bool reduce_axes_are_input(std::string_view op_type, int64_t opset);

void set_attr(onnx::NodeProto* n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto* n, const std::string& name, float v);
void set_attr(onnx::NodeProto* n, const std::string& name, const std::string& v);

// A TensorProto's contents. `data` is null and `missing_file` names the file
// when the tensor's external data file does not exist.
struct LoadedTensor {
  TensorType type;
  std::shared_ptr<const WeightData> data;
  std::string missing_file;
};

// Decodes raw, typed-field or external data (relative to `base_dir`). Errors
// say what is wrong without naming the tensor (the caller adds it).
Expected<LoadedTensor> load_tensor(const onnx::TensorProto& t, const std::string& base_dir);

// Writes `w` into `t` as raw data, with `name`.
void store_tensor(const WeightData& w, const std::string& name, onnx::TensorProto* t);

// Fills a ValueInfoProto with a static tensor type.
void set_value_info(const std::string& name, const TensorType& type, onnx::ValueInfoProto* v);

// The node's identity in messages: "node 'NAME' (OpType)".
std::string describe(const onnx::NodeProto& n);

}  // namespace tso::onnx_frontend
