// Model-local functions (ModelProto.functions, IR 8): an exporter may write a
// module as a function and each use of it as one node calling the function
// (torch.onnx.export's export_modules_as_functions, onnxscript). Import
// replaces every such call by the function's body, so the body's operators
// map onto the IR like any others instead of the call staying opaque.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

struct InlinedFunctions {
  int calls = 0;  // call nodes replaced by a body, nested calls included
  // The model's functions, serialized, when some call stays (a function
  // whose body holds a subgraph, If or Loop, is not inlined; its calls stay
  // opaque and export writes the functions back so that they resolve).
  std::vector<std::string> kept;
};

// Inlines every call of a model-local function in the main graph, recursively.
// Each inlined node is named after the call ("CALL/NODE") and each value the
// body computes gets a name of its own in the graph; attribute references
// take the call's attribute or else the function's default (IR 9). Errors name
// the call or the function: a call with more inputs or outputs than the
// function has, a function that calls itself, one that reads a name it
// neither takes nor computes, one importing another version of an operator
// set than the model, or a model whose calls would expand past a million
// nodes. Functions that no node calls are ignored.
Expected<InlinedFunctions> inline_local_functions(onnx::ModelProto& model);

}  // namespace tso::onnx_frontend
