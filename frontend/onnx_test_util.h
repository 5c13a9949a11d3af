// What tests that build ONNX models by hand share (frontend/ and tests/).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

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

// A node `name` of `type` reading `in`, with one output `out`.
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& name,
                                 const std::string& type, std::initializer_list<const char*> in,
                                 const std::string& out) {
  auto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(type);
  for (const char* i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// The same, named after its output.
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& type,
                                 std::initializer_list<const char*> in, const std::string& out) {
  return add_node(g, out, type, in, out);
}

// An f32 initializer of shape `dims` with values uniform in [-0.5, 0.5).
inline void add_random_floats(onnx::GraphProto* g, const std::string& name,
                              std::initializer_list<int64_t> dims, std::mt19937_64& rng) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (int64_t k = 0; k < n; ++k) t->add_float_data(u(rng));
}

// An i64 initializer holding `values`, of shape `dims` (1-D when empty).
inline void add_i64s(onnx::GraphProto* g, const std::string& name,
                     const std::vector<int64_t>& values, const std::vector<int64_t>& dims = {}) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (dims.empty()) t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : values) t->add_int64_data(x);
}

// An integer initializer of element type `elem` (INT32, UINT8, INT8, ...,
// stored in int32_data as ONNX wants) holding `values`, of shape `dims`
// (rank 0 when empty).
inline void add_ints(onnx::GraphProto* g, const std::string& name, int32_t elem,
                     const std::vector<int32_t>& values, const std::vector<int64_t>& dims = {}) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  for (int32_t x : values) t->add_int32_data(x);
}

// A 1-D f32 initializer holding `values`.
inline void add_f32s(onnx::GraphProto* g, const std::string& name,
                     const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float x : values) t->add_float_data(x);
}

// An f32 initializer of rank 0 holding `v`.
inline void add_scalar(onnx::GraphProto* g, const std::string& name, float v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

// Attribute `name` of `n`: a list of ints, or one int.
inline void set_ints(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void set_int(onnx::NodeProto* n, const char* name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// Attribute `name` of `n`: a string, or a float.
inline void set_string(onnx::NodeProto* n, const char* name, const std::string& value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

inline void set_float(onnx::NodeProto* n, const char* name, float value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

// A graph attribute `name` of `n` (an If's branch, a Loop's body), named
// after it; returns the graph to fill.
inline onnx::GraphProto* add_subgraph(onnx::NodeProto* n, const char* name) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

}  // namespace tso::testing
