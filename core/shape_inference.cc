#include "core/shape_inference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace tso {

namespace {

using Types = std::vector<TensorType>;
using Ints = std::vector<int64_t>;
using Inputs = std::span<const TensorType>;
using Result = Expected<Types>;

// ---------------------------------------------------------------------------
// Messages

std::string ints_str(const Ints& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

template <class T>
void append(std::string& s, const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    s += std::string_view(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    s += print_attr_value(AttrValue(double(v)));
  } else if constexpr (std::is_arithmetic_v<T>) {
    s += std::to_string(v);
  } else if constexpr (std::is_same_v<T, Ints>) {
    s += ints_str(v);
  } else {
    s += to_string(v);  // Shape, TensorType
  }
}

// "op: message", the node's identity is added by the caller.
template <class... T>
Error err(Op op, const T&... parts) {
  std::string s(op_name(op));
  s += ": ";
  (append(s, parts), ...);
  return Error{std::move(s)};
}

// ---------------------------------------------------------------------------
// Small helpers shared by the operator families

Types one(DType dtype, Shape shape) { return {TensorType{dtype, shape}}; }

// For a >= 0, b > 0, without overflow.
int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// Bound on kernel, stride, dilation and padding values, so that window
// arithmetic cannot overflow.
constexpr int64_t kMaxWindow = int64_t{1} << 31;

// Maps an axis in [-n, n) to [0, n); false when it is out of range.
bool normalize_axis(int64_t* axis, int64_t n) {
  if (*axis < -n || *axis >= n) return false;
  if (*axis < 0) *axis += n;
  return true;
}

// Normalizes `axis` of `x` in place, valid range [-rank, rank + extra).
Status normalize_axis_attr(Op op, Attrs* a, const TensorType& x, int extra = 0) {
  int64_t axis = a->i(AttrKey::axis);
  int64_t n = x.shape.rank();
  if (axis < -n || axis >= n + extra)
    return err(op, "axis ", axis, " is out of range for ", x);
  if (axis < 0) axis += n;
  a->set(AttrKey::axis, axis);
  return Status::Ok();
}

// Normalizes a list of axes against rank `n`: non-negative, sorted, no
// duplicates, so that equal meaning gives equal attributes.
Expected<Ints> normalize_axes(Op op, Ints axes, int64_t n, const TensorType& x) {
  for (int64_t& axis : axes)
    if (!normalize_axis(&axis, n)) return err(op, "axis ", axis, " is out of range for ", x);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return err(op, "axes ", axes, " repeat an axis of ", x);
  return axes;
}

Status same_dtype(Op op, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype) return err(op, "element types of ", a, " and ", b, " differ");
  return Status::Ok();
}

Status need_rank(Op op, const char* what, const TensorType& x, int rank) {
  if (x.shape.rank() != rank) return err(op, what, " ", x, " must have rank ", rank);
  return Status::Ok();
}

Status need_flag(Op op, const Attrs& a, AttrKey k) {
  int64_t v = a.i(k);
  if (v != 0 && v != 1) return err(op, attr_info(k).name, " must be 0 or 1, got ", v);
  return Status::Ok();
}

// An Ints attribute of exactly two entries, each in [min, kMaxWindow].
Status need_pair(Op op, const Attrs& a, AttrKey k, int64_t min) {
  const Ints& v = a.ints(k);
  auto bad = [&](int64_t x) { return x < min || x > kMaxWindow; };
  if (v.size() != 2 || bad(v[0]) || bad(v[1]))
    return err(op, attr_info(k).name, " must be two values >= ", min, ", got ", v);
  return Status::Ok();
}

// A shape given by an attribute: rank within Shape::kMaxRank, no negative
// extent, and an element count that fits in int64.
Expected<Shape> shape_from_ints(Op op, const Ints& dims) {
  if (dims.size() > Shape::kMaxRank)
    return err(op, "shape ", dims, " exceeds rank ", Shape::kMaxRank);
  int64_t numel = 1;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel))
      return err(op, "shape ", dims, " is not a valid tensor shape");
  return Shape(std::span<const int64_t>(dims));
}

// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

// Whether `from` broadcasts to exactly `to` (ONNX unidirectional broadcasting).
bool broadcasts_to(const Shape& from, const Shape& to) {
  std::optional<Shape> b = broadcast(from, to);
  return b && *b == to;
}

// ---------------------------------------------------------------------------
// Attributes

const char* type_name(AttrType t) {
  constexpr const char* kNames[] = {"Int", "Ints", "Float", "Act", "Pad", "Str"};
  return kNames[static_cast<int>(t)];
}


// ---------------------------------------------------------------------------
// Sources and elementwise operators

Result infer_source(Op op, const Attrs& a) {
  Expected<Shape> s = shape_from_ints(op, a.ints(AttrKey::shape));
  if (!s) return s.error();
  const Shape& sh = *s;
  switch (op) {
    case Op::ConstEye:
      if (sh.rank() != 2 || sh[0] != sh[1]) return err(op, "shape ", sh, " must be [n,n]");
      break;
    case Op::ConstEyeConv:
      if (sh.rank() != 4 || sh[0] != sh[1] || sh[2] % 2 == 0 || sh[3] % 2 == 0)
        return err(op, "shape ", sh, " must be [c,c,kh,kw] with kh and kw odd");
      break;
    case Op::ConstPool:
      if (sh.rank() != 4 || sh[1] != 1) return err(op, "shape ", sh, " must be [c,1,kh,kw]");
      break;
    default:
      break;
  }
  return one(DType::kF32, sh);
}

Result infer_binary(Op op, Inputs in) {
  TSO_RETURN_IF_ERROR(same_dtype(op, in[0], in[1]));
  std::optional<Shape> s = broadcast(in[0].shape, in[1].shape);
  if (!s) return err(op, "shapes ", in[0], " and ", in[1], " do not broadcast");
  return one(in[0].dtype, *s);
}

