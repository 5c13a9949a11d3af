#include "optimizer/post_op.h"

#include <algorithm>

#include "core/post_ops.h"
#include "core/quantized.h"

namespace tso::opt {

std::optional<PostOp> as_post_op(const Node& n, std::span<const TensorType> inputs,
                                 const ChainOf& chain_of,
                                 const std::function<bool(int k)>& weight_only) {
  if (n.outs.size() != 1 || n.outs[0].dtype != DType::kF32 || inputs.empty()) return std::nullopt;
  const bool unary = is_unary_post_op(n.op);
  const bool commutative = n.op == Op::Add || n.op == Op::Mul || n.op == Op::ScalarMul;
  const bool binary = commutative || n.op == Op::Sub || n.op == Op::Div;
  if (!unary && !binary && n.op != Op::BatchNorm) return std::nullopt;
  const int sides = commutative ? 2 : 1;
  for (int k = 0; k < sides; ++k) {
    if (!(inputs[k] == n.outs[0])) continue;
    std::optional<Op> anchor = chain_of(k);
    if (!anchor) continue;
    if (unary) return PostOp{*anchor, k};
    if (n.op == Op::BatchNorm) {
      bool weights = *anchor == Op::Conv2d;
      for (int a = 1; a < static_cast<int>(inputs.size()); ++a) weights = weights && weight_only(a);
      if (weights) return PostOp{*anchor, k};
      continue;
    }
    const TensorType& other = inputs[1 - k];
    if (other.dtype == DType::kF32 && post_op_operand_fits(*anchor, other.shape, n.outs[0].shape))
      return PostOp{*anchor, k};
  }
  return std::nullopt;
}

std::optional<FusedActivation> split_fused_activation(const Node& n) {
  if (!is_post_op_anchor(n.op) || n.outs.size() != 1) return std::nullopt;
  const AttrValue* act = n.attrs.find(AttrKey::act);
  if (!act || !std::holds_alternative<Act>(*act)) return std::nullopt;
  FusedActivation f;
  switch (std::get<Act>(*act)) {
    case Act::kNone:
      return std::nullopt;
    case Act::kRelu:
      f.activation.op = Op::Relu;
      break;
    case Act::kSigmoid:
      f.activation.op = Op::Sigmoid;
      break;
    case Act::kTanh:
      f.activation.op = Op::Tanh;
      break;
    case Act::kGelu:
      f.activation.op = Op::Gelu;
      break;
    case Act::kClip:
      f.activation.op = Op::Clip;
      f.activation.attrs.set(AttrKey::min, n.attrs.f(AttrKey::min));
      f.activation.attrs.set(AttrKey::max, n.attrs.f(AttrKey::max));
      break;
  }
  f.anchor = n;
  f.anchor.attrs.set(AttrKey::act, Act::kNone);
  if (n.attrs.has(AttrKey::min)) f.anchor.attrs.set(AttrKey::min, *attr_default(AttrKey::min));
  if (n.attrs.has(AttrKey::max)) f.anchor.attrs.set(AttrKey::max, *attr_default(AttrKey::max));
  f.activation.outs = n.outs;
  f.post_op = PostOp{n.op, 0};
  return f;
}

bool only_reader(const Graph& g, const GraphIndex& index, TensorRef t, int reader) {
  const int p = t.node;
  if (index.is_output[p] || index.users[p].size() != 1 || index.users[p][0] != reader ||
      g.node(p).outs.size() != 1 || index.constant[p])
    return false;
  const std::vector<TensorRef>& args = g.node(reader).args;
  return std::count(args.begin(), args.end(), t) == 1;
}

namespace {

// The anchor of the chain whose value is `t`, read by `reader` alone, when
// that chain starts at an int8 kernel and holds no NaN.
std::optional<Op> nan_free_int8_chain(const Graph& g, const GraphIndex& index, TensorRef t,
                                      int reader) {
  if (!only_reader(g, index, t, reader)) return std::nullopt;
  const Node& producer = g.node(t.node);
  if (is_post_op_anchor(producer.op))
    return runs_int8(g, producer) ? std::optional<Op>(producer.op) : std::nullopt;
  if (std::optional<Op> a = pair_post_op(g, index, t.node)) return a;  // finite levels
  std::optional<PostOp> up = post_op(g, index, t.node);
  if (!up || !keeps_nan_free(g, producer, up->chain)) return std::nullopt;
  return nan_free_int8_chain(g, index, producer.args[up->chain], t.node);
}

}  // namespace

std::optional<Op> pair_post_op(const Graph& g, const GraphIndex& index, int dq) {
  const Node& d = g.node(dq);
  if (d.op != Op::DequantizeLinear || index.constant[dq]) return std::nullopt;
  const TensorRef qr = d.args[0];
  const Node& q = g.node(qr.node);
  if (!only_reader(g, index, qr, dq) || !undoes(g, q, d) || !post_op_pair(g, q))
    return std::nullopt;
  return nan_free_int8_chain(g, index, q.args[0], qr.node);
}

std::optional<Op> chain_of(const Graph& g, const GraphIndex& index, TensorRef t, int reader) {
  if (!only_reader(g, index, t, reader)) return std::nullopt;
  const int p = t.node;
  const Node& producer = g.node(p);
  if (is_post_op_anchor(producer.op)) return producer.op;
  if (std::optional<Op> a = pair_post_op(g, index, p)) return a;
  std::optional<PostOp> up = post_op(g, index, p);
  if (!up) return std::nullopt;
  return up->anchor;
}

std::optional<PostOp> post_op(const Graph& g, const GraphIndex& index, int i) {
  const Node& n = g.node(i);
  if (is_source(n.op) || index.constant[i]) return std::nullopt;
  TensorType buf[8];
  if (n.args.size() > 8) return std::nullopt;  // no post-op has more arguments
  for (size_t k = 0; k < n.args.size(); ++k) buf[k] = g.type(n.args[k]);
  return as_post_op(
      n, {buf, n.args.size()}, [&](int k) { return chain_of(g, index, n.args[k], i); },
      [&](int k) { return index.constant[n.args[k].node] != 0; });
}

}  // namespace tso::opt
