// Operator signatures: the key of the measured cost table (`tso profile`
// writes it, the optimizer's measured cost model reads it, each runtime
// times it). Two nodes with the same signature run the same kernel on the
// same shapes, so they cost the same.
//
// Format: the operator's text-format name, its input types in order, then
// the attributes whose value differs from the default, in ops.def order,
// with text-format values:
//   conv2d(f32[1,3,224,224],f32[64,3,7,7],f32[64];stride=[2,2],pad=[3,3,3,3],act=relu)
//   relu(f32[1,64,112,112])
// Input names and weight values are not part of it. A convolution's `same`
// padding is written as the pads it resolves to (`valid` when none), so
// that every spelling of one convolution has one signature. Likewise smul
// is written mul: a product by a scalar, the same kernel either way (two
// timings of it differ by the host's noise, which the search took for the
// gain of rewriting mul as smul: BERT-base, 24 such rewrites).
//
// A node a runtime fuses into the kernel of a convolution or matrix product
// (a post-op, optimizer/post_op.h) costs what it adds to that kernel; its
// signature is the anchor's operator, '+', and the node's signature with
// the chain argument (the anchor's result) first:
//   conv2d+add(f32[1,256,56,56],f32[1,256,56,56])
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/graph.h"

namespace tso {

// The signature of `n` applied to arguments of types `inputs` (the search
// asks before the node is part of a graph).
std::string op_signature(const Node& n, std::span<const TensorType> inputs);
// The signature of node `node` of `g`.
std::string op_signature(const Graph& g, int node);
// The signature of `n` run as a post-op of an `anchor` kernel whose result
// is argument `chain` of `n`.
std::string post_op_signature(Op anchor, const Node& n, std::span<const TensorType> inputs,
                              int chain);
// Whether `signature` is a post-op's ("conv2d+relu(...)").
bool is_post_op_signature(std::string_view signature);

}  // namespace tso
