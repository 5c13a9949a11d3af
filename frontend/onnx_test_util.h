// What tests that build ONNX models by hand share (frontend/ and tests/).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "onnx/onnx_pb.h"

namespace tso::testing {

// Names `v` and gives it a tensor type of element type `elem` (an
// onnx::TensorProto::DataType) and static shape `dims`.
inline void declare(onnx::ValueInfoProto* v, const std::string& name, int32_t elem,
                    std::initializer_list<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace tso::testing
