// The upgrade through ONNX's version converter, whose errors are exceptions.
#include "frontend/upgrade_opset.h"

#include <exception>
#include <string>
#include <unordered_set>

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
  try {
    onnx::ModelProto upgraded =
        onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
    model.Swap(&upgraded);
  } catch (const std::exception& e) {
    return Error{"opset " + std::to_string(opset) + " cannot be upgraded to " +
                 std::to_string(target) + " by ONNX's version converter: " + trimmed(e.what())};
  }
  return Status::Ok();
}

}  // namespace tso::onnx_frontend