Result infer_scalar_mul(Inputs in) {
  TSO_RETURN_IF_ERROR(same_dtype(Op::ScalarMul, in[0], in[1]));
  if (in[1].shape.rank() != 0)
    return err(Op::ScalarMul, "scale ", in[1], " must be a scalar (rank 0); x is ", in[0]);
  return Types{in[0]};
}

Result infer_isnan(Inputs in) {
  const TensorType& x = in[0];
  if (x.dtype != DType::kF32 && x.dtype != DType::kF16 && x.dtype != DType::kF64)
    return err(Op::IsNaN, "input ", x, " must be floating-point (f32, f16 or f64)");
  return one(DType::kBool, x.shape);
}

// ONNX Where: the condition and both branches broadcast together.
Result infer_where(Inputs in) {
  const Op op = Op::Where;
  const TensorType &c = in[0], &a = in[1], &b = in[2];
  if (c.dtype != DType::kBool) return err(op, "condition ", c, " must be bool");
  TSO_RETURN_IF_ERROR(same_dtype(op, a, b));
  std::optional<Shape> s = broadcast(c.shape, a.shape);
  if (s) s = broadcast(*s, b.shape);
  if (!s) return err(op, "shapes ", c, ", ", a, " and ", b, " do not broadcast");
  return one(a.dtype, *s);
}

// equal, less, greater: one numeric element type, broadcast, bool out.
Result infer_compare(Op op, Inputs in) {
  TSO_RETURN_IF_ERROR(same_dtype(op, in[0], in[1]));
  if (in[0].dtype == DType::kBool) return err(op, "compares numbers, not bool: ", in[0]);
  std::optional<Shape> s = broadcast(in[0].shape, in[1].shape);
  if (!s) return err(op, "shapes ", in[0], " and ", in[1], " do not broadcast");
  return one(DType::kBool, *s);
}

// not, and, or: bool in, bool out, and and or broadcasting.
Result infer_logical(Op op, Inputs in) {
  for (const TensorType& t : in)
    if (t.dtype != DType::kBool) return err(op, "input ", t, " must be bool");
  if (in.size() == 1) return Types{in[0]};
  std::optional<Shape> s = broadcast(in[0].shape, in[1].shape);
  if (!s) return err(op, "shapes ", in[0], " and ", in[1], " do not broadcast");
  return one(DType::kBool, *s);
}

Result infer_cumsum(Attrs* a, Inputs in) {
  const Op op = Op::CumSum;
  const TensorType& x = in[0];
  if (x.dtype == DType::kBool) return err(op, "sums numbers, not bool: ", x);
  if (x.shape.rank() == 0) return err(op, "needs an axis; ", x, " is a scalar");
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::exclusive));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::reverse));
  return Types{x};
}

Result infer_arg_max(Attrs* a, Inputs in) {
  const Op op = Op::ArgMax;
  const TensorType& x = in[0];
  if (x.dtype == DType::kBool) return err(op, "compares numbers, not bool: ", x);
  if (x.shape.rank() == 0) return err(op, "needs an axis; ", x, " is a scalar");
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::keepdims));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::select_last_index));
  const int axis = static_cast<int>(a->i(AttrKey::axis));
  if (x.shape[axis] == 0) return err(op, "has no element to pick along axis ", axis, " of ", x);
  Shape out;
  for (int d = 0; d < x.shape.rank(); ++d)
    if (d != axis || a->i(AttrKey::keepdims)) out.push_back(d == axis ? 1 : x.shape[d]);
  return Types{TensorType{DType::kI64, out}};
}

Result infer_top_k(Attrs* a, Inputs in) {
  const Op op = Op::TopK;
  const TensorType& x = in[0];
  if (x.dtype != DType::kF32 && x.dtype != DType::kF16 && x.dtype != DType::kF64)
    return err(op, "selects among floats, not ", x);
  if (x.shape.rank() == 0) return err(op, "needs an axis; ", x, " is a scalar");
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::largest));
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::sorted));
  const int axis = static_cast<int>(a->i(AttrKey::axis));
  const int64_t k = a->i(AttrKey::k);
  if (k < 1 || k > x.shape[axis])
    return err(op, "k ", k, " is not between 1 and the extent of axis ", axis, " of ", x);
  Shape out = x.shape;
  out[axis] = k;
  return Types{TensorType{x.dtype, out}, TensorType{DType::kI64, out}};
}

// quantize_linear and dequantize_linear: x, then a scale and a zero point
// for the whole tensor or for each index of x's axis.
Result infer_quantize(Op op, Attrs* a, Inputs in) {
  const TensorType &x = in[0], &scale = in[1], &zero = in[2];
  const bool quantize = op == Op::QuantizeLinear;
  if (quantize && x.dtype != DType::kF32) return err(op, "quantizes f32, not ", x);
  if (!quantize && x.dtype != DType::kU8 && x.dtype != DType::kI8 && x.dtype != DType::kI32)
    return err(op, "dequantizes u8, i8 or i32, not ", x);
  if (scale.dtype != DType::kF32) return err(op, "scale ", scale, " must be f32");
  // One scale for the tensor makes the axis meaningless (ONNX ignores it):
  // it becomes 0, so that equal meaning gives equal attributes.
  auto one_value = [](const Shape& s) { return s.rank() == 0 || s == Shape{1}; };
  if (one_value(scale.shape)) {
    a->set(AttrKey::axis, int64_t{0});
  } else {
    TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
    const int64_t axis = a->i(AttrKey::axis);
    if (scale.shape != Shape{x.shape[axis]})
      return err(op, "scale ", scale, " is neither one value nor one per index of axis ", axis,
                 " of ", x);
  }
  if (zero.shape != scale.shape && !(one_value(zero.shape) && one_value(scale.shape)))
    return err(op, "zero point ", zero, " and scale ", scale, " differ in shape");
  if (quantize && zero.dtype != DType::kU8 && zero.dtype != DType::kI8)
    return err(op, "zero point ", zero, " must be u8 or i8");
  if (!quantize) TSO_RETURN_IF_ERROR(same_dtype(op, x, zero));
  return one(quantize ? zero.dtype : DType::kF32, x.shape);
}

