// Internal to runtime/reference: the operator implementations, grouped by
// family, each a class template of static functions instantiated for float,
// double and Mod at the end of its own .cc file. executor.cc dispatches to
// them. Kernels report bad shapes as an Error whose message names the
// operator; the executor prefixes the node.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/types.h"
#include "runtime/reference/tensor.h"

namespace tso::ref {

template <class S>
using Args = std::span<const Tensor<S>* const>;

// Elementwise functions of one argument.
enum class Fn : uint8_t { kIdentity, kRelu, kSigmoid, kTanh, kErf, kGelu, kExp, kSqrt, kNeg };
// Broadcasting binary operators.
enum class Bin : uint8_t { kAdd, kSub, kMul, kDiv, kPow };

// Comparisons (bool results) and the logic of bool tensors.
enum class Cmp : uint8_t { kEqual, kLess, kGreater };
enum class Logic : uint8_t { kAnd, kOr };

// Numpy-style broadcast of two shapes; the error names both.
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);
// Row-major strides of `s`, and the strides that read a tensor of shape `s`
// broadcast to `out` (0 along stretched or missing dimensions).
std::vector<int64_t> strides_of(const Shape& s);
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out);
// "[1,3,224,224]"-style text for messages.
std::string shape_text(const Shape& s);
Error shape_error(std::string_view op, const std::string& what);

