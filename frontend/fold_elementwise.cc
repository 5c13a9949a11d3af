// Folding of elementwise ONNX operators: arithmetic, comparisons, logic,
// Where, Cast and the unary functions shape subgraphs use.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "frontend/fold_ops.h"
#include "frontend/host_tensor_util.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

// Broadcasts inputs 0..n-1 and calls `f(out_index, input_indices)`.
// The result's shape is returned without calling `f` when it exceeds `limit`.
template <class F>
Expected<Shape> broadcast_all(FoldInputs in, size_t n, int64_t limit, F&& f) {
  Shape out = in[0]->shape;
  for (size_t k = 1; k < n; ++k) {
    std::optional<Shape> s = broadcast_shapes(out, in[k]->shape);
    if (!s)
      return Error{"shapes " + to_string(out) + " and " + to_string(in[k]->shape) +
                   " do not broadcast"};
    out = *s;
  }
  if (too_large(out, limit)) return out;
  std::vector<std::vector<int64_t>> maps;
  for (size_t k = 0; k < n; ++k) maps.push_back(broadcast_map(out, in[k]->shape));
  std::vector<int64_t> idx(n);
  const int64_t count = out.numel();
  for (int64_t j = 0; j < count; ++j) {
    for (size_t k = 0; k < n; ++k) idx[k] = maps[k][j];
    f(j, idx);
  }
  return out;
}

Status check_inputs(FoldInputs in, size_t n) {
  if (in.size() < n) return Error{"needs " + std::to_string(n) + " inputs"};
  for (size_t k = 0; k < n; ++k)
    if (!in[k]) return Error{"input " + std::to_string(k) + " is missing"};
  return Status::Ok();
}

Status same_type(const HostTensor& a, const HostTensor& b) {
  if (a.dtype != b.dtype)
    return Error{std::string("element types ") + dtype_name(a.dtype) + " and " +
                 dtype_name(b.dtype) + " differ"};
  return Status::Ok();
}

using FloatOp = double (*)(double, double);
using IntOp = int64_t (*)(int64_t, int64_t);

int64_t int_div(int64_t a, int64_t b) { return b == 0 ? 0 : (a == INT64_MIN && b == -1) ? a : a / b; }
int64_t int_pow(int64_t a, int64_t b) {
  int64_t r = 1;
  for (int64_t k = 0; k < b && k < 64; ++k) r = static_cast<int64_t>(static_cast<uint64_t>(r) * a);
  return b < 0 ? 0 : r;
}

const std::map<std::string_view, std::pair<FloatOp, IntOp>>& arithmetic() {
  static const std::map<std::string_view, std::pair<FloatOp, IntOp>> kOps = {
      {"Add", {[](double a, double b) { return a + b; },
               [](int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }}},
      {"Sub", {[](double a, double b) { return a - b; },
               [](int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }}},
      {"Mul", {[](double a, double b) { return a * b; },
               [](int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }}},
      {"Div", {[](double a, double b) { return a / b; }, int_div}},
      {"Pow", {[](double a, double b) { return std::pow(a, b); }, int_pow}},
      {"Max", {[](double a, double b) { return std::fmax(a, b); },
               [](int64_t a, int64_t b) { return std::max(a, b); }}},
      {"Min", {[](double a, double b) { return std::fmin(a, b); },
               [](int64_t a, int64_t b) { return std::min(a, b); }}},
  };
  return kOps;
}

// nullopt when the result would exceed `limit`.
Expected<std::optional<HostTensor>> arithmetic_pair(const std::string& op, const HostTensor& a,
                                                    const HostTensor& b, int64_t limit) {
  // Pow may take an exponent of another type; the result has the base's.
  if (op != "Pow") TSO_RETURN_IF_ERROR(same_type(a, b));
  const FloatOp fop = arithmetic().at(op).first;
  const IntOp iop = arithmetic().at(op).second;
  HostTensor out;
  out.dtype = a.dtype;
  if (a.is_float()) out.f.reserve(a.f.size());
  else out.i.reserve(a.i.size());
  const HostTensor* pair[] = {&a, &b};
  Expected<Shape> s = broadcast_all(pair, 2, limit, [&](int64_t, const std::vector<int64_t>& k) {
    if (a.is_float()) out.f.push_back(round_to(a.dtype, fop(a.get_f(k[0]), b.get_f(k[1]))));
    else out.i.push_back(wrap_int(a.dtype, iop(a.get_i(k[0]), b.get_i(k[1]))));
  });
  if (!s) return s.error();
  if (too_large(*s, limit)) return std::optional<HostTensor>();
  out.shape = *s;
  return std::optional<HostTensor>(std::move(out));
}

