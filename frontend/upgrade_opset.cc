// The upgrade through ONNX's version converter, whose errors are exceptions.
#include "frontend/upgrade_opset.h"

#include <exception>
#include <string>
#include <unordered_set>

#include "frontend/onnx_util.h"
#include "onnx/checker.h"
#include "onnx/version_converter/convert.h"

namespace tso::onnx_frontend {

namespace {

// What ONNX's graphProtoToGraph (the converter's first step) dereferences
// without checking, and the checker does not check: the value of each graph
// output, which must be a graph input, a node's output or, from IR 4, an
// initializer.
Status check_outputs_defined(const onnx::ModelProto& model) {
  const onnx::GraphProto& g = model.graph();
  std::unordered_set<std::string> defined;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& n : g.node()) defined.insert(n.output().begin(), n.output().end());
  if (model.ir_version() >= 4)
    for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& out : g.output())
    if (!defined.count(out.name()))
      return Error{"graph output '" + out.name() + "' is not produced by any node"};
  return Status::Ok();
}

// Upsample (opsets 7 to 9) and Resize-10 map output element o to input
// coordinate o / scale, nearest rounding down; the converter writes them as
// Resize-11 without saying so, and Resize-11's defaults (half_pixel,
// round_prefer_floor) compute something else: a bilinear upsampling of
// torchvision's FCN at opset 9 moved by 38% of its range. The outputs of
// such nodes, to mark their Resize after the conversion.
std::unordered_set<std::string> asymmetric_resizes(const onnx::GraphProto& g) {
  std::unordered_set<std::string> outputs;
  for (const auto& n : g.node())
    if ((n.op_type() == "Upsample" || n.op_type() == "Resize") &&
        (n.domain().empty() || n.domain() == "ai.onnx") && n.output_size() > 0)
      outputs.insert(n.output(0));
  return outputs;
}

void set_string_attr(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  for (auto& a : *n->mutable_attribute())
    if (a.name() == name) return;  // the converter's own choice stands
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Status upgrade_opset(onnx::ModelProto& model, int64_t opset, int64_t target) {
  // The converter assumes a valid model (a graph output no node computes
  // crashes it): ONNX's checker and that check first.
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return Error{"opset " + std::to_string(opset) +
                 " cannot be upgraded: ONNX's checker rejects the model: " + trimmed(e.what())};
  }
  if (Status s = check_outputs_defined(model); !s.ok())
    return Error{"opset " + std::to_string(opset) + " cannot be upgraded: " + s.error().message};
  const std::unordered_set<std::string> resizes = asymmetric_resizes(model.graph());
  try {
    onnx::ModelProto upgraded =
        onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
    model.Swap(&upgraded);
    for (onnx::NodeProto& n : *model.mutable_graph()->mutable_node()) {
      if (n.op_type() != "Resize" || n.output_size() == 0 || !resizes.count(n.output(0))) continue;
      set_string_attr(&n, "coordinate_transformation_mode", "asymmetric");
      if (attr_string(n, "mode", "nearest") == "nearest")
        set_string_attr(&n, "nearest_mode", "floor");
    }
  } catch (const std::exception& e) {
    return Error{"opset " + std::to_string(opset) + " cannot be upgraded to " +
                 std::to_string(target) + " by ONNX's version converter: " + trimmed(e.what())};
  }
  return Status::Ok();
}

}  // namespace tso::onnx_frontend
