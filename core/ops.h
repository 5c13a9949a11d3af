// Operators of the tso IR and the semantic contract every part relies on.
//
// Layout. Activations are NCHW; conv weights are [C_out, C_in / groups, KH,
// KW]; matmul multiplies the last two dimensions and broadcasts the leading
// (batch) ones numpy-style.
//
// Broadcasting. Binary elementwise operators (add, mul, sub, div, pow, max,
// min) and where broadcast numpy-style: shapes align at the trailing
// dimension and a dimension of 1 stretches. `smul(x, s)` multiplies by a rank-0 tensor.
//
// Padding. See `Padding` in core/attrs.h: valid, same (extra element at the
// end), or explicit [top, left, bottom, right]. Pooling never counts padded
// positions for max; avgpool divides by the window size clipped to the input
// unless count_include_pad = 1. ceil_mode = 1 rounds the output size up as
// ONNX does (a window must start inside the input or its left padding).
//
// Concat and split. `concat(x0..xn; axis)` stacks along `axis`; `split(x;
// axis, sizes)` cuts `x` into consecutive pieces of the given sizes, one
// output per entry, which must sum to the extent of `axis`. Negative axes
// count from the end, as in ONNX, and are normalized at construction.
//
// Bias. conv2d takes an optional third input, a bias of shape [C_out] added
// to every output position before the activation.
//
// Fused activation. `act` on conv2d, matmul and gemm applies the named
// elementwise function to the operator's full result, after any bias: relu,
// sigmoid, tanh, gelu (the erf form, as the standalone gelu) or clip, whose
// bounds are the node's `min` and `max` (relu6 is act=clip, min=0, max=6),
// computed as the standalone clip computes them. min and max keep their
// defaults (-inf, inf) under every other activation, and a fused clip has a
// finite bound, so one meaning has one spelling; shape inference refuses
// anything else.
//
// Activations of other models. `leaky_relu(x; alpha)` is x where x >= 0 and
// alpha x elsewhere (ONNX LeakyRelu: alpha is written out, its ONNX default
// 0.01 included, since the attribute's default here is gemm's 1);
// `softplus(x)` is log(1 + exp(x)) (ONNX Softplus).
//
// Logarithms and extremes. `log(x)` is the natural logarithm (-inf at 0, NaN
// below), `abs(x)` the magnitude (ONNX Log, Abs). `max(a, b)` and `min(a, b)`
// are the larger and smaller of a and b after numpy-style broadcasting, NaN
// where either is NaN (ONNX Max and Min of two inputs, as ONNX Runtime
// computes them; the importer chains more). `log_softmax(x; axis)` is
// x - max - log(sum(exp(x - max))) along `axis` (ONNX LogSoftmax), the axis
// normalized like softmax's.
//
// Sampling. `grid_sample(x, grid; mode, padding_mode, align_corners)` is ONNX
// GridSample (opset 16) of a 4-D x [N, C, H, W] at grid [N, Ho, Wo, 2] (x
// then y, normalized to [-1, 1]: the centres of the end elements with
// align_corners = 1, their outer edges with 0), giving [N, C, Ho, Wo] of x's
// element type (f32 or f16, as grid): mode "bilinear" (4 taps) or "nearest"
// (round half to even), padding_mode "zeros" (positions outside read 0),
// "border" (clamped) or "reflection" (reflected, then clamped); a NaN
// coordinate reads 0 (runtime/common/grid_sample.h).
//
// Sinusoids. `sin(x)` and `cos(x)` of x in radians (ONNX Sin, Cos), NaN at the
// infinities.
//
// Selection. `top_k(x; axis, k, largest, sorted)` is ONNX TopK with k a
// constant, 1 <= k <= the axis' extent: the k largest (largest = 1) or
// smallest elements of float x along `axis` (normalized like concat's) and
// their i64 indices, two outputs of x's shape with k along the axis, larger
// (or smaller) first whether or not `sorted` asks for an order (ONNX allows
// any), the lower index first among equal ones, NaN larger than any number
// (runtime/common/top_k.h).
//
// Quantization. `quantize_linear(x, scale, zero_point; axis)` is ONNX
// QuantizeLinear: saturate(round(x / scale) + zero_point), rounding half to
// even, saturating to the range of zero_point's element type (u8 or i8),
// which the result has; x and scale are f32. `dequantize_linear(x, scale,
// zero_point; axis)` is ONNX DequantizeLinear: (x - zero_point) * scale, f32,
// of x u8, i8 or i32 (zero_point of x's type). scale and zero_point are one
// value (shape [] or [1]: per tensor) or one per index of x's `axis` (shape
// [x.shape[axis]]: per axis); `axis` is normalized like concat's.
//
// Constants. const_ones(shape) is all ones; const_eye(shape=[n,n]) the
// identity matrix; const_eye_conv(shape=[c,c,kh,kw]) the conv kernel that maps
// each channel to itself (1 at the kernel centre of the diagonal, kh and kw
// odd); const_pool(shape=[c,1,kh,kw]) the depthwise kernel of ones that, with
// groups = c, sums each window.
//
// Enlarge. `enlarge(w; kernel=[kh,kw])` zero-pads a conv kernel
// symmetrically to kh x kw (both differences even), so conv2d with `same`
// padding computes the same result with either kernel.
//
// NaN masks and selection. `isnan(x)` is a bool tensor of x's shape, true
// exactly where x is NaN (x f32, f16 or f64; infinities are not NaN).
// `where(c, a, b)` takes a where c is true and b elsewhere (ONNX Where): c is
// bool, a and b share an element type, which the result has, and all three
// broadcast numpy-style to the result's shape. Bool tensors hold 0 and 1.
//
// Box updates. `update_slice(base, patch; starts)` is base with the box
// starting at `starts` (one entry per axis) replaced by patch: result[i] =
// patch[i - starts] where starts <= i < starts + shape(patch) on every axis,
// base[i] elsewhere. base and patch share rank and element type, which the
// result has with base's shape; the box lies inside base (0 <= starts[a] and
// starts[a] + patch[a] <= base[a]). PET's corrections write recomputed boxes
// of a mutant's output this way.
//
// Indexing. `gather(data, indices; axis)` is ONNX Gather: with data of shape
// D = [d0..d(r-1)] and indices of shape I (i64 or i32, any rank), the result
// has shape D[:axis] + I + D[axis+1:], element type data's, and
// result[a, j, b] = data[a, k, b] where k = indices[j], plus d(axis) when
// negative (a, j and b multi-indices). An index outside [-d(axis), d(axis))
// is an error when the graph runs (at import when the indices are constant).
// The axis is normalized like concat's.
//
// `gather_elements(data, indices; axis)` is ONNX GatherElements: data and
// indices (i64 or i32) share a rank, indices no longer than data along every
// other axis; the result has indices' shape and data's element type, and
// result[i] = data[i with i(axis) replaced by k], k = indices[i] (plus
// d(axis) when negative). Indices out of range are an error as for gather.
//
// Broadcast and conversion. `expand(x; shape)` is ONNX Expand: x broadcast
// numpy-style with `shape`; the attribute is normalized to the result's shape.
// `cast(x; to)` converts each element to the element type named by `to`
// ("f32", "i64", "bool", ...): floats to integers truncate toward zero,
// anything to bool is x != 0, bool is 0 or 1 (ONNX Cast).
//
// Comparisons and logic. `equal(a, b)`, `less(a, b)` and `greater(a, b)`
// compare a and b (one numeric element type, not bool) elementwise after
// numpy-style broadcasting and give bool; NaN compares unequal and unordered,
// as in IEEE (ONNX Equal, Less, Greater). `not(x)`, `and(a, b)` and `or(a, b)`
// are the logical functions of bool tensors, and and or broadcasting.
// `cumsum(x; axis, exclusive, reverse)` is ONNX CumSum: result[.., i, ..] is
// the sum of x[.., j, ..] along `axis` over j <= i (j < i when exclusive = 1;
// j >= i, or j > i, when reverse = 1), in x's element type and shape; the axis
// is normalized like concat's.
// `arg_max(x; axis, keepdims, select_last_index)` is ONNX ArgMax: the i64
// index along `axis` of the largest element of x (numeric, not bool), the
// first of equal ones, or the last when select_last_index = 1; NaN counts as
// larger than any number (numpy's argmax, ONNX's reference). The axis stays
// as 1 when keepdims = 1, is dropped otherwise, and is normalized like
// concat's; an axis of no elements is an error.
//
// Reductions. `reduce_mean`, `reduce_sum`, `reduce_max` and `reduce_l2`
// (x; axes, keepdims) are ONNX ReduceMean, ReduceSum, ReduceMax and ReduceL2
// (sqrt of the sum of squares) over `axes`, all of them when empty; the
// reduced axes stay as 1 when keepdims = 1. The axes are normalized, sorted,
// at construction.
//
// Float assumptions. Rewrites may reassociate and redistribute sums and
// products (as every fast kernel does); results are then equal up to rounding.
// Tolerance policy: float comparisons between two computations of one function
// use a relative error max|a-b| / max(max|b|, 1e-6) against a stated bound:
// 1e-4 for fp32 end-to-end checks, 1e-9 for double.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/attrs.h"