Result infer_clip(const Attrs& a, Inputs in) {
  // Written as a negation so that NaN bounds are rejected too.
  if (!(a.f(AttrKey::min) <= a.f(AttrKey::max)))
    return err(Op::Clip, "min ", a.f(AttrKey::min), " exceeds max ", a.f(AttrKey::max));
  return Types{in[0]};
}

// The fused activation of conv2d, matmul and gemm: min and max are clip's
// bounds and keep their defaults under any other activation, and a clip
// bounds on at least one side (both infinite is act=none), so that one
// meaning has one spelling (core/attrs.h).
Status check_fused_act(Op op, const Attrs& a) {
  const double lo = a.f(AttrKey::min), hi = a.f(AttrKey::max);
  const double inf = std::numeric_limits<double>::infinity();
  if (a.act(AttrKey::act) != Act::kClip) {
    if (lo != -inf || hi != inf)
      return err(op, "min and max bound act=clip only, not act=", act_name(a.act(AttrKey::act)));
    return Status::Ok();
  }
  if (!(lo <= hi)) return err(op, "act=clip: min ", lo, " exceeds max ", hi);
  if (lo == -inf && hi == inf) return err(op, "act=clip without a finite min or max is act=none");
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Convolution, pooling and linear algebra

// Output extent of one spatial dimension (0 = H, 1 = W) for a window of
// effective size `eff`; -1 when the window does not fit.
int64_t window_out(int64_t in, int64_t eff, int64_t stride, const Padding& p, int dim,
                   bool ceil_mode) {
  if (p.mode == Padding::kSame) return ceil_div(in, stride);
  int64_t lo = p.mode == Padding::kExplicit ? p.pads[dim] : 0;
  int64_t hi = p.mode == Padding::kExplicit ? p.pads[dim + 2] : 0;
  int64_t total = in + lo + hi - eff;
  if (total < 0) return -1;
  int64_t out = (ceil_mode ? ceil_div(total, stride) : total / stride) + 1;
  // ONNX: with ceil_mode the last window must start inside the input or its
  // left padding.
  if (ceil_mode && (out - 1) * stride >= in + lo) --out;
  return out;
}

// Validates the padding and stores it canonically: explicit zeros are
// `valid`, and the pads of the other modes are zero.
Status normalize_padding(Op op, Attrs* a) {
  Padding p = a->pad(AttrKey::pad);
  if (p.mode == Padding::kExplicit) {
    for (int64_t v : p.pads)
      if (v < 0 || v > kMaxWindow)
        return err(op, "explicit padding ", print_attr_value(p), " must be between 0 and 2^31");
    if (p.pads == std::array<int64_t, 4>{}) p = Padding{};
  } else {
    p.pads = {};
  }
  a->set(AttrKey::pad, p);
  return Status::Ok();
}

Result infer_conv2d(Attrs* attrs, Inputs in) {
  const Op op = Op::Conv2d;
  const Attrs& a = *attrs;
  const TensorType &x = in[0], &w = in[1];
  TSO_RETURN_IF_ERROR(need_rank(op, "input", x, 4));
  TSO_RETURN_IF_ERROR(need_rank(op, "weight", w, 4));
  TSO_RETURN_IF_ERROR(same_dtype(op, x, w));
  TSO_RETURN_IF_ERROR(need_pair(op, a, AttrKey::stride, 1));
  TSO_RETURN_IF_ERROR(need_pair(op, a, AttrKey::dilation, 1));
  TSO_RETURN_IF_ERROR(normalize_padding(op, attrs));
  int64_t groups = a.i(AttrKey::groups);
  if (groups < 1) return err(op, "groups must be >= 1, got ", groups);
  if (x.shape[1] != w.shape[1] * groups)
    return err(op, "input ", x, " has ", x.shape[1], " channels but weight ", w, " expects ",
               w.shape[1], " x groups(", groups, ")");
  if (w.shape[0] % groups != 0)
    return err(op, "weight ", w, " has ", w.shape[0], " output channels, not divisible by groups(",
               groups, ")");
  if (in.size() == 3) {
    TSO_RETURN_IF_ERROR(same_dtype(op, x, in[2]));
    if (in[2].shape != Shape{w.shape[0]})
      return err(op, "bias ", in[2], " must be [", w.shape[0], "] for weight ", w);
  }
  Shape out{x.shape[0], w.shape[0], 0, 0};
  for (int d = 0; d < 2; ++d) {
    int64_t eff = (w.shape[2 + d] - 1) * a.ints(AttrKey::dilation)[d] + 1;
    out[2 + d] = window_out(x.shape[2 + d], eff, a.ints(AttrKey::stride)[d],
                            a.pad(AttrKey::pad), d, false);
    if (out[2 + d] < 1 || w.shape[2 + d] < 1)
      return err(op, "kernel of weight ", w, " does not fit input ", x, " with padding ",
                 print_attr_value(a.pad(AttrKey::pad)));
  }
  return one(x.dtype, out);
}

Result infer_pool(Op op, Attrs* attrs, Inputs in) {
  TSO_RETURN_IF_ERROR(normalize_padding(op, attrs));
  const Attrs& a = *attrs;
  const TensorType& x = in[0];
  TSO_RETURN_IF_ERROR(need_rank(op, "input", x, 4));
  TSO_RETURN_IF_ERROR(need_pair(op, a, AttrKey::kernel, 1));
  TSO_RETURN_IF_ERROR(need_pair(op, a, AttrKey::stride, 1));
  TSO_RETURN_IF_ERROR(need_flag(op, a, AttrKey::ceil_mode));
  if (op == Op::AvgPool) TSO_RETURN_IF_ERROR(need_flag(op, a, AttrKey::count_include_pad));
  const Padding& p = a.pad(AttrKey::pad);
  const Ints& k = a.ints(AttrKey::kernel);
  // A pad as wide as the kernel would allow windows with no input element.
  if (p.mode == Padding::kExplicit)
    for (int i = 0; i < 4; ++i)
      if (p.pads[i] >= k[i % 2])
        return err(op, "padding ", print_attr_value(p), " must be smaller than kernel ", k);
  Shape out = x.shape;
  for (int d = 0; d < 2; ++d) {
    out[2 + d] = window_out(x.shape[2 + d], k[d], a.ints(AttrKey::stride)[d], p, d,
                            a.i(AttrKey::ceil_mode) == 1);
    if (out[2 + d] < 1)
      return err(op, "kernel ", k, " does not fit input ", x, " with padding ",
                 print_attr_value(p));
  }
  return one(x.dtype, out);
}

Result infer_global_avgpool(Inputs in) {
  const TensorType& x = in[0];
  if (x.shape.rank() < 3)
    return err(Op::GlobalAvgPool, "input ", x, " must have rank >= 3 ([N,C,spatial...])");
  Shape out = x.shape;
  for (int i = 2; i < out.rank(); ++i) out[i] = 1;
  return one(x.dtype, out);
}

Result infer_enlarge(const Attrs& a, Inputs in) {
  const Op op = Op::Enlarge;
  const TensorType& w = in[0];
  TSO_RETURN_IF_ERROR(need_rank(op, "weight", w, 4));
  TSO_RETURN_IF_ERROR(need_pair(op, a, AttrKey::kernel, 1));
  const Ints& k = a.ints(AttrKey::kernel);
  for (int d = 0; d < 2; ++d)
    if (k[d] < w.shape[2 + d] || (k[d] - w.shape[2 + d]) % 2 != 0)
      return err(op, "kernel ", k, " must be at least the kernel of ", w,
                 " with an even difference in each dimension");
  return one(w.dtype, Shape{w.shape[0], w.shape[1], k[0], k[1]});
}

Result infer_matmul(Inputs in) {
  const Op op = Op::Matmul;
  const TensorType &a = in[0], &b = in[1];
  TSO_RETURN_IF_ERROR(same_dtype(op, a, b));
  int ra = a.shape.rank(), rb = b.shape.rank();
  if (ra < 2 || rb < 2) return err(op, "operands ", a, " and ", b, " must have rank >= 2");
  if (a.shape[ra - 1] != b.shape[rb - 2])
    return err(op, "inner dimensions of ", a, " and ", b, " differ");
  std::optional<Shape> batch =
      broadcast(Shape(a.shape.dims().first(ra - 2)), Shape(b.shape.dims().first(rb - 2)));
  if (!batch) return err(op, "batch dimensions of ", a, " and ", b, " do not broadcast");
  batch->push_back(a.shape[ra - 2]);
  batch->push_back(b.shape[rb - 1]);
  return one(a.dtype, *batch);
}

Result infer_gemm(const Attrs& a, Inputs in) {
  const Op op = Op::Gemm;
  TSO_RETURN_IF_ERROR(need_flag(op, a, AttrKey::trans_a));
  TSO_RETURN_IF_ERROR(need_flag(op, a, AttrKey::trans_b));
  for (const TensorType& t : in.first(2)) TSO_RETURN_IF_ERROR(need_rank(op, "operand", t, 2));
  TSO_RETURN_IF_ERROR(same_dtype(op, in[0], in[1]));
  bool ta = a.i(AttrKey::trans_a), tb = a.i(AttrKey::trans_b);
  int64_t m = in[0].shape[ta], k = in[0].shape[!ta];
  int64_t kb = in[1].shape[tb], n = in[1].shape[!tb];
  if (k != kb)
    return err(op, "inner dimensions of ", in[0], " and ", in[1], " differ (trans_a=", int(ta),
               ", trans_b=", int(tb), ")");
  Shape out{m, n};
  if (in.size() == 3) {
    TSO_RETURN_IF_ERROR(same_dtype(op, in[0], in[2]));
    if (!broadcasts_to(in[2].shape, out))
      return err(op, "bias ", in[2], " does not broadcast to the result ", out);
  }
  return one(in[0].dtype, out);
}

// ---------------------------------------------------------------------------
// Normalization and reduction

Result infer_batchnorm(Inputs in) {
  const Op op = Op::BatchNorm;
  const TensorType& x = in[0];
  if (x.shape.rank() < 2) return err(op, "input ", x, " must have rank >= 2 ([N,C,...])");
  for (const TensorType& p : in.subspan(1)) {
    TSO_RETURN_IF_ERROR(same_dtype(op, x, p));
    if (p.shape != Shape{x.shape[1]})
      return err(op, "parameter ", p, " must be [", x.shape[1], "] for input ", x);
  }
  return Types{x};
}

Result infer_layernorm(Attrs* a, Inputs in) {
  const Op op = Op::LayerNorm;
  const TensorType& x = in[0];
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  Shape trailing(x.shape.dims().subspan(a->i(AttrKey::axis)));
  for (const TensorType& p : in.subspan(1)) {
    TSO_RETURN_IF_ERROR(same_dtype(op, x, p));
    if (!broadcasts_to(p.shape, trailing))
      return err(op, "parameter ", p, " does not broadcast to the normalized shape ", trailing,
                 " of ", x);
  }
  return Types{x};
}

Result infer_grid_sample(const Attrs& a, Inputs in) {
  const Op op = Op::GridSample;
  const TensorType &x = in[0], &grid = in[1];
  if (x.dtype != DType::kF32 && x.dtype != DType::kF16)
    return err(op, "input ", x, " must be f32 or f16");
  TSO_RETURN_IF_ERROR(same_dtype(op, x, grid));
  if (x.shape.rank() != 4 || grid.shape.rank() != 4 || grid.shape[3] != 2 ||
      grid.shape[0] != x.shape[0])
    return err(op, "needs x [N, C, H, W] and grid [N, Ho, Wo, 2], got ", x, " and ", grid);
  const std::string& mode = a.str(AttrKey::mode);
  const std::string& padding = a.str(AttrKey::padding_mode);
  if (mode != "bilinear" && mode != "nearest")
    return err(op, "mode \"", mode, "\" is not bilinear or nearest");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return err(op, "padding_mode \"", padding, "\" is not zeros, border or reflection");
  if (a.i(AttrKey::align_corners) != 0 && a.i(AttrKey::align_corners) != 1)
    return err(op, "align_corners must be 0 or 1");
  return one(x.dtype, Shape{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
}

Result infer_softmax(Op op, Attrs* a, Inputs in) {
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, in[0]));
  return Types{in[0]};
}

Result infer_reduce(Op op, Attrs* a, Inputs in) {
  const TensorType& x = in[0];
  TSO_RETURN_IF_ERROR(need_flag(op, *a, AttrKey::keepdims));
  Ints axes = a->ints(AttrKey::axes);
  if (axes.empty())  // ONNX: no axes reduces over all of them; store them explicitly
    for (int i = 0; i < x.shape.rank(); ++i) axes.push_back(i);
  Expected<Ints> norm = normalize_axes(op, std::move(axes), x.shape.rank(), x);
  if (!norm) return norm.error();
  bool keep = a->i(AttrKey::keepdims);
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    bool reduced = std::binary_search(norm->begin(), norm->end(), i);
    if (!reduced) out.push_back(x.shape[i]);
    else if (keep) out.push_back(1);
  }
  a->set(AttrKey::axes, std::move(*norm));
  return one(x.dtype, out);
}

