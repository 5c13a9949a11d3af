#include "runtime/cpu/fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/post_ops.h"
#include "core/quantized.h"
#include "runtime/cpu/dnnl_util.h"

namespace tso::cpu {

Consumers consumers(const Graph& g) {
  Consumers c{std::vector<std::vector<int>>(g.size()), std::vector<bool>(g.size(), false)};
  for (int i = 0; i < g.size(); ++i)
    for (const TensorRef& a : g.node(i).args)
      if (a.output == 0) c.of[a.node].push_back(i);
  for (const GraphOutput& o : g.outputs()) c.is_output[o.ref.node] = true;
  return c;
}

namespace {

bool stored_weight(const Graph& g, TensorRef r) {
  const Node& n = g.node(r.node);
  return n.op == Op::Weight && n.data && n.outs[0].dtype == DType::kF32;
}

// The post-op `next` applied to the chain's value `cur`, when it can be one.
bool joins(const Graph& g, Op anchor, int cur, int next, PostOpNode* out) {
  const Node& n = g.node(next);
  const Shape& shape = g.node(cur).outs[0].shape;
  if (n.outs.size() != 1 || !(n.outs[0].shape == shape) || n.outs[0].dtype != DType::kF32)
    return false;
  out->node = next;
  if (is_unary_post_op(n.op)) return true;
  if (n.op == Op::BatchNorm)
    return anchor == Op::Conv2d && n.args[0].node == cur &&
           std::all_of(n.args.begin() + 1, n.args.end(),
                       [&](TensorRef r) { return stored_weight(g, r); });
  const bool commutative = n.op == Op::Add || n.op == Op::Mul || n.op == Op::ScalarMul;
  if (!commutative && n.op != Op::Sub && n.op != Op::Div) return false;
  const bool lhs = n.args[0].node == cur && n.args[0].output == 0;
  if (!lhs && !commutative) return false;
  out->other = n.args[lhs ? 1 : 0];
  if (out->other.node == cur) return false;
  const TensorType& t = g.type(out->other);
  return t.dtype == DType::kF32 && post_op_operand_fits(anchor, t.shape, shape);
}

// The constant value of a one-element stored f32 weight.
bool scalar_weight(const Graph& g, TensorRef r, float* v) {
  const Node& n = g.node(r.node);
  if (n.op != Op::Weight || !n.data || n.outs[0].dtype != DType::kF32 ||
      n.outs[0].shape.numel() != 1)
    return false;
  std::memcpy(v, n.data->bytes.data(), sizeof(float));
  return true;
}

// The one consumer of `node` (output 0), or -1.
int only_consumer(const Consumers& c, int node) {
  return !c.is_output[node] && c.of[node].size() == 1 ? c.of[node][0] : -1;
}

// `n` is a binary `op` of `x` (either side when commutative) and a stored
// scalar equal to `value`.
bool binary_with_scalar(const Graph& g, int n, Op op, int x, float value) {
  const Node& node = g.node(n);
  if (node.op != op) return false;
  float v = 0;
  for (int side : {0, 1}) {
    if (side == 1 && op == Op::Div) break;
    if (node.args[side].node == x && scalar_weight(g, node.args[1 - side], &v))
      return std::abs(v - value) <= 1e-6f * std::abs(value);
  }
  return false;
}

// x's two consumers spell GELU: d = div(x, sqrt 2), e = erf(d),
// a = add(e, 1), m = mul(x, a), y = mul(m, 0.5) (operands in either order).
bool gelu_pattern(const Graph& g, const Consumers& c, int x, PostOpNode* out) {
  if (c.is_output[x] || c.of[x].size() != 2) return false;
  for (int k : {0, 1}) {
    const int d = c.of[x][k], m = c.of[x][1 - k];
    if (!binary_with_scalar(g, d, Op::Div, x, 1.41421356f)) continue;
    const int e = only_consumer(c, d);
    if (e < 0 || g.node(e).op != Op::Erf) continue;
    const int a = only_consumer(c, e);
    if (a < 0 || !binary_with_scalar(g, a, Op::Add, e, 1.f)) continue;
    const Node& mul = g.node(m);
    if (mul.op != Op::Mul || only_consumer(c, a) != m ||
        !((mul.args[0].node == x && mul.args[1].node == a) ||
          (mul.args[0].node == a && mul.args[1].node == x)))
      continue;
    const int y = only_consumer(c, m);
    if (y < 0 || !binary_with_scalar(g, y, Op::Mul, m, 0.5f)) continue;
    *out = PostOpNode{y, {}, {d, e, a, m}, PostOpNode::Kind::kGelu};
    return true;
  }
  return false;
}

}  // namespace

Fusion find_fusions(const Graph& g, bool enabled) {
  Fusion f{{}, std::vector<int>(g.size(), -1)};
  const Consumers c = consumers(g);
  const std::vector<int> pairs = quantize_pairs(g);
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (!is_post_op_anchor(n.op) || f.group_of[i] >= 0) continue;
    FusionGroup group{i, {}};
    int cur = i;
    // No NaN can reach a pair after an int8 kernel.
    bool nan_free = enabled && runs_int8(g, n) && int8_kernel_exact(g, n);
    while (enabled) {
      PostOpNode p;
      if (gelu_pattern(g, c, cur, &p)) {
        bool free = f.group_of[p.node] < 0;
        for (int k : p.inner) free = free && f.group_of[k] < 0;
        if (!free) break;
        nan_free = false;  // gelu(-inf) is -inf times 0
      } else {
        if (c.is_output[cur] || c.of[cur].size() != 1) break;
        const int next = c.of[cur][0];
        if (f.group_of[next] >= 0) break;
        if (nan_free && pairs[next] >= 0 && g.node(next).op == Op::QuantizeLinear &&
            f.group_of[pairs[next]] < 0 && post_op_pair(g, g.node(next))) {
          p = PostOpNode{pairs[next], {}, {next}, PostOpNode::Kind::kQuantizePair};
        } else if (joins(g, n.op, cur, next, &p)) {
          const Node& m = g.node(next);
          nan_free = nan_free && keeps_nan_free(g, m, m.args[0].node == cur ? 0 : 1);
        } else {
          break;
        }
      }
      group.post.push_back(p);
      cur = p.node;
    }
    const int id = static_cast<int>(f.groups.size());
    f.group_of[i] = id;
    for (const PostOpNode& p : group.post) {
      f.group_of[p.node] = id;
      for (int k : p.inner) f.group_of[k] = id;
    }
    f.groups.push_back(std::move(group));
  }
  return f;
}

}  // namespace tso::cpu
