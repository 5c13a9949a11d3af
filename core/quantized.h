// What a runtime runs in a form of its own in a quantized (QDQ) model, and
// what the optimizer's cost models must therefore cost as that form: a
// quantize_linear and the dequantize_linear that undoes it (a pair: one
// step), and a convolution or product by weights that reads the
// dequantize_linear of its input and of stored i8 weights (an int8 kernel).
// runtime/cpu lowers them so; optimizer/cost_model.cc costs them so. Both
// must agree, so the rules are stated once, here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/graph.h"

namespace tso {

// Whether dequantize_linear `dq` reads quantize_linear `q` and undoes it:
// one scale, and the same scale and zero point values. Where `dq` is the
// only reader of `q`, the two are a pair.
bool undoes(const Graph& g, const Node& q, const Node& dq);

// Per node: the dequantize_linear that undoes a quantize_linear as its only
// reader, and the other way round; -1 elsewhere.
std::vector<int> quantize_pairs(const Graph& g);

// Whether quantize_linear `q` leaves its input's values as they are once
// dequantized with the same scale and zero point: its input holds levels
// of that scale and zero point already, dequantize_linear results of them
// moved around (reshape, transpose, flatten, squeeze, unsqueeze, slice,
// split, expand, gather's data, maxpool without padding, concat of such)
// but not computed on. Quantizing a level gives back its integer exactly
// (fl((q - z) * s) / s is within 3e-5 of q - z), so such a pair is the
// identity: QDQ models quantize a reshape's or a transpose's output with
// its input's parameters (BERT: 96 such pairs). The scale must lie in
// [1e-30, 1e30], where the levels are normal floats.
bool keeps_levels(const Graph& g, const Node& q);

// A tensor that is a dequantize_linear of one stored scale (positive,
// finite) and zero point: its integer type, u8 or i8, and parameters.
struct Quantization {
  DType type = DType::kU8;
  float scale = 1;
  int32_t zero = 0;
};
std::optional<Quantization> dequantized(const Graph& g, TensorRef t);

// The integer form of a product `op` (conv2d, matmul or gemm) whose input
// (args[0]) is a dequantize_linear with one scale and zero point and whose
// weights (args[1]) are a dequantize_linear of stored i8 values with zero
// points of zero and one scale, or one per output channel along
// int8_weights_axis. Such a product sums integers exactly:
//   sx * sw[o] * sum((xq - zx) * wq) + bias.
struct Int8Form {
  float sx = 1;  // the input's scale and zero point
  int32_t zx = 0;
  DType x_type = DType::kU8;  // u8 or i8
  TensorRef wq, w_scale;      // the stored i8 weights and their scales
  bool per_channel = false;
};
std::optional<Int8Form> int8_form(const Graph& g, const Node& op);

// A matmul of two dequantized activations (attention's scores and its
// weighted values in a QDQ transformer), neither read from stored values:
// the levels of both, which an int8 kernel multiplies exactly. Nullopt for
// other nodes.
std::optional<std::pair<Quantization, Quantization>> int8_activations(const Graph& g,
                                                                      const Node& op);

// Whether every node of `readers` (those that read `t`, which is no graph
// output) is an int8 kernel reading `t` as its quantized input (int8_form's
// input, either operand of int8_activations): a kernel that quantizes `t`
// back reads the levels' integers, not `t`'s floats, so a pair whose
// dequantize_linear gives `t` runs no step of its own there (an int8
// kernel's cost includes quantizing its input).
bool read_as_integers(const Graph& g, TensorRef t, std::span<const int> readers);

// Whether `op` runs on an int8 kernel: int8_form or int8_activations holds.
bool runs_int8(const Graph& g, const Node& op);

// A pair's quantization where it can run as post-ops of a convolution's or
// product's kernel (a runtime's fake quantization: divide by the scale,
// round half to even, clip to the levels less the zero point, multiply by
// the scale): quantize_linear `q` has one stored scale in [1e-30, 1e30]
// and a stored zero point. Nullopt otherwise.
std::optional<Quantization> post_op_pair(const Graph& g, const Node& q);

// Whether post-op `n`, reading the chain of an int8 kernel as argument
// `chain`, leaves a chain that holds no NaN without one: relu and clip;
// add and sub of a stored f32 weight whose values are finite or of a
// dequantized tensor; mul, smul and div by stored finite non-zero values.
// An int8 kernel's result holds none (integer sums times finite scales,
// at worst infinite), and a pair's fake quantization maps NaN to the level
// below the zero point where quantize_linear gives the zero point: a pair
// runs as post-ops only where no NaN can reach it.
bool keeps_nan_free(const Graph& g, const Node& n, int chain);

// The weights' axis that runs along a product's output channels: a
// convolution's 0, [K, N] weights' 1, a gemm's transposed [N, K] ones' 0.
int64_t int8_weights_axis(const Node& op);

// The argument types `n`, a node of `g` whose arguments' types `in` holds,
// runs on: an int8 product's operands become their integer types (u8 or
// i8; stored weights i8), so that its signature (core/signature.h) names
// the int8 kernel:
//   conv2d(u8[1,64,56,56],i8[64,64,1,1],f32[64])
//   matmul(u8[1,12,128,64],u8[1,12,64,128])
void to_run_types(const Graph& g, const Node& n, std::span<TensorType> in);

// Whether `t` is an element type of quantized values (u8, i8).
bool is_8bit(DType t);

}  // namespace tso