// ---------------------------------------------------------------------------
// Data movement

Result infer_concat(Attrs* a, Inputs in) {
  const Op op = Op::Concat;
  const TensorType& x = in[0];
  if (x.shape.rank() == 0) return err(op, "cannot concatenate scalars ", x);
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  int axis = a->i(AttrKey::axis);
  Shape out = x.shape;
  for (const TensorType& t : in.subspan(1)) {
    TSO_RETURN_IF_ERROR(same_dtype(op, x, t));
    bool ok = t.shape.rank() == x.shape.rank();
    for (int i = 0; ok && i < x.shape.rank(); ++i) ok = i == axis || t.shape[i] == x.shape[i];
    if (!ok) return err(op, "shapes ", x, " and ", t, " differ outside axis ", axis);
    out[axis] += t.shape[axis];
  }
  return one(x.dtype, out);
}

Result infer_split(Attrs* a, Inputs in) {
  const Op op = Op::Split;
  const TensorType& x = in[0];
  if (x.shape.rank() == 0) return err(op, "cannot split a scalar ", x);
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  int axis = a->i(AttrKey::axis);
  const Ints& sizes = a->ints(AttrKey::sizes);
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 1) return err(op, "sizes ", sizes, " must each be >= 1");
    sum += s;
  }
  if (sizes.empty() || sum != x.shape[axis])
    return err(op, "sizes ", sizes, " do not sum to dimension ", axis, " of ", x);
  Types outs;
  for (int64_t s : sizes) {
    TensorType t = x;
    t.shape[axis] = s;
    outs.push_back(t);
  }
  return outs;
}

