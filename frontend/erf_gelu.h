// GELU as exporters write it below opset 20, which has no Gelu operator:
// x * 0.5 * (1 + erf(x / sqrt 2)) in five nodes (BERT's and ViT's FFN, every
// nn.GELU that torch.onnx exports at opset 17 or 18). The importer reads such
// a chain as the IR's one gelu, so the optimizer's rules can fuse it into the
// product or convolution before it (internal to frontend/).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// A constant the chain reads, by name, and the scalar it must hold.
struct ChainConstant {
  std::string name;
  double value;
};

// One chain, found by its structure: Div(x, c) or Mul(x, c), Erf, Add(., c),
// then Mul(x, .) and Mul(., c), or Mul(x, c) and Mul(., that): node indices
// into the graph.
struct ErfGeluChain {
  std::string x;                         // the GELU's input
  std::vector<int> inner;                // every node but the last, in chain order
  int last = -1;                         // its output is gelu(x)
  std::vector<ChainConstant> constants;  // sqrt 2 or 1 / sqrt 2, 1, 0.5
};

// The chains of `g` whose every inner output is read once, by the next node
// of the chain, and is no graph output. `uses` counts the readers of each
// name, a graph output counting as one. Whether the constants hold their
// values is for the importer to check, once they are known.
std::vector<ErfGeluChain> find_erf_gelu_chains(const onnx::GraphProto& g,
                                               const std::unordered_map<std::string, int>& uses);

}  // namespace tso::onnx_frontend