// Binary operators, and the variadic Max, Min and Sum folded pairwise.
FoldResult fold_arithmetic(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  const size_t count = n.op_type() == "Max" || n.op_type() == "Min" || n.op_type() == "Sum"
                           ? std::max<size_t>(in.size(), 1)
                           : 2;
  TSO_RETURN_IF_ERROR(check_inputs(in, count));
  const std::string op = n.op_type() == "Sum" ? "Add" : n.op_type();
  if (count == 1) return std::vector<HostTensor>{*in[0]};
  HostTensor acc;
  for (size_t k = 1; k < count; ++k) {
    Expected<std::optional<HostTensor>> r =
        arithmetic_pair(op, k == 1 ? *in[0] : acc, *in[k], limit);
    if (!r) return r.error();
    if (!*r) return Declined();
    acc = std::move(**r);
  }
  return std::vector<HostTensor>{std::move(acc)};
}

// Mod: the remainder of a truncated quotient (fmod = 1) or, with fmod = 0,
// of a floored one, which takes the divisor's sign (integers always; floats
// from opset 28, which needed fmod = 1 before).
FoldResult fold_mod(const onnx::NodeProto& n, int64_t opset, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 2));
  const HostTensor &a = *in[0], &b = *in[1];
  TSO_RETURN_IF_ERROR(same_type(a, b));
  const bool fmod = attr_int(n, "fmod", 0) != 0;
  if (a.is_float() && !fmod && opset < 28)
    return Error{"floating-point Mod needs fmod = 1 below opset 28"};
  HostTensor out;
  out.dtype = a.dtype;
  Expected<Shape> s = broadcast_all(in, 2, limit, [&](int64_t, const std::vector<int64_t>& k) {
    if (a.is_float()) {
      const double y = b.get_f(k[1]);
      double r = std::fmod(a.get_f(k[0]), y);
      if (!fmod && r == 0) r = std::copysign(0.0, y);
      if (!fmod && r != 0 && std::signbit(r) != std::signbit(y)) r += y;
      out.f.push_back(round_to(a.dtype, r));
      return;
    }
    int64_t x = a.get_i(k[0]), y = b.get_i(k[1]);
    int64_t r = y == 0 || y == -1 ? 0 : x % y;
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;  // sign of the divisor
    out.i.push_back(wrap_int(a.dtype, r));
  });
  if (!s) return s.error();
  if (too_large(*s, limit)) return Declined();
  out.shape = *s;
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_compare(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 2));
  const HostTensor &a = *in[0], &b = *in[1];
  TSO_RETURN_IF_ERROR(same_type(a, b));
  const std::string& t = n.op_type();
  HostTensor out;
  out.dtype = DType::kBool;
  Expected<Shape> s = broadcast_all(in, 2, limit, [&](int64_t, const std::vector<int64_t>& k) {
    int c;  // -1, 0, 1; 2 when unordered (NaN)
    if (a.is_float()) {
      double x = a.get_f(k[0]), y = b.get_f(k[1]);
      c = x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    } else {
      int64_t x = a.get_i(k[0]), y = b.get_i(k[1]);
      c = x < y ? -1 : x > y ? 1 : 0;
    }
    bool r = t == "Equal"            ? c == 0
             : t == "Less"           ? c == -1
             : t == "LessOrEqual"    ? c == -1 || c == 0
             : t == "Greater"        ? c == 1
             : /* GreaterOrEqual */    c == 1 || c == 0;
    out.i.push_back(r);
  });
  if (!s) return s.error();
  if (too_large(*s, limit)) return Declined();
  out.shape = *s;
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_logic(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 2));
  const std::string& t = n.op_type();
  HostTensor out;
  out.dtype = DType::kBool;
  Expected<Shape> s = broadcast_all(in, 2, limit, [&](int64_t, const std::vector<int64_t>& k) {
    bool x = in[0]->get_i(k[0]) != 0, y = in[1]->get_i(k[1]) != 0;
    out.i.push_back(t == "And" ? (x && y) : t == "Or" ? (x || y) : (x != y));
  });
  if (!s) return s.error();
  if (too_large(*s, limit)) return Declined();
  out.shape = *s;
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_where(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 3));
  const HostTensor &c = *in[0], &x = *in[1], &y = *in[2];
  if (c.dtype != DType::kBool) return Error{"condition is not bool"};
  TSO_RETURN_IF_ERROR(same_type(x, y));
  HostTensor out;
  out.dtype = x.dtype;
  Expected<Shape> s = broadcast_all(in, 3, limit, [&](int64_t, const std::vector<int64_t>& k) {
    const HostTensor& src = c.i[k[0]] ? x : y;
    int64_t at = c.i[k[0]] ? k[1] : k[2];
    if (out.is_float()) out.f.push_back(src.f[at]);
    else out.i.push_back(src.i[at]);
  });
  if (!s) return s.error();
  if (too_large(*s, limit)) return Declined();
  out.shape = *s;
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_cast(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  const auto* to = find_attr(n, "to");
  if (!to) return Error{"has no 'to' attribute"};
  std::optional<DType> t = dtype_from_onnx(static_cast<int32_t>(to->i()));
  if (!t) return Error{"casts to " + onnx_type_name(static_cast<int32_t>(to->i())) +
                       ", which the IR does not support"};
  HostTensor out = HostTensor::zeros(*t, in[0]->shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (*t == DType::kBool) out.i[k] = in[0]->get_f(k) != 0;
    else copy_element(*in[0], k, &out, k);
  }
  return std::vector<HostTensor>{std::move(out)};
}

