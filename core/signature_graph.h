// One operator signature (core/signature.h) as a graph of its own: what a
// runtime times to learn what the signature costs. runtime/cpu's profiler
// times it on tso's CPU runtime; `tso optimize --missing-costs` exports it
// as a one-operator ONNX model for another runtime (experiments/ort_costs.py
// times it in ONNX Runtime).
//
// Which arguments are weights: a signature carries only types, so the same
// rule serves a model's nodes and the nodes the search invents (merged
// convolutions, concatenated weights): see weight_args. Weights are stored
// with seeded random values, so a runtime prepares them once (reorders,
// packing), as in a real model; the other arguments are graph inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

// A node with the types of its arguments, detached from any graph: what a
// cost model is asked about. `signature` is op_signature(node, inputs).
struct SignatureNode {
  std::string signature;
  Node node;
  std::vector<TensorType> inputs;
};

// Which arguments of `n` (with argument types `inputs`) are stored weights:
// conv2d and gemm weights and bias, batchnorm and layernorm parameters, a
// rank-2 right operand of matmul (a linear layer) or, where that operand is
// one column and the left a matrix of several rows, the left one (the
// layer transposed: W'·x'), and the smaller, broadcast operand of a binary
// elementwise operator (a bias or scale). Everything else is a graph input.
std::vector<bool> weight_args(const Node& n, std::span<const TensorType> inputs);

// Seeded values of `type`: uniform in [-1, 1] for floats, zeros otherwise
// (valid indices and flags).
std::vector<std::byte> random_tensor_bytes(const TensorType& type, uint64_t seed);

// The one-node graph of `n`: arguments named in0, in1, ... (inputs, or
// weights holding random_tensor_bytes(type, seed + i) where `weights` says),
// outputs out0, out1, ... An 8-bit argument of a product (an int8 kernel's
// signature, core/quantized.h) is, as in a quantized model, an f32 input
// quantized and dequantized at once (a pair), or stored i8 weights of the
// full range (every level 127) read through a dequantize_linear (one scale,
// zero points 0).
Expected<Graph> signature_graph(const Node& n, std::span<const TensorType> inputs,
                                const std::vector<bool>& weights, uint64_t seed);

// The steps of signature_graph's graph that only quantize and dequantize
// the 8-bit inputs (not weights) of a product: each such input, an f32
// one, through its quantize_linear and dequantize_linear pair, to an
// output (quantize_graph's pair).
Expected<Graph> quantized_inputs_graph(std::span<const TensorType> inputs,
                                       const std::vector<bool>& weights);

// A small int8 kernel computing an f32 result of shape `out`: a conv2d of
// 16 input channels (rank 4) or a 16-deep matmul (rank 2 and more) of a
// quantized input and stored i8 weights (full range, as signature_graph's),
// followed, when `pair`, by a quantize pair to `quantized` (u8 or i8): what
// a runtime times to learn what a pair costs as post-ops of an int8 kernel
// (runtime/cpu/fusion.h).
Expected<Graph> int8_anchored_graph(Op anchor, const Shape& out, DType quantized, bool pair);

// An f32 input quantized to `quantized` (u8 or i8, one scale and zero
// point), then, when `pair`, dequantized with the same scale and zero point:
// a quantize_linear alone, or the pair a runtime runs as one step
// (core/quantized.h).
Expected<Graph> quantize_graph(const TensorType& quantized, bool pair);

}  // namespace tso
