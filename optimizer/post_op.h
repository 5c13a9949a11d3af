// Which nodes a runtime runs as post-ops: applied inside the kernel of a
// convolution or matrix product (the anchor) to its result, which never
// touches memory on its own. Such a node costs what it adds to the anchor's
// kernel, not what it costs alone (CostModel::post_op_us), so the search
// sees a relu after a convolution or a residual add as nearly free, as they
// are when the model runs.
//
// The rule is the one runtime/cpu/fusion.h applies (core/post_ops.h),
// stated locally so the search can ask it of a node it has not spliced into
// a graph yet: a node
// is a post-op when one argument (the chain) is the result of an anchor
// (conv2d, matmul or gemm, not weight-only) or of another post-op, that
// result has no other reader and is not a graph output, the node's output
// has the chain's type (f32), and the node is
//   - relu, sigmoid, tanh, clip, gelu, exp, sqrt or neg;
//   - add, mul or smul with the chain on either side, sub or div with it on
//     the left, whose other operand is f32 and has one element, the output's
//     shape, or spans only the channel dimension (convolutions) or the last
//     dimension (products);
//   - a batchnorm after a convolution, its parameters weight-only.
// After an int8 kernel whose chain holds no NaN (core/quantized.h's
// runs_int8 and keeps_nan_free), a quantize pair that post_op_pair accepts
// is a post-op too: its dequantize_linear costs what the pair adds to the
// kernel, its quantize_linear nothing (pair_post_op).
// Not covered: the five-node GELU that exporters write, which
// runtime/cpu fuses as one pattern, and the elementwise chains it runs as
// one pass (runtime/cpu/elementwise_chain.h); their nodes cost what they
// cost alone.
#pragma once

#include <functional>
#include <optional>
#include <span>

#include "core/graph.h"
#include "optimizer/graph_index.h"

namespace tso::opt {

struct PostOp {
  Op anchor;      // the operator of the kernel it runs in
  int chain = 0;  // the argument that is the chain's value
};

// For argument `k` of the node asked about: the anchor of the chain whose
// value it is, when that value has no other reader; nullopt otherwise.
using ChainOf = std::function<std::optional<Op>(int k)>;

// Whether `n` (arguments of types `inputs`; `weight_only(k)` whether
// argument k is weight-only) is a post-op, given its arguments' chains.
std::optional<PostOp> as_post_op(const Node& n, std::span<const TensorType> inputs,
                                 const ChainOf& chain_of,
                                 const std::function<bool(int k)>& weight_only);

// Whether node `i` of `g` is a post-op.
std::optional<PostOp> post_op(const Graph& g, const GraphIndex& index, int i);

// The anchor of the chain whose value is `t`, read by node `reader` and
// nothing else (and not a graph output); nullopt when `t` is no chain value
// or has other readers.
std::optional<Op> chain_of(const Graph& g, const GraphIndex& index, TensorRef t, int reader);

// A convolution or product with a fused activation (act=relu, ...), as the
// runtime runs it: the kernel without the activation, followed by the
// activation as a post-op reading its result. The measured models cost it
// as the sum (post_op_us of the activation), so that the same kernel costs
// the same whether the graph spells it conv2d(act=relu) or conv2d then relu,
// which the runtime fuses alike: two signatures measured apart differ by
// the host's noise, and the search would take that noise for the gain of a
// fusion.
struct FusedActivation {
  Node anchor;      // the node, act=none
  Node activation;  // relu, sigmoid, tanh, gelu or clip (min, max) on the anchor's result
  PostOp post_op;   // the activation's chain: the anchor
};
// Nullopt when `n` has no fused activation (or carries no inferred result).
std::optional<FusedActivation> split_fused_activation(const Node& n);

// For dequantize_linear `dq`: the anchor of the int8 kernel whose chain its
// quantize pair ends, when the pair runs as post-ops there; nullopt
// otherwise.
std::optional<Op> pair_post_op(const Graph& g, const GraphIndex& index, int dq);

// Whether node `reader` reads `t` once and nothing else reads it: `t` is
// the only result of a node that is not weight-only, and no graph output.
bool only_reader(const Graph& g, const GraphIndex& index, TensorRef t, int reader);

}  // namespace tso::opt