template <class S>
struct Elementwise {
  static Tensor<S> unary(Fn f, Tensor<S> x);  // by value: reuses the buffer
  static void apply(Fn f, std::span<S> xs);
  // The fused activation of a conv2d, matmul or gemm with attributes `a`
  // (act, and clip's min and max): the same functions as the standalone
  // operators.
  static void activate(const Attrs& a, std::span<S> xs);
  static Expected<Tensor<S>> binary(Bin op, const Tensor<S>& a, const Tensor<S>& b);
  static Expected<Tensor<S>> smul(const Tensor<S>& x, const Tensor<S>& s);
  static Tensor<S> clip(const Tensor<S>& x, const Attrs& a);
  // leaky_relu and softplus; errors on Mod, which has neither (the generator
  // does not enumerate them).
  static Expected<Tensor<S>> leaky_relu(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> softplus(const Tensor<S>& x);
  // log and abs, and max and min of two tensors broadcast together (NaN
  // where either is NaN); errors on Mod, which has no logarithm and whose
  // values have no order (the generator does not enumerate them).
  static Expected<Tensor<S>> log(const Tensor<S>& x);
  static Expected<Tensor<S>> abs(const Tensor<S>& x);
  // sin or cos (`op`) of x in radians; an error on Mod, which has no sinusoid.
  static Expected<Tensor<S>> sinusoid(Op op, const Tensor<S>& x);
  static Expected<Tensor<S>> extremum(Op op, const Tensor<S>& a, const Tensor<S>& b);
  // 1 where x is NaN, else 0; an error on Mod, which has no NaN to find.
  static Expected<Tensor<S>> isnan(const Tensor<S>& x);
  // a where c is non-zero, else b, all three broadcast together.
  static Expected<Tensor<S>> where(const Tensor<S>& c, const Tensor<S>& a, const Tensor<S>& b);
  // 1 where the comparison holds, else 0, broadcasting; an error on Mod,
  // whose values have no order and whose equality is not the reals'.
  static Expected<Tensor<S>> compare(Cmp op, const Tensor<S>& a, const Tensor<S>& b);
  // Logic of bool tensors (0 or 1) in the polynomial forms that are exact on
  // them in every scalar type: not x = 1 - x, a and b = ab, a or b = a + b - ab.
  static Tensor<S> logical_not(Tensor<S> x);
  static Expected<Tensor<S>> logical(Logic op, const Tensor<S>& a, const Tensor<S>& b);
};

template <class S>
struct Linalg {
  // c[m,n] = op(a) op(b), row-major, where op transposes when asked; a is
  // [m,k] ([k,m] when trans_a) and b is [k,n] ([n,k] when trans_b).
  static void product(int64_t m, int64_t n, int64_t k, const S* a, bool trans_a, const S* b,
                      bool trans_b, S* c);
  static Expected<Tensor<S>> matmul(const Tensor<S>& a, const Tensor<S>& b, const Attrs& attrs);
  static Expected<Tensor<S>> gemm(Args<S> in, const Attrs& attrs);
};

template <class S>
struct ConvPool {
  // bias: null, or [C_out] added to each output channel before the activation.
  static Expected<Tensor<S>> conv2d(const Tensor<S>& x, const Tensor<S>& w, const Tensor<S>* bias,
                                    const Attrs& a);
  static Expected<Tensor<S>> avgpool(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> maxpool(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> global_avgpool(const Tensor<S>& x);
  // x sampled at grid's positions (runtime/common/grid_sample.h); an error on
  // Mod, whose values are no coordinates.
  static Expected<Tensor<S>> grid_sample(const Tensor<S>& x, const Tensor<S>& grid,
                                         const Attrs& a);
};

template <class S>
struct ShapeOps {
  static Expected<Tensor<S>> constant(Op op, const Attrs& a);
  static Expected<Tensor<S>> concat(Args<S> in, const Attrs& a);
  static Expected<std::vector<Tensor<S>>> split(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> transpose(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> reshape(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> flatten(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> squeeze(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> unsqueeze(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> slice(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> pad(const Tensor<S>& x, const Attrs& a);
  static Expected<Tensor<S>> enlarge(const Tensor<S>& w, const Attrs& a);
  // base with the box at `starts` replaced by patch.
  static Expected<Tensor<S>> update_slice(const Tensor<S>& base, const Tensor<S>& patch,
                                          const Attrs& a);
  // ONNX Gather along `axis`; indices hold integers (negative ones count from
  // the end), any other value or one out of range is an error naming it.
  static Expected<Tensor<S>> gather(const Tensor<S>& x, const Tensor<S>& indices, const Attrs& a);
  // ONNX GatherElements: one element of x per index, checked like gather's.
  static Expected<Tensor<S>> gather_elements(const Tensor<S>& x, const Tensor<S>& indices,
                                             const Attrs& a);
  // x broadcast to the `shape` attribute (ONNX Expand).
  static Expected<Tensor<S>> expand(const Tensor<S>& x, const Attrs& a);
  // x converted to `to`: truncated toward zero for integers, 0 or 1 for bool.
  static Tensor<S> cast(Tensor<S> x, DType to);
};

template <class S>
struct Norm {
  static Expected<Tensor<S>> batchnorm(Args<S> in, const Attrs& a);
  static Expected<Tensor<S>> layernorm(Args<S> in, const Attrs& a);
  static Expected<Tensor<S>> softmax(const Tensor<S>& x, const Attrs& a);
  // x - max - log(sum(exp(x - max))) along the axis; an error on Mod, which
  // has no logarithm.
  static Expected<Tensor<S>> log_softmax(const Tensor<S>& x, const Attrs& a);
  // reduce_mean, reduce_sum, reduce_max or reduce_l2 over `axes`.
  static Expected<Tensor<S>> reduce(Op op, const Tensor<S>& x, const Attrs& a);
  // Running sums along `axis` (ONNX CumSum, with exclusive and reverse).
  static Expected<Tensor<S>> cumsum(const Tensor<S>& x, const Attrs& a);
  // The index of the largest element along `axis` (ONNX ArgMax; NaN the
  // largest); an error on Mod, whose values have no order.
  static Expected<Tensor<S>> arg_max(const Tensor<S>& x, const Attrs& a);
  // The k largest or smallest elements along `axis` and their indices (ONNX
  // TopK, runtime/common/top_k.h); an error on Mod, whose values have no order.
  static Expected<std::vector<Tensor<S>>> top_k(const Tensor<S>& x, const Attrs& a);
};

// quantize_linear into element type `to` (u8 or i8) and dequantize_linear,
// with one scale and zero point or one per index of `axis`
// (runtime/common/quantize.h); errors on Mod, which has no rounding.
template <class S>
struct Quantize {
  static Expected<Tensor<S>> quantize(const Tensor<S>& x, const Tensor<S>& scale,
                                      const Tensor<S>& zero, int64_t axis, DType to);
  static Expected<Tensor<S>> dequantize(const Tensor<S>& x, const Tensor<S>& scale,
                                        const Tensor<S>& zero, int64_t axis);
};

// Normalizes a possibly negative axis against `rank`; false when out of range.
bool normalize_axis(int64_t* axis, int rank);

}  // namespace tso::ref