Result infer_transpose(const Attrs& a, Inputs in) {
  const TensorType& x = in[0];
  const Ints& perm = a.ints(AttrKey::perm);
  Ints sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int>(perm.size()) == x.shape.rank();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok) return err(Op::Transpose, "perm ", perm, " is not a permutation of the axes of ", x);
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape[p]);
  return one(x.dtype, out);
}

// ONNX Reshape (allowzero = 0): 0 copies the input extent, one -1 is inferred.
// The resolved shape is stored back so the node is canonical.
Result infer_reshape(Attrs* a, Inputs in) {
  const Op op = Op::Reshape;
  const TensorType& x = in[0];
  Ints dims = a->ints(AttrKey::shape);
  int infer_at = -1;
  int64_t known = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == 0) {
      if (i >= x.shape.rank()) return err(op, "shape ", dims, " copies a missing dim of ", x);
      dims[i] = x.shape[i];
    }
    if (dims[i] == -1 && infer_at < 0) {
      infer_at = i;
      continue;
    }
    if (dims[i] < 0) return err(op, "shape ", dims, " is invalid for ", x);
    if (__builtin_mul_overflow(known, dims[i], &known))
      return err(op, "shape ", dims, " is too large");
  }
  int64_t numel = x.shape.numel();
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      return err(op, "cannot infer the -1 in shape ", a->ints(AttrKey::shape), " for ", x);
    dims[infer_at] = numel / known;
    known = numel;
  }
  if (known != numel)
    return err(op, "shape ", a->ints(AttrKey::shape), " does not have the ", numel,
               " elements of ", x);
  Expected<Shape> out = shape_from_ints(op, dims);
  if (!out) return out.error();
  a->set(AttrKey::shape, std::move(dims));
  return one(x.dtype, *out);
}

Result infer_flatten(Attrs* a, Inputs in) {
  const TensorType& x = in[0];
  TSO_RETURN_IF_ERROR(normalize_axis_attr(Op::Flatten, a, x, /*extra=*/1));
  int axis = a->i(AttrKey::axis);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.shape.rank(); ++i) (i < axis ? outer : inner) *= x.shape[i];
  return one(x.dtype, Shape{outer, inner});
}

Result infer_squeeze(Attrs* a, Inputs in) {
  const Op op = Op::Squeeze;
  const TensorType& x = in[0];
  Ints axes = a->ints(AttrKey::axes);
  if (axes.empty())  // ONNX: squeeze every dimension of extent 1; store them explicitly
    for (int i = 0; i < x.shape.rank(); ++i)
      if (x.shape[i] == 1) axes.push_back(i);
  Expected<Ints> norm = normalize_axes(op, std::move(axes), x.shape.rank(), x);
  if (!norm) return norm.error();
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    bool squeezed = std::binary_search(norm->begin(), norm->end(), i);
    if (squeezed && x.shape[i] != 1)
      return err(op, "axis ", i, " of ", x, " has extent ", x.shape[i], ", not 1");
    if (!squeezed) out.push_back(x.shape[i]);
  }
  a->set(AttrKey::axes, std::move(*norm));
  return one(x.dtype, out);
}

