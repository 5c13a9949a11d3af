// Layer normalization as exporters write it below opset 17, which has no
// LayerNormalization operator: torch.onnx's nine nodes for nn.LayerNorm
// (BERT's 25, ViT's, ConvNeXt's at opset 14, the default of torch before
// 2.1 and of many transformers exports):
//
//   m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2));
//   y = Div(d, Sqrt(Add(v, epsilon))) [* scale] [+ bias]
//
// with Mul(d, d) for the Pow as well (what other exporters write). The
// importer reads such a chain as the IR's one layernorm, which the runtimes
// compute in one step (internal to frontend/).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

// One chain, found by its structure; node indices into the graph.
struct LayerNormChain {
  std::string x;           // the normalized input
  std::vector<int> inner;  // every node but the last, in chain order
  int last = -1;           // its output is layernorm(x)
  int mean = -1;           // the two ReduceMeans, whose axes must agree
  int variance = -1;
  std::string exponent;     // the Pow's exponent (2), empty for Mul(d, d)
  std::string epsilon;      // the scalar added to the variance
  std::string scale, bias;  // the affine operands, empty when absent
};

// The chains of `g` whose every inner output is read only within the chain
// (d by the square and the Div, every other one once, by the next node) and
// is no graph output. `uses` counts the readers of each name, a graph output
// counting as one. Whether the axes agree and the constants hold their values
// is for the importer to check, once they are known.
std::vector<LayerNormChain> find_layernorm_chains(const onnx::GraphProto& g,
                                                  const std::unordered_map<std::string, int>& uses);

}  // namespace tso::onnx_frontend
