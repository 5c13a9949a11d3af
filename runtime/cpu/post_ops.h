// A fusion group's post-ops as oneDNN attributes: the anchor's own
// activation, then each fused node (fusion.h). Internal to runtime/cpu.
#pragma once

#include <string>
#include <vector>

#include "runtime/cpu/builder.h"

namespace tso::cpu {

struct PostOps {
  dnnl::post_ops ops;
  std::vector<Arg> args;   // binary post-ops' second operands
  std::vector<int> reads;  // their tensors
  std::string nodes;       // " + relu + add", for step names
  // Elementwise post-ops to apply to the product before the group's own:
  // gemm's alpha and beta C (gemm.cc adds them first).
};

// How the anchor's primitive sees its output: `dst_dims` (a matrix product
// folds leading dimensions into rows), `channel_axis` for per-channel
// operands (conv2d: 1; products: the last).
struct DstView {
  Dims dims;
  Shape logical;  // the group's output shape
  bool conv = false;
  // The destination's layout at the logical shape: a full-shape operand is
  // reordered to it (a binary post-op whose operand has another layout falls
  // back to oneDNN's reference kernels), then seen through `dims` when the
  // primitive folds dimensions (row-major or NHWC bytes as [rows, N]).
  memory::desc layout;
};

// "node 'conv1' (conv2d) + relu + add": a group's nodes, for step names.
inline std::string group_nodes(const Builder& b, const FusionGroup& group, const PostOps& post) {
  return b.describe(group.anchor) + post.nodes;
}
// The type of the group's result (its last node's).
inline const TensorType& group_type(const Builder& b, const FusionGroup& group) {
  return b.graph().node(group.tail()).outs[0];
}

// Appends the group's post-ops (the anchor's `act` first) to `out`. With
// `levels`, the group ends in a quantize pair whose levels (integers in the
// pair's range, as floats) are the result instead of their f32 values, for
// a u8 or s8 destination.
Status append_post_ops(Builder& b, const FusionGroup& group, const DstView& dst, PostOps* out,
                       bool levels = false);

// A binary post-op of `alg` with `other` (broadcast to the destination).
void append_binary(Builder& b, dnnl::algorithm alg, int other, const DstView& dst, PostOps* out);

// The oneDNN eltwise algorithm, alpha and beta of a unary tso operator, or
// of the fused activation of an anchor with attributes `a` (clip: its min
// and max); false when oneDNN has none or there is no activation.
bool eltwise_of(const Node& n, dnnl::algorithm* alg, float* alpha, float* beta);
bool eltwise_of_act(const Attrs& a, dnnl::algorithm* alg, float* alpha, float* beta);

}  // namespace tso::cpu
