// One-operator ONNX models of operator signatures, for timing them in a
// runtime tso does not drive (experiments/ort_costs.py times them in ONNX
// Runtime and writes the cost table `tso optimize --cost` reads). Model i is
// the signature's one-node graph (core/signature_graph.h: weights as
// initializers holding seeded random values, other arguments as graph
// inputs in0, in1, ..., outputs out0, ...), written as DIR/<i>.onnx; DIR/index.json
// lists them, and the signatures that could not be exported with the reason:
//
//   {"format": "tso-signature-models", "version": 1,
//    "models": [{"signature": "relu(f32[1,64,56,56])", "op": "relu", "file": "0.onnx"}, ...],
//    "not_exported": [{"signature": "...", "op": "...", "reason": "..."}]}
//
// Files are named by their position in "models"; only the files index.json
// lists belong to the run that wrote it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/signature_graph.h"
#include "frontend/onnx.h"

namespace tso {

struct SignatureModels {
  int written = 0;
  struct Failure {
    std::string signature, reason;
  };
  std::vector<Failure> not_exported;
};

// Writes the models of `nodes` and the index into `dir` (created when
// missing) with the envelope `info` (the operator sets of the model the
// signatures come from). An error only when the directory or the index
// cannot be written; a signature that cannot be exported is listed.
Expected<SignatureModels> write_signature_models(std::span<const SignatureNode> nodes,
                                                 const std::string& dir, const OnnxModelInfo& info,
                                                 uint64_t seed);

}  // namespace tso
