#include "frontend/opaque.h"

#include <set>
#include <unordered_map>

#include "frontend/onnx_util.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

namespace tso::onnx_frontend {

namespace {

std::optional<TensorType> static_type(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  std::optional<DType> dt = dtype_from_onnx(t.tensor_type().elem_type());
  if (!dt) return std::nullopt;
  Shape s;
  const auto& dims = t.tensor_type().shape().dim();
  if (dims.size() > Shape::kMaxRank) return std::nullopt;
  for (const auto& d : dims) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return TensorType{*dt, s};
}

// libonnx 1.12's shared conv/pool inference (Conv, ConvTranspose, pools, ...)
// trusts its node: it divides by strides, dilations and kernel extents and
// indexes the weight by the data's rank. Returns why a node breaks those
// assumptions, or "".
std::string conv_pool_precondition(const onnx::NodeProto& node,
                                   const std::vector<std::optional<OpaqueInput>>& inputs) {
  static const std::set<std::string> kConvPool = {
      "Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "AveragePool",
      "MaxPool", "LpPool", "DeformConv"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") return "";
  if (!kConvPool.count(node.op_type())) return "";
  if (inputs.empty() || !inputs[0] || inputs[0]->type.shape.rank() < 3)
    return "input data must have rank 3 or more";
  const int rank = inputs[0]->type.shape.rank();
  const size_t w = node.op_type() == "QLinearConv" ? 3 : 1;
  if (node.op_type().find("Pool") == std::string::npos &&
      (inputs.size() <= w || !inputs[w] || inputs[w]->type.shape.rank() != rank))
    return "the weight must have the data's rank";
  for (const auto& a : node.attribute()) {
    if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
    if (a.ints_size() != rank - 2) return "attribute '" + a.name() + "' has the wrong length";
    for (int64_t v : a.ints())
      if (v <= 0) return "attribute '" + a.name() + "' has a non-positive value";
  }
  return "";
}

// ONNX's shape inference functions assume a node that satisfies its schema
// (libonnx 1.12's conv/pool inference dereferences a missing input), so a
// node is only inferred after the checker accepted it and every input it
// names has a known type. Returns why not, or "" when it can be inferred.
std::string why_not_inferable(
    const onnx::NodeProto& node, const std::vector<std::optional<OpaqueInput>>& inputs,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opsets) {
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k] && !node.input(static_cast<int>(k)).empty())
      return "input '" + node.input(static_cast<int>(k)) + "' has no known type";
  if (std::string why = conv_pool_precondition(node, inputs); !why.empty()) return why;
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(8);
  std::unordered_map<std::string, int> imports;
  for (const auto& o : opsets) imports[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
  ctx.set_opset_imports(imports);
  try {
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_node(node, ctx, lex);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

Expected<OpaqueOutputs> infer_opaque_outputs(
    const onnx::NodeProto& node, const std::vector<std::optional<OpaqueInput>>& inputs,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opsets,
    const std::map<std::string, TensorType>& declared) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  *m.mutable_opset_import() = opsets;
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("opaque");
  *g->add_node() = node;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k]) continue;
    const std::string& name = node.input(static_cast<int>(k));
    set_value_info(name, inputs[k]->type, g->add_input());
    if (inputs[k]->value)
      store_tensor(weight_from_host(*inputs[k]->value), name, g->add_initializer());
  }
  std::string failure = why_not_inferable(node, inputs, opsets);
  if (failure.empty()) {
    try {
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 1, true));
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  std::map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& v : m.graph().value_info()) inferred[v.name()] = &v.type();
  OpaqueOutputs out;
  for (const std::string& name : node.output()) {
    if (name.empty()) {
      out.types.push_back(std::nullopt);
      continue;
    }
    std::optional<TensorType> t;
    auto it = inferred.find(name);
    if (it != inferred.end()) t = static_type(*it->second);
    if (!t)
      if (auto d = declared.find(name); d != declared.end()) t = d->second;
    if (t) {
      out.types.push_back(t);
      continue;
    }
    if (failure.empty() && it != inferred.end() && it->second->has_tensor_type() &&
        dtype_from_onnx(it->second->tensor_type().elem_type()))
      return OpaqueOutputs{{}, name};
    return Error{"the static type of output '" + name + "' cannot be determined" +
                 (failure.empty() ? std::string() : " (ONNX shape inference: " + failure + ")")};
  }
  return out;
}

std::string opaque_payload(const onnx::NodeProto& node) {
  onnx::NodeProto p;
  *p.mutable_attribute() = node.attribute();
  for (const std::string& s : node.input()) p.add_input(s.empty() ? "" : "$");
  for (const std::string& s : node.output()) p.add_output(s.empty() ? "" : "$");
  return p.SerializeAsString();
}

Expected<onnx::NodeProto> opaque_node_proto(const Node& node, const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs) {
  onnx::NodeProto p;
  if (!p.ParseFromString(node.attrs.str(AttrKey::payload)))
    return Error{"opaque node '" + node.name + "' has a corrupt payload"};
  p.set_op_type(node.attrs.str(AttrKey::op_type));
  p.set_domain(node.attrs.str(AttrKey::domain));
  p.set_name(node.name);
  if (p.input_size() == 0 && p.output_size() == 0) {  // a payload of attributes only
    for (const std::string& s : inputs) p.add_input(s);
    for (const std::string& s : outputs) p.add_output(s);
    return p;
  }
  size_t in = 0, out = 0;
  for (std::string& s : *p.mutable_input())
    if (s == "$") s = in < inputs.size() ? inputs[in++] : "";
  for (std::string& s : *p.mutable_output())
    if (s == "$") s = out < outputs.size() ? outputs[out++] : "";
  if (in != inputs.size() || out != outputs.size())
    return Error{"opaque node '" + node.name + "' has " + std::to_string(inputs.size()) +
                 " inputs and " + std::to_string(outputs.size()) +
                 " outputs, which its payload does not match"};
  return p;
}

}  // namespace tso::onnx_frontend
