#include "core/quantized.h"

#include <array>
#include <cmath>
#include <cstring>

#include "core/post_ops.h"

namespace tso {
namespace {

const WeightData* stored(const Graph& g, TensorRef r) {
  const Node& n = g.node(r.node);
  return n.op == Op::Weight && n.data ? n.data.get() : nullptr;
}

// The one value of a stored weight of one element, as a double.
std::optional<double> one_value(const Graph& g, TensorRef r) {
  const WeightData* w = stored(g, r);
  if (!w || w->type.shape.numel() != 1) return std::nullopt;
  const std::byte* p = w->bytes.data();
  switch (w->type.dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kU8:
      return static_cast<double>(static_cast<uint8_t>(*p));
    case DType::kI8:
      return static_cast<double>(static_cast<int8_t>(*p));
    default:
      return std::nullopt;
  }
}

// Whether a and b hold the same values: the same tensor or stored weights
// of equal type and bytes.
bool same_values(const Graph& g, TensorRef a, TensorRef b) {
  if (a == b) return true;
  const WeightData *wa = stored(g, a), *wb = stored(g, b);
  return wa && wb && wa->type == wb->type && wa->bytes == wb->bytes;
}

}  // namespace

bool is_8bit(DType t) { return t == DType::kU8 || t == DType::kI8; }

bool undoes(const Graph& g, const Node& q, const Node& dq) {
  return q.op == Op::QuantizeLinear && dq.op == Op::DequantizeLinear &&
         g.type(q.args[1]).shape.numel() == 1 && same_values(g, q.args[1], dq.args[1]) &&
         same_values(g, q.args[2], dq.args[2]);
}

std::vector<int> quantize_pairs(const Graph& g) {
  std::vector<int> pair(g.size(), -1), uses(g.size(), 0);
  for (const Node& n : g.nodes())
    for (const TensorRef& a : n.args) ++uses[a.node];
  for (const GraphOutput& o : g.outputs()) ++uses[o.ref.node];
  for (int d = 0; d < g.size(); ++d) {
    const Node& dq = g.node(d);
    if (dq.op != Op::DequantizeLinear) continue;
    const int q = dq.args[0].node;
    if (uses[q] == 1 && undoes(g, g.node(q), dq)) pair[d] = q, pair[q] = d;
  }
  return pair;
}

namespace {

// Whether `t` holds levels of scale `scale` and zero point `zero`.
bool on_levels(const Graph& g, TensorRef t, TensorRef scale, TensorRef zero, int depth) {
  const Node& n = g.node(t.node);
  if (n.op == Op::DequantizeLinear)
    return same_values(g, n.args[1], scale) && same_values(g, n.args[2], zero);
  if (depth == 0) return false;
  switch (n.op) {
    case Op::Reshape:
    case Op::Transpose:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
    case Op::Slice:
    case Op::Split:
    case Op::Expand:
    case Op::Gather:
      return on_levels(g, n.args[0], scale, zero, depth - 1);
    case Op::MaxPool: {
      // A window of padding alone would be -inf.
      const Padding& p = n.attrs.pad(AttrKey::pad);
      const bool padded = p.mode == Padding::kSame ||
                          (p.mode == Padding::kExplicit && p.pads != std::array<int64_t, 4>{});
      return !padded && on_levels(g, n.args[0], scale, zero, depth - 1);
    }
    case Op::Concat:
      for (const TensorRef& a : n.args)
        if (!on_levels(g, a, scale, zero, depth - 1)) return false;
      return true;
    default:
      return false;
  }
}

}  // namespace

bool keeps_levels(const Graph& g, const Node& q) {
  if (q.op != Op::QuantizeLinear) return false;
  const std::optional<double> s = one_value(g, q.args[1]);
  if (!s || !(*s >= 1e-30 && *s <= 1e30)) return false;
  return on_levels(g, q.args[0], q.args[1], q.args[2], 8);
}

int64_t int8_weights_axis(const Node& op) {
  if (op.op == Op::Conv2d) return 0;
  return op.op == Op::Gemm && op.attrs.i(AttrKey::trans_b) ? 0 : 1;
}

std::optional<Quantization> dequantized(const Graph& g, TensorRef t) {
  const Node& d = g.node(t.node);
  if (d.op != Op::DequantizeLinear) return std::nullopt;
  Quantization l;
  l.type = g.type(d.args[0]).dtype;
  const std::optional<double> s = one_value(g, d.args[1]), z = one_value(g, d.args[2]);
  if (!is_8bit(l.type) || !s || !z || !(*s > 0) || !std::isfinite(*s)) return std::nullopt;
  l.scale = static_cast<float>(*s);
  l.zero = static_cast<int32_t>(*z);
  return l;
}

std::optional<Int8Form> int8_form(const Graph& g, const Node& op) {
  if (!is_post_op_anchor(op.op) || op.args.size() < 2) return std::nullopt;
  const std::optional<Quantization> x = dequantized(g, op.args[0]);
  const Node& w = g.node(op.args[1].node);
  if (!x || w.op != Op::DequantizeLinear) return std::nullopt;
  Int8Form f;
  f.x_type = x->type;
  f.sx = x->scale;
  f.zx = x->zero;
  const WeightData* wq = stored(g, w.args[0]);
  const WeightData* ws = stored(g, w.args[1]);
  const WeightData* wz = stored(g, w.args[2]);
  if (!wq || !ws || !wz || wq->type.dtype != DType::kI8) return std::nullopt;
  for (std::byte b : wz->bytes)
    if (b != std::byte{0}) return std::nullopt;  // oneDNN's weights are symmetric
  f.per_channel = ws->type.shape.numel() != 1;
  if (f.per_channel && w.attrs.i(AttrKey::axis) != int8_weights_axis(op)) return std::nullopt;
  f.wq = w.args[0];
  f.w_scale = w.args[1];
  return f;
}

std::optional<std::pair<Quantization, Quantization>> int8_activations(const Graph& g,
                                                                      const Node& op) {
  if (op.op != Op::Matmul) return std::nullopt;
  const std::optional<Quantization> a = dequantized(g, op.args[0]), b = dequantized(g, op.args[1]);
  if (!a || !b || stored(g, g.node(op.args[0].node).args[0]) ||
      stored(g, g.node(op.args[1].node).args[0]))
    return std::nullopt;
  return std::pair{*a, *b};
}

bool read_as_integers(const Graph& g, TensorRef t, std::span<const int> readers) {
  if (readers.empty()) return false;
  for (int r : readers) {
    const Node& n = g.node(r);
    const bool as_input = int8_form(g, n) && n.args[0] == t && !(n.args[1] == t);
    const bool as_operand = int8_activations(g, n) && (n.args[0] == t || n.args[1] == t);
    if (!as_input && !as_operand) return false;
    for (size_t k = 2; k < n.args.size(); ++k)
      if (n.args[k] == t) return false;
  }
  return true;
}

bool runs_int8(const Graph& g, const Node& op) {
  return int8_form(g, op).has_value() || int8_activations(g, op).has_value();
}

std::optional<Quantization> post_op_pair(const Graph& g, const Node& q) {
  if (q.op != Op::QuantizeLinear || !is_8bit(q.outs[0].dtype)) return std::nullopt;
  const std::optional<double> s = one_value(g, q.args[1]), z = one_value(g, q.args[2]);
  if (!s || !z || !(*s >= 1e-30 && *s <= 1e30)) return std::nullopt;
  return Quantization{q.outs[0].dtype, static_cast<float>(*s), static_cast<int32_t>(*z)};
}

namespace {

// Whether `r` is a stored f32 weight whose values are all finite and, when
// `nonzero`, none zero.
bool finite_weight(const Graph& g, TensorRef r, bool nonzero) {
  const WeightData* w = stored(g, r);
  if (!w || w->type.dtype != DType::kF32) return false;
  const int64_t n = w->type.shape.numel();
  for (int64_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, w->bytes.data() + i * 4, 4);
    if (!std::isfinite(v) || (nonzero && v == 0)) return false;
  }
  return true;
}

}  // namespace

bool keeps_nan_free(const Graph& g, const Node& n, int chain) {
  if (n.args.size() > 2 || chain < 0 || chain >= static_cast<int>(n.args.size())) return false;
  switch (n.op) {
    case Op::Relu:
    case Op::Clip:
      return true;
    case Op::Add:
    case Op::Sub: {
      if (n.args.size() != 2) return false;
      const TensorRef other = n.args[1 - chain];
      return finite_weight(g, other, false) || dequantized(g, other).has_value();
    }
    case Op::Mul:
    case Op::ScalarMul:
    case Op::Div:
      return n.args.size() == 2 && finite_weight(g, n.args[1 - chain], true);
    default:
      return false;
  }
}

void to_run_types(const Graph& g, const Node& n, std::span<TensorType> in) {
  if (std::optional<Int8Form> q = int8_form(g, n)) {
    in[0].dtype = q->x_type;
    in[1].dtype = DType::kI8;
  } else if (auto ab = int8_activations(g, n)) {
    in[0].dtype = ab->first.type;
    in[1].dtype = ab->second.type;
  }
}

}  // namespace tso
