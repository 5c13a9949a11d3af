// Chains of elementwise nodes that no convolution or product fuses, run as
// one pass over memory by an own kernel: the tensor is walked in blocks of
// the first-level cache, and every node of the chain is applied to a block
// before the next is read. A quantized model spells its GELU as nine such
// nodes (BERT-base int8: div, erf, add, mul, mul and a quantize pair after
// each but the div, on [128, 3072] each), which ran as nine passes.
//
// A chain starts at a node outside every fusion group (fusion.h) and grows
// while its value has one reader, is not a graph output, and that reader is
//   - add, sub, mul or div of f32 tensors of the chain's shape, the chain on
//     either side, the other operand of that shape or of one element;
//   - erf;
//   - a quantize pair (quantize_pairs) of one scale that keeps_levels does
//     not make the identity, unless every reader of its dequantize_linear
//     is an int8 kernel (core/quantized.h's runs_int8, where
//     int8_kernel_exact), which quantizes the pair's input itself.
// A chain of one node runs as that node does. Every step computes what the
// node's own step computes (the same division, erf and quantize formula),
// so a chain's result is the unfused plan's, bit for bit up to the sign of
// a zero (oneDNN runs a product by a constant scalar as c * x + 0).
//
// The cost models price the nodes of a chain one by one, as they run
// unfused (optimizer/post_op.h's rule covers products' chains only).
#pragma once

#include <vector>

#include "core/graph.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/fusion.h"

namespace tso::cpu {

struct ChainStep {
  enum class Kind { kBinary, kErf, kPair };
  Kind kind = Kind::kBinary;
  int node = -1;           // the node; a pair's dequantize_linear
  int quantize = -1;       // kPair: the quantize_linear
  TensorRef other;         // kBinary: the operand that is not the chain
  bool chain_left = true;  // kBinary: the chain is the left operand
};

struct ElementwiseChain {
  TensorRef input;  // the value the first step reads as the chain
  std::vector<ChainStep> steps;
  int tail() const { return steps.back().node; }
};

struct ElementwiseChains {
  std::vector<ElementwiseChain> chains;
  std::vector<int> chain_of;  // per node: the chain it belongs to, or -1
};

// The nodes `chain` computes, in order (a pair's quantize_linear before its
// dequantize_linear).
std::vector<int> chain_nodes(const ElementwiseChain& chain);

// The chains of `g` outside `fusion`'s groups, `pairs` being its quantize
// pairs; none when `enabled` is false.
ElementwiseChains find_elementwise_chains(const Graph& g, const Fusion& fusion,
                                          const std::vector<int>& pairs, bool enabled);

// The step running `chain`, at its tail; the tail's value is its result.
Status lower_elementwise_chain(Builder& b, const ElementwiseChain& chain);

}  // namespace tso::cpu