using UnaryFloat = double (*)(double);
const std::map<std::string_view, UnaryFloat>& unary() {
  static const std::map<std::string_view, UnaryFloat> kOps = {
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Round", [](double x) { return std::nearbyint(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Sign", [](double x) { return double((x > 0) - (x < 0)); }},
      // Sinusoidal position encodings computed in forward (timm's XCiT and
      // EdgeNeXt) are constant at static shapes.
      {"Sin", [](double x) { return std::sin(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"Erf", [](double x) { return std::erf(x); }},
  };
  return kOps;
}

FoldResult fold_unary(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  const HostTensor& x = *in[0];
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  UnaryFloat f = unary().at(n.op_type());
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (x.is_float()) {
      out.f[k] = round_to(x.dtype, f(x.f[k]));
    } else if (n.op_type() == "Neg" || n.op_type() == "Abs" || n.op_type() == "Relu" ||
               n.op_type() == "Sign" || n.op_type() == "Ceil" || n.op_type() == "Floor" ||
               n.op_type() == "Round") {
      int64_t v = x.i[k];
      int64_t r = n.op_type() == "Neg"    ? int64_t(0 - uint64_t(v))
                  : n.op_type() == "Abs"  ? (v < 0 ? int64_t(0 - uint64_t(v)) : v)
                  : n.op_type() == "Relu" ? std::max<int64_t>(v, 0)
                  : n.op_type() == "Sign" ? (v > 0) - (v < 0)
                                          : v;
      out.i[k] = wrap_int(x.dtype, r);
    } else {
      return Error{"is not defined on " + std::string(dtype_name(x.dtype))};
    }
  }
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_not(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  HostTensor out = HostTensor::zeros(DType::kBool, in[0]->shape);
  for (int64_t k = 0; k < out.numel(); ++k) out.i[k] = in[0]->get_i(k) == 0;
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_isnan(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  HostTensor out = HostTensor::zeros(DType::kBool, in[0]->shape);
  for (int64_t k = 0; k < out.numel(); ++k) out.i[k] = in[0]->is_float() && std::isnan(in[0]->f[k]);
  return std::vector<HostTensor>{std::move(out)};
}

// Clip with optional min and max inputs (opset 11 on).
FoldResult fold_clip(const onnx::NodeProto&, int64_t, FoldInputs in, int64_t limit) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  const HostTensor& x = *in[0];
  for (size_t k = 1; k < in.size() && k < 3; ++k)
    if (in[k] && in[k]->numel() != 1) return Error{"bounds must be single values"};
  HostTensor out = x;
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (out.is_float()) {
      if (in.size() > 1 && in[1]) out.f[k] = std::max(out.f[k], in[1]->get_f(0));
      if (in.size() > 2 && in[2]) out.f[k] = std::min(out.f[k], in[2]->get_f(0));
    } else {
      if (in.size() > 1 && in[1]) out.i[k] = std::max(out.i[k], in[1]->get_i(0));
      if (in.size() > 2 && in[2]) out.i[k] = std::min(out.i[k], in[2]->get_i(0));
    }
  }
  return std::vector<HostTensor>{std::move(out)};
}

