// Which nodes run as post-ops of a convolution or matrix product: the
// following activations (relu, clip, sigmoid, tanh, gelu, exp, sqrt, neg,
// leaky_relu, softplus, log, abs),
// bias and residual adds, scalings and batchnorms, fused into the anchor's
// oneDNN primitive so that their results never touch memory on their own.
// Plain graph analysis, no oneDNN: the lowering (lower_*.cc) turns a group
// into primitive attributes.
//
// A node joins the chain when the chain's current value has no other
// consumer and is not a graph output, and the node is one oneDNN applies to
// the anchor's output: a unary function above, or add/sub/mul/div/smul whose
// other operand is f32 and has a shape the post-op can broadcast (one
// element; per channel for convolutions, [..., N] rows for matrix products;
// or the output's full shape), the chain being the left operand of sub and
// div; or (convolutions) a batchnorm whose four parameters are stored
// weights, applied as a per-channel scale and shift; or the five nodes of an
// exported GELU (PostOpNode::inner); or, after an int8 kernel
// (core/quantized.h's runs_int8, where its kernel sums exactly:
// dnnl_util.h's int8_kernel_exact) whose chain holds no NaN
// (keeps_nan_free), a quantize pair that post_op_pair accepts: its
// dequantize_linear's values without the pair's own pass over memory. The
// group runs where its last node stood, so every operand it reads is
// computed by then.
#pragma once

#include <vector>

#include "core/graph.h"

namespace tso::cpu {

struct PostOpNode {
  enum class Kind {
    kNode,  // one node
    // The erf form of GELU spelled out, as exporters write it (BERT):
    //   mul(mul(x, add(erf(div(x, sqrt 2)), 1)), 0.5)
    // `node` is its last node, `inner` the other four; one gelu post-op.
    kGelu,
    // A quantize pair: `node` is the dequantize_linear, `inner` its
    // quantize_linear.
    kQuantizePair,
  };
  int node = -1;
  TensorRef other;  // the other operand of a binary node; node -1 for unary nodes
  std::vector<int> inner;
  Kind kind = Kind::kNode;
};

struct FusionGroup {
  int anchor = -1;  // conv2d, matmul or gemm
  std::vector<PostOpNode> post;
  int tail() const { return post.empty() ? anchor : post.back().node; }
};

struct Fusion {
  std::vector<FusionGroup> groups;
  std::vector<int> group_of;  // per node: the group it belongs to, or -1
};

// Who reads each node's output 0, and which nodes are graph outputs.
struct Consumers {
  std::vector<std::vector<int>> of;  // per node: the consuming nodes, one per use
  std::vector<bool> is_output;
};
Consumers consumers(const Graph& g);

// `enabled` false: every node is a group of its own (anchors) or none.
Fusion find_fusions(const Graph& g, bool enabled);

}  // namespace tso::cpu