Result infer_unsqueeze(Attrs* a, Inputs in) {
  const Op op = Op::Unsqueeze;
  const TensorType& x = in[0];
  const Ints& given = a->ints(AttrKey::axes);
  if (given.empty()) return err(op, "axes must not be empty");
  int64_t rank = x.shape.rank() + static_cast<int64_t>(given.size());
  if (rank > Shape::kMaxRank)
    return err(op, "axes ", given, " make ", x, " exceed rank ", Shape::kMaxRank);
  // Axes index the output, as in ONNX.
  Expected<Ints> norm = normalize_axes(op, given, rank, x);
  if (!norm) return norm.error();
  Shape out;
  for (int i = 0, next = 0; i < rank; ++i)
    out.push_back(std::binary_search(norm->begin(), norm->end(), i) ? 1 : x.shape[next++]);
  a->set(AttrKey::axes, std::move(*norm));
  return one(x.dtype, out);
}

// ONNX Slice with its clamping. Entries are stored sorted by axis with the
// clamped start and the tightest end, and step 1 where at most one element is
// taken, so slices of the same elements have equal attributes. An end before
// the first element (negative steps) is stored as -(d + 1), which ONNX
// clamping maps back to -1.
Result infer_slice(Attrs* a, Inputs in) {
  const Op op = Op::Slice;
  const TensorType& x = in[0];
  const Ints &starts = a->ints(AttrKey::starts), &ends = a->ints(AttrKey::ends);
  Ints axes = a->ints(AttrKey::axes), steps = a->ints(AttrKey::steps);
  const size_t n = starts.size();
  if (axes.empty())
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return err(op, "starts ", starts, ", ends ", ends, ", axes ", axes, " and steps ", steps,
               " differ in length");
  struct Entry { int64_t axis, start, end, step; };
  std::vector<Entry> entries;
  Shape out = x.shape;
  for (size_t i = 0; i < n; ++i) {
    Entry e{axes[i], starts[i], ends[i], steps[i]};
    if (!normalize_axis(&e.axis, x.shape.rank()))
      return err(op, "axis ", axes[i], " is out of range for ", x);
    if (e.step == 0 || e.step == INT64_MIN) return err(op, "steps ", steps, " are invalid");
    const int64_t d = x.shape[e.axis];
    if (e.start < 0) e.start += d;
    if (e.end < 0) e.end += d;
    int64_t len = 0;
    if (e.step > 0) {
      e.start = std::clamp<int64_t>(e.start, 0, d);
      e.end = std::clamp<int64_t>(e.end, 0, d);
      len = e.end > e.start ? ceil_div(e.end - e.start, e.step) : 0;
    } else if (d > 0) {
      e.start = std::clamp<int64_t>(e.start, 0, d - 1);
      e.end = std::clamp<int64_t>(e.end, -1, d - 1);
      len = e.start > e.end ? ceil_div(e.start - e.end, -e.step) : 0;
    }
    if (len == 0) e = {e.axis, 0, 0, 1};
    if (len == 1) e.step = 1;
    if (len > 0) e.end = e.start + (len - 1) * e.step + (e.step > 0 ? 1 : -1);
    if (e.end < 0) e.end = -(d + 1);
    out[e.axis] = len;
    entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(), [](auto& p, auto& q) { return p.axis < q.axis; });
  for (size_t i = 1; i < n; ++i)
    if (entries[i].axis == entries[i - 1].axis) return err(op, "axes ", axes, " repeat an axis");
  Ints s, e, ax, st;
  for (const Entry& x : entries) {
    ax.push_back(x.axis), s.push_back(x.start), e.push_back(x.end), st.push_back(x.step);
  }
  a->set(AttrKey::starts, s).set(AttrKey::ends, e).set(AttrKey::axes, ax).set(AttrKey::steps, st);
  return one(x.dtype, out);
}

Result infer_pad(const Attrs& a, Inputs in) {
  const TensorType& x = in[0];
  const Ints& pads = a.ints(AttrKey::pads);
  const int r = x.shape.rank();
  bool ok = static_cast<int>(pads.size()) == 2 * r;
  for (int64_t p : pads) ok = ok && p >= 0;
  if (!ok)
    return err(Op::Pad, "pads ", pads, " must be ", 2 * r, " non-negative values for ", x);
  Shape out = x.shape;
  for (int i = 0; i < r; ++i) out[i] += pads[i] + pads[i + r];
  return one(x.dtype, out);
}

// The box [starts, starts + patch) must lie inside base; starts is not
// normalized (a negative start is an error, not counted from the end), so one
// box has one spelling.
Result infer_update_slice(const Attrs& a, Inputs in) {
  const Op op = Op::UpdateSlice;
  const TensorType &base = in[0], &patch = in[1];
  TSO_RETURN_IF_ERROR(same_dtype(op, base, patch));
  const int r = base.shape.rank();
  if (patch.shape.rank() != r)
    return err(op, "patch ", patch, " and base ", base, " differ in rank");
  const Ints& starts = a.ints(AttrKey::starts);
  if (static_cast<int>(starts.size()) != r)
    return err(op, "starts ", starts, " must have one entry per axis of ", base);
  for (int i = 0; i < r; ++i)
    if (starts[i] < 0 || patch.shape[i] > base.shape[i] - starts[i])
      return err(op, "patch ", patch, " at starts ", starts, " does not fit in base ", base);
  return Types{base};
}