namespace tso {

enum class Op : uint8_t {
#define TSO_OP(id, name, min_inputs, max_inputs, outputs, kind, attrs) id,
#include "core/ops.def"
};
constexpr int kNumOps = 0
#define TSO_OP(id, name, min_inputs, max_inputs, outputs, kind, attrs) +1
#include "core/ops.def"
    ;

enum class OpKind : uint8_t { Source, Linear, Elementwise, Shape, Other };

constexpr int kVariadic = -1;
constexpr int kOutputsFromSizes = -1;  // split: one output per entry of `sizes`
constexpr int kOutputsFromAttr = -2;   // opaque: output types recorded on the node

struct OpInfo {
  Op op;
  std::string_view name;
  int min_inputs;
  int max_inputs;  // kVariadic: no upper bound
  int outputs;     // >= 1, or kOutputsFromSizes / kOutputsFromAttr
  OpKind kind;
  uint64_t attr_mask;  // bit k set when the operator takes AttrKey k

  bool takes(AttrKey k) const { return attr_mask >> static_cast<int>(k) & 1; }
};

const OpInfo& op_info(Op op);
std::span<const OpInfo> all_ops();
bool find_op(std::string_view name, Op* out);
// Levenshtein distance, for "did you mean" suggestions on unknown names.
int edit_distance(std::string_view a, std::string_view b);
inline std::string_view op_name(Op op) { return op_info(op).name; }

// Graph inputs and constants: no tensor inputs, type fixed by attributes.
inline bool is_source(Op op) { return op_info(op).kind == OpKind::Source; }
// Operators whose result does not depend on the order of their two inputs.
bool is_commutative(Op op);

}  // namespace tso