// CumSum of a constant (EdgeNeXt's position encoding sums a mask of ones
// along the rows and columns), its axis a constant scalar.
FoldResult fold_cumsum(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 2));
  const HostTensor& x = *in[0];
  if (in[1]->numel() != 1 || in[1]->is_float()) return Error{"axis is not an integer scalar"};
  const int rank = x.shape.rank();
  int64_t axis = in[1]->get_i(0);
  if (axis < -rank || axis >= rank)
    return Error{"axis " + std::to_string(axis) + " is out of range for " + to_string(x.shape)};
  if (axis < 0) axis += rank;
  const bool exclusive = attr_int(n, "exclusive", 0) != 0;
  const bool reverse = attr_int(n, "reverse", 0) != 0;
  const int64_t extent = x.shape[static_cast<int>(axis)];
  const int64_t stride = strides_of(x.shape)[static_cast<size_t>(axis)];
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t start = 0; start < x.numel(); ++start) {
    if (start / stride % extent != 0) continue;  // not the first element of a line
    double fsum = 0;
    int64_t isum = 0;
    auto put = [&](int64_t k) {
      if (x.is_float())
        out.f[k] = round_to(x.dtype, fsum);
      else
        out.i[k] = isum;
    };
    for (int64_t step = 0; step < extent; ++step) {
      const int64_t k = start + (reverse ? extent - 1 - step : step) * stride;
      if (exclusive) put(k);
      if (x.is_float())
        fsum += x.f[k];
      else
        isum = wrap_int(x.dtype, int64_t(uint64_t(isum) + uint64_t(x.i[k])));
      if (!exclusive) put(k);
    }
  }
  return std::vector<HostTensor>{std::move(out)};
}

// ReduceMean, ReduceSum, ReduceMax and ReduceMin of constants (the
// statistics weight standardization computes of the weights in forward; of
// integers, torchvision's detection transform scales the image by the
// smaller and larger of its extents), their axes an input from opset 13
// (ReduceSum) or 18, an attribute before. An integer mean, which ONNX leaves
// unspecified, stays unfolded.
FoldResult fold_reduce(const onnx::NodeProto& n, int64_t opset, FoldInputs in, int64_t) {
  TSO_RETURN_IF_ERROR(check_inputs(in, 1));
  const HostTensor& x = *in[0];
  const std::string& op = n.op_type();
  if (!x.is_float() && (op == "ReduceMean" || x.numel() == 0)) return Declined();
  std::vector<int64_t> axes;
  if (reduce_axes_are_input(op, opset)) {
    if (in.size() > 1 && in[1]) axes = host_to_ints(*in[1]);
  } else if (auto a = attr_ints(n, "axes")) {
    axes = *a;
  }
  const int rank = x.shape.rank();
  std::vector<bool> reduced(rank, axes.empty());
  if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) return std::vector<HostTensor>{x};
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return Error{"axis " + std::to_string(a) + " is out of range for " + to_string(x.shape)};
    reduced[a < 0 ? a + rank : a] = true;
  }
  Shape kept, out_shape;
  for (int d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || attr_int(n, "keepdims", 1) != 0) out_shape.push_back(kept[d]);
  }
  const int64_t total = x.numel();
  const int64_t count = total / std::max<int64_t>(kept.numel(), 1);
  // Each element's place in the kept tensor, counted along x in order.
  std::vector<int64_t> idx(rank, 0), kept_stride = strides_of(kept);
  for (int d = 0; d < rank; ++d)
    if (reduced[d]) kept_stride[d] = 0;
  int64_t at = 0;
  auto advance = [&] {
    for (int d = rank - 1; d >= 0; --d) {
      at += kept_stride[d];
      if (++idx[d] < x.shape[d]) return;
      at -= kept_stride[d] * x.shape[d];
      idx[d] = 0;
    }
  };
  enum class Kind { kSum, kMax, kMin } kind = op == "ReduceMax"   ? Kind::kMax
                                              : op == "ReduceMin" ? Kind::kMin
                                                                  : Kind::kSum;
  HostTensor out = HostTensor::zeros(x.dtype, out_shape);
  if (!x.is_float()) {
    std::vector<bool> seen(out.i.size(), false);
    for (int64_t k = 0; k < total; ++k, advance()) {
      int64_t& a = out.i[at];
      const int64_t v = x.i[k];
      a = !seen[at]             ? v
          : kind == Kind::kMax ? std::max(a, v)
          : kind == Kind::kMin ? std::min(a, v)
                               : wrap_int(x.dtype, int64_t(uint64_t(a) + uint64_t(v)));
      seen[at] = true;
    }
    return std::vector<HostTensor>{std::move(out)};
  }
  std::vector<double> acc(static_cast<size_t>(kept.numel()),
                          kind == Kind::kMax   ? -INFINITY
                          : kind == Kind::kMin ? INFINITY
                                               : 0.0);
  for (int64_t k = 0; k < total; ++k, advance()) {
    double& a = acc[at];
    a = kind == Kind::kMax   ? std::max(a, double(x.f[k]))
        : kind == Kind::kMin ? std::min(a, double(x.f[k]))
                             : a + x.f[k];
  }
  for (size_t k = 0; k < acc.size(); ++k)
    out.f[k] = round_to(x.dtype, op == "ReduceMean" ? acc[k] / double(count) : acc[k]);
  return std::vector<HostTensor>{std::move(out)};
}