// ONNX Gather: data's axis replaced by the indices' shape. Index values are
// checked where they are known (the runtimes; the importer for constants).
Result infer_gather(Attrs* a, Inputs in) {
  const Op op = Op::Gather;
  const TensorType &x = in[0], &idx = in[1];
  if (x.shape.rank() == 0) return err(op, "cannot index a scalar ", x);
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32)
    return err(op, "indices ", idx, " must be i64 or i32");
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  const int axis = static_cast<int>(a->i(AttrKey::axis));
  if (x.shape.rank() - 1 + idx.shape.rank() > Shape::kMaxRank)
    return err(op, "indices ", idx, " into ", x, " exceed rank ", Shape::kMaxRank);
  if (x.shape[axis] == 0 && idx.shape.checked_numel().value_or(1) != 0)
    return err(op, "indices ", idx, " into the empty axis ", axis, " of ", x);
  Shape out;
  for (int i = 0; i < axis; ++i) out.push_back(x.shape[i]);
  for (int64_t d : idx.shape) out.push_back(d);
  for (int i = axis + 1; i < x.shape.rank(); ++i) out.push_back(x.shape[i]);
  return one(x.dtype, out);
}

Result infer_gather_elements(Attrs* a, Inputs in) {
  const Op op = Op::GatherElements;
  const TensorType &x = in[0], &idx = in[1];
  if (x.shape.rank() == 0) return err(op, "cannot index a scalar ", x);
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32)
    return err(op, "indices ", idx, " must be i64 or i32");
  if (idx.shape.rank() != x.shape.rank())
    return err(op, "indices ", idx, " and data ", x, " differ in rank");
  TSO_RETURN_IF_ERROR(normalize_axis_attr(op, a, x));
  const int axis = static_cast<int>(a->i(AttrKey::axis));
  for (int d = 0; d < x.shape.rank(); ++d)
    if (d != axis && idx.shape[d] > x.shape[d])
      return err(op, "indices ", idx, " exceed data ", x, " along axis ", d);
  if (x.shape[axis] == 0 && idx.shape.checked_numel().value_or(1) != 0)
    return err(op, "indices ", idx, " into the empty axis ", axis, " of ", x);
  return one(x.dtype, idx.shape);
}

// ONNX Expand: x and the target shape broadcast together; the attribute
// becomes the result's shape, so one expansion has one spelling.
Result infer_expand(Attrs* a, Inputs in) {
  const Op op = Op::Expand;
  const TensorType& x = in[0];
  Expected<Shape> target = shape_from_ints(op, a->ints(AttrKey::shape));
  if (!target) return target.error();
  std::optional<Shape> out = broadcast(x.shape, *target);
  if (!out) return err(op, x, " does not broadcast to ", *target);
  a->set(AttrKey::shape, Ints(out->begin(), out->end()));
  return one(x.dtype, *out);
}

Result infer_cast(const Attrs& a, Inputs in) {
  DType to;
  if (!parse_dtype(a.str(AttrKey::to), &to))
    return err(Op::Cast, "unknown element type '", a.str(AttrKey::to),
               "' (known: f32, f16, f64, i64, i32, bool)");
  return one(to, in[0].shape);
}

// Per-element FLOP estimates of the normalizations (inference form).
constexpr int64_t kBatchNormFlops = 2;  // folded into one multiply-add
constexpr int64_t kLayerNormFlops = 8;  // mean, centre, square, sum, scale, shift
constexpr int64_t kSoftmaxFlops = 5;    // max, subtract, exp, sum, divide

}  // namespace

Status complete_attrs(Op op, Attrs* attrs) {
  const OpInfo& info = op_info(op);
  for (const auto& [k, v] : attrs->entries()) {
    const AttrInfo& ai = attr_info(k);
    if (!info.takes(k)) return err(op, "does not take attribute '", ai.name, "'");
    if (!attr_value_has_type(v, ai.type))
      return err(op, "attribute '", ai.name, "' must be ", type_name(ai.type), ", got ",
                 print_attr_value(v));
  }
  for (int i = 0; i < kNumAttrKeys; ++i) {
    AttrKey k = static_cast<AttrKey>(i);
    if (!info.takes(k) || attrs->has(k)) continue;
    const std::optional<AttrValue>& d = attr_default(k);
    if (!d) return err(op, "missing required attribute '", attr_info(k).name, "'");
    attrs->set(k, *d);
  }
  return Status::Ok();
}

