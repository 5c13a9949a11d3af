// What a convolution's or matrix product's kernel (the anchor) can apply to
// its result before writing it: the post-ops of oneDNN, and of any runtime
// that fuses the same way. runtime/cpu/fusion.h builds its fused groups
// from these; optimizer/post_op.h costs a node so fused as what it adds to
// the anchor's kernel. Both must agree, so the rule is stated once, here.
#pragma once

#include <span>

#include "core/graph.h"
#include "core/ops.h"
#include "core/types.h"

namespace tso {

// conv2d, matmul and gemm: kernels whose result a chain of post-ops reads.
bool is_post_op_anchor(Op op);

// relu, sigmoid, tanh, clip, gelu, exp, sqrt and neg.
bool is_unary_post_op(Op op);

// Whether a binary post-op's other operand of shape `other` broadcasts
// onto the anchor's output of shape `out`: one element, the full shape, or
// one dimension only (aligned at the trailing end), the channel for
// convolutions and the last dimension for products.
bool post_op_operand_fits(Op anchor, const Shape& other, const Shape& out);

// Whether transpose node `t` of `g` is written by the matmul it reads: the
// matmul writes its result in the transpose's order (strides, no pass of
// its own), as BERT's attention does for probabilities times values before
// its heads are joined. So when the matmul is f32 (not runs_int8) on a right
// operand that is not weight-only (a product by constant weights is written
// as rows of [rows, N]), its result has `readers` = 1 reader, the
// transpose, and is not a graph output, and the permutation keeps the last
// axis last (the result's rows stay contiguous).
bool transpose_written_by_product(const Graph& g, int t, int readers, bool is_output,
                                  bool right_weight_only);

// Whether the matmuls that read transpose node `t` of `g` read it in place,
// through strides, so that the transpose runs no step (BERT's queries, keys
// and values split into heads). So when the transpose is not a graph output
// and has readers (`readers`), each an f32 matmul (not runs_int8) whose right
// operand is not weight-only (`weight_only`, weight_only_nodes) and which
// reads the transpose as an operand of its own rank (>= 3), and the input's
// last axis is one of the result's last two (the operand's rows or columns
// stay contiguous).
bool transpose_read_by_products(const Graph& g, int t, std::span<const int> readers,
                                bool is_output, std::span<const char> weight_only);

}  // namespace tso