// A training-mode BatchNormalization of constants: weight standardization
// (timm's StdConv2d in BiT ResNets, NFNets' ScaledStdConv2d) normalizes each
// output channel's weights in forward, F.batch_norm(training=True) over the
// weights reshaped to [1, channels, fan_in]. Statistics over every axis but
// 1, the variance the population's; the running statistics blend the given
// ones by `momentum`. Inference mode maps to the IR's batchnorm instead.
FoldResult fold_batchnorm_training(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t) {
  if (attr_int(n, "training_mode", 0) == 0) return Declined();
  TSO_RETURN_IF_ERROR(check_inputs(in, 5));
  const HostTensor& x = *in[0];
  if (!x.is_float() || x.shape.rank() < 2) return Error{"needs a float input of rank 2 or more"};
  const int64_t channels = x.shape[1];
  for (size_t k = 1; k < 5; ++k)
    if (!in[k]->is_float() || in[k]->numel() != channels)
      return Error{"input " + std::to_string(k) + " does not hold one value per channel"};
  const double eps = attr_float(n, "epsilon", 1e-5f);
  const double momentum = attr_float(n, "momentum", 0.9f);
  const int64_t inner = x.numel() / (x.shape[0] * channels);
  HostTensor y = HostTensor::zeros(x.dtype, x.shape);
  HostTensor mean = HostTensor::zeros(x.dtype, Shape{channels}), var = mean;
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, sq = 0;
    const int64_t count = x.shape[0] * inner;
    for (int64_t b = 0; b < x.shape[0]; ++b)
      for (int64_t i = 0; i < inner; ++i) sum += x.f[(b * channels + c) * inner + i];
    const double m = sum / count;
    for (int64_t b = 0; b < x.shape[0]; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const double d = x.f[(b * channels + c) * inner + i] - m;
        sq += d * d;
      }
    const double v = sq / count, scale = in[1]->f[c] / std::sqrt(v + eps);
    for (int64_t b = 0; b < x.shape[0]; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (b * channels + c) * inner + i;
        y.f[k] = round_to(x.dtype, (x.f[k] - m) * scale + in[2]->f[c]);
      }
    mean.f[c] = round_to(x.dtype, in[3]->f[c] * momentum + m * (1 - momentum));
    var.f[c] = round_to(x.dtype, in[4]->f[c] * momentum + v * (1 - momentum));
  }
  std::vector<HostTensor> out = {std::move(y), std::move(mean), std::move(var)};
  out.resize(std::min<size_t>(out.size(), static_cast<size_t>(n.output_size())));
  return out;
}

}  // namespace

FoldFn find_elementwise_fold(std::string_view t) {
  if (arithmetic().count(t) || t == "Sum") return fold_arithmetic;
  if (unary().count(t)) return fold_unary;
  if (t == "Mod") return fold_mod;
  if (t == "Equal" || t == "Less" || t == "LessOrEqual" || t == "Greater" ||
      t == "GreaterOrEqual")
    return fold_compare;
  if (t == "And" || t == "Or" || t == "Xor") return fold_logic;
  if (t == "Not") return fold_not;
  if (t == "IsNaN") return fold_isnan;
  if (t == "Where") return fold_where;
  if (t == "Cast") return fold_cast;
  if (t == "Clip") return fold_clip;
  if (t == "CumSum") return fold_cumsum;
  if (t == "ReduceMean" || t == "ReduceSum" || t == "ReduceMax" || t == "ReduceMin")
    return fold_reduce;
  if (t == "BatchNormalization") return fold_batchnorm_training;
  return nullptr;
}

}  // namespace tso::onnx_frontend