namespace {

Result infer_unchecked(Op op, Attrs* attrs, Inputs in) {
  const OpInfo& info = op_info(op);
  const int n = static_cast<int>(in.size());
  if (n < info.min_inputs || (info.max_inputs != kVariadic && n > info.max_inputs))
    return err(op, "takes ", info.min_inputs, info.max_inputs == kVariadic ? " or more" : "",
               info.max_inputs > info.min_inputs ? " to " + std::to_string(info.max_inputs) : "",
               " inputs, got ", n);
  Attrs& a = *attrs;
  if (info.takes(AttrKey::act)) TSO_RETURN_IF_ERROR(check_fused_act(op, a));
  switch (op) {
    case Op::Input:
    case Op::Weight: return err(op, "types are recorded when declared, not inferred");
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool: return infer_source(op, a);
    case Op::Conv2d: return infer_conv2d(&a, in);
    case Op::Matmul: return infer_matmul(in);
    case Op::Add:
    case Op::Mul:
    case Op::Sub:
    case Op::Div:
    case Op::Pow:
    case Op::Max:
    case Op::Min: return infer_binary(op, in);
    case Op::ScalarMul: return infer_scalar_mul(in);
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Sqrt:
    case Op::Neg:
    case Op::Exp:
    case Op::Softplus:
    case Op::Log:
    case Op::Abs:
    case Op::Sin:
    case Op::Cos: return Types{in[0]};
    case Op::LeakyRelu:
      if (!std::isfinite(a.f(AttrKey::alpha)))
        return err(op, "alpha ", a.f(AttrKey::alpha), " is not finite");
      return Types{in[0]};
    case Op::Clip: return infer_clip(a, in);
    case Op::Concat: return infer_concat(&a, in);
    case Op::Split: return infer_split(&a, in);
    case Op::Transpose: return infer_transpose(a, in);
    case Op::AvgPool:
    case Op::MaxPool: return infer_pool(op, &a, in);
    case Op::Enlarge: return infer_enlarge(a, in);
    case Op::BatchNorm: return infer_batchnorm(in);
    case Op::Gemm: return infer_gemm(a, in);
    case Op::Softmax:
    case Op::LogSoftmax: return infer_softmax(op, &a, in);
    case Op::GridSample: return infer_grid_sample(a, in);
    case Op::LayerNorm: return infer_layernorm(&a, in);
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2: return infer_reduce(op, &a, in);
    case Op::Reshape: return infer_reshape(&a, in);
    case Op::Flatten: return infer_flatten(&a, in);
    case Op::Squeeze: return infer_squeeze(&a, in);
    case Op::Unsqueeze: return infer_unsqueeze(&a, in);
    case Op::Slice: return infer_slice(&a, in);
    case Op::Pad: return infer_pad(a, in);
    case Op::GlobalAvgPool: return infer_global_avgpool(in);
    case Op::IsNaN: return infer_isnan(in);
    case Op::Where: return infer_where(in);
    case Op::UpdateSlice:
      return infer_update_slice(a, in);
    case Op::Gather: return infer_gather(&a, in);
    case Op::GatherElements: return infer_gather_elements(&a, in);
    case Op::Expand: return infer_expand(&a, in);
    case Op::Cast: return infer_cast(a, in);
    case Op::Equal:
    case Op::Less:
    case Op::Greater: return infer_compare(op, in);
    case Op::Not:
    case Op::And:
    case Op::Or: return infer_logical(op, in);
    case Op::CumSum: return infer_cumsum(&a, in);
    case Op::ArgMax: return infer_arg_max(&a, in);
    case Op::TopK: return infer_top_k(&a, in);
    case Op::QuantizeLinear:
    case Op::DequantizeLinear: return infer_quantize(op, &a, in);
    case Op::Opaque: return err(op, "output types are recorded at import, not inferred");
  }
  TSO_CHECK(false, "operator out of range");
  return Error{};
}

// A fused activation counts one FLOP per output element, like the separate
// elementwise operator, so fusing changes bytes moved, not FLOPs.
Count flop_count(Op op, const Attrs& a, Inputs in, Inputs out) {
  auto numel = [](Inputs ts) {
    return ts.empty() ? Count(0) : Count(ts[0].shape.checked_numel().value_or(-1));
  };
  const Count n_out = numel(out);
  auto act = [&] { return a.act(AttrKey::act) == Act::kNone ? Count(0) : n_out; };
  switch (op) {
    case Op::Input:
    case Op::Weight:
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool:
    case Op::Concat:
    case Op::Split:
    case Op::Transpose:
    case Op::Enlarge:
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
    case Op::Slice:
    case Op::Pad:
    case Op::UpdateSlice:
    case Op::Gather:
    case Op::GatherElements:
    case Op::Expand:
    case Op::Cast:
    case Op::Opaque: return 0;  // data movement, or unknown work
    case Op::Conv2d: {
      const Shape& w = in[1].shape;
      return Count(2) * n_out * w[1] * w[2] * w[3] + (in.size() == 3 ? n_out : 0) + act();
    }
    case Op::Matmul:
      return Count(2) * n_out * in[0].shape.back() + act();
    case Op::Gemm: {
      int64_t k = in[0].shape[a.i(AttrKey::trans_a) ? 0 : 1];
      return Count(2) * n_out * k + (in.size() == 3 ? n_out : 0) + act();
    }
    case Op::Add:
    case Op::Mul:
    case Op::ScalarMul:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Clip:
    case Op::Sub:
    case Op::Div:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Neg:
    case Op::Exp:
    case Op::LeakyRelu:
    case Op::Softplus:
    case Op::Log:
    case Op::Abs:
    case Op::Sin:
    case Op::Cos:
    case Op::Max:
    case Op::Min:
    case Op::IsNaN:
    case Op::Where:
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
    case Op::Not:
    case Op::And:
    case Op::Or:
    case Op::CumSum: return n_out;
    case Op::QuantizeLinear:
    case Op::DequantizeLinear: return 2 * n_out;  // a multiply or divide, an add
    case Op::AvgPool:
    case Op::MaxPool: {
      const Ints& k = a.ints(AttrKey::kernel);
      return n_out * k[0] * k[1];
    }
    case Op::GlobalAvgPool:
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ArgMax:
    case Op::TopK: return numel(in);
    case Op::ReduceL2: return 2 * numel(in);  // square, sum
    case Op::BatchNorm: return kBatchNormFlops * n_out;
    case Op::LayerNorm: return kLayerNormFlops * n_out;
    case Op::Softmax:
    case Op::LogSoftmax: return kSoftmaxFlops * n_out;
    case Op::GridSample: return 8 * n_out;  // four taps, a multiply and an add each
  }
  TSO_CHECK(false, "operator out of range");
  return 0;
}

}  // namespace

// Inference proper, then the sizes: every output's bytes and the operator's
// FLOPs must fit in int64, so that no later count (a runtime's buffer, the
// cost model's work, `tso inspect`) wraps around. A rewrite whose target
// would overflow fails here and is not applied.
Expected<std::vector<TensorType>> infer_types(Op op, Attrs* attrs, Inputs in) {
  TSO_RETURN_IF_ERROR(complete_attrs(op, attrs));
  Result out = infer_unchecked(op, attrs, in);
  if (!out) return out;
  for (size_t k = 0; k < out->size(); ++k)
    if (Status s = check_size((*out)[k], "output " + std::to_string(k)); !s.ok())
      return err(op, s.error().message);
  if (!flop_count(op, *attrs, in, *out).fits()) {
    std::string types;
    for (const TensorType& t : in) types += (types.empty() ? "" : ", ") + to_string(t);
    return err(op, "its FLOP count overflows int64 for inputs ", types);
  }
  return out;
}

int64_t flops(Op op, const Attrs& attrs, Inputs in, Inputs out) {
  std::optional<int64_t> n = flop_count(op, attrs, in, out).value();
  TSO_CHECK(n, std::string(op_name(op)) + ": FLOPs of types that inference accepted overflow");
  return *n;
}

}  // namespace tso
