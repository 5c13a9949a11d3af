#include "frontend/attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

constexpr double kInf = std::numeric_limits<double>::infinity();
// The most query-key pairs a constant position bias holds, or a constant
// mask is scanned over for rows with no key (64 MiB of f32).
constexpr int64_t kMaxPositions = int64_t{1} << 24;

// The node's geometry, checked: batch, heads, sequence lengths (the past's
// and the total the keys span) and head sizes.
struct Geometry {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past = 0, total = 0;
  int64_t head = 0, v_head = 0;
  bool causal = false;
  int64_t left = -1, right = -1;  // sliding window (Attention-25), -1 unbounded
  int mode = 0;                   // qk_matmul_output_mode
  std::array<int64_t, 4> mask{};  // attn_mask's dims, right-aligned to rank 4
  bool has_mask = false;
};

// Whether query i (of the node's queries) may attend key j by position:
// causality and the sliding windows, the query at absolute position i + past.
bool position_allows(const Geometry& g, int64_t i, int64_t j) {
  const int64_t at = i + g.past;
  return (!g.causal || j <= at) && (g.left < 0 || j >= at - g.left) &&
         (g.right < 0 || j <= at + g.right);
}

bool position_masks(const Geometry& g) { return g.causal || g.left >= 0 || g.right >= 0; }

Expected<Geometry> plan(NodeContext& ctx, std::string* unsupported) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() < 3) return Error{"needs Q, K and V"};
  if (ctx.has_input(6)) {
    *unsupported = "nonpad_kv_seqlen";
    return Geometry{};
  }
  const TensorType q = ctx.type(0), k = ctx.type(1), v = ctx.type(2);
  if (q.dtype != k.dtype || q.dtype != v.dtype || !HostTensor::is_float(q.dtype))
    return Error{"needs Q, K and V of one float type, got " + to_string(q) + ", " + to_string(k) +
                 " and " + to_string(v)};
  if (const auto* p = find_attr(n, "softmax_precision"); p && p->i() != onnx_from_dtype(q.dtype)) {
    *unsupported = "a softmax precision other than the input's";
    return Geometry{};
  }
  Geometry g;
  g.three_d = q.shape.rank() == 3;
  if ((q.shape.rank() != 3 && q.shape.rank() != 4) || k.shape.rank() != q.shape.rank() ||
      v.shape.rank() != q.shape.rank())
    return Error{"needs Q, K and V all of rank 3 or all of rank 4, got " + to_string(q) + ", " +
                 to_string(k) + " and " + to_string(v)};
  if (g.three_d) {
    g.q_heads = attr_int(n, "q_num_heads", 0);
    g.kv_heads = attr_int(n, "kv_num_heads", 0);
    if (g.q_heads < 1 || g.kv_heads < 1 || q.shape[2] % g.q_heads != 0 ||
        k.shape[2] % g.kv_heads != 0 || v.shape[2] % g.kv_heads != 0)
      return Error{"has 3-D Q, K and V " + to_string(q) + ", " + to_string(k) + " and " +
                   to_string(v) +
                   ", which need q_num_heads and kv_num_heads dividing their last extents"};
    g.batch = q.shape[0], g.q_len = q.shape[1], g.kv_len = k.shape[1];
    g.head = q.shape[2] / g.q_heads, g.v_head = v.shape[2] / g.kv_heads;
    if (k.shape[2] / g.kv_heads != g.head || k.shape[0] != g.batch || v.shape[0] != g.batch ||
        v.shape[1] != g.kv_len)
      return Error{"has Q, K and V " + to_string(q) + ", " + to_string(k) + " and " + to_string(v) +
                   " that do not agree on batch, key length or head size"};
  } else {
    g.batch = q.shape[0], g.q_heads = q.shape[1], g.q_len = q.shape[2], g.head = q.shape[3];
    g.kv_heads = k.shape[1], g.kv_len = k.shape[2], g.v_head = v.shape[3];
    if (k.shape[0] != g.batch || k.shape[3] != g.head || v.shape[0] != g.batch ||
        v.shape[1] != g.kv_heads || v.shape[2] != g.kv_len)
      return Error{"has Q, K and V " + to_string(q) + ", " + to_string(k) + " and " + to_string(v) +
                   " that do not agree on batch, heads, key length or head size"};
  }
  if (g.q_heads % g.kv_heads != 0)
    return Error{"has " + std::to_string(g.q_heads) + " query heads for " +
                 std::to_string(g.kv_heads) + " key heads, not a multiple"};
  if (ctx.has_input(4) != ctx.has_input(5)) return Error{"has one of past_key and past_value"};
  if (ctx.has_input(4)) {
    const TensorType pk = ctx.type(4), pv = ctx.type(5);
    if (pk.shape.rank() != 4 || pv.shape.rank() != 4 || pk.shape[0] != g.batch ||
        pk.shape[1] != g.kv_heads || pk.shape[3] != g.head || pv.shape[0] != g.batch ||
        pv.shape[1] != g.kv_heads || pv.shape[2] != pk.shape[2] || pv.shape[3] != g.v_head ||
        pk.dtype != q.dtype || pv.dtype != q.dtype)
      return Error{"has past_key " + to_string(pk) + " and past_value " + to_string(pv) +
                   " that do not fit its keys and values"};
    g.past = pk.shape[2];
  }
  g.total = g.past + g.kv_len;
  g.causal = attr_int(n, "is_causal", 0) != 0;
  g.left = attr_int(n, "left_window_size", -1);
  g.right = attr_int(n, "right_window_size", -1);
  if (g.left < -1 || g.right < -1)
    return Error{"has a window size below -1 (left " + std::to_string(g.left) + ", right " +
                 std::to_string(g.right) + ")"};
  if ((position_masks(g) || ctx.constant(3)) &&
      g.q_len > kMaxPositions / std::max<int64_t>(g.total, 1)) {
    *unsupported = "a position or constant mask over more than 2^24 query-key pairs";
    return Geometry{};
  }
  g.mode = static_cast<int>(attr_int(n, "qk_matmul_output_mode", 0));
  if (g.mode < 0 || g.mode > 3)
    return Error{"has qk_matmul_output_mode " + std::to_string(g.mode) + " (0 to 3)"};
  g.has_mask = ctx.has_input(3);
  if (g.has_mask) {
    const TensorType m = ctx.type(3);
    if (m.dtype != DType::kBool && m.dtype != q.dtype)
      return Error{"has attn_mask " + to_string(m) + ", neither bool nor the type of Q"};
    const std::array<int64_t, 4> want = {g.batch, g.q_heads, g.q_len, g.total};
    if (m.shape.rank() > 4) return Error{"has attn_mask " + to_string(m) + " of rank above 4"};
    g.mask.fill(1);
    for (int d = 0; d < m.shape.rank(); ++d) {
      const int at = 4 - m.shape.rank() + d;
      g.mask[at] = m.shape[d];
      if (m.shape[d] != 1 && m.shape[d] != want[at])
        return Error{"has attn_mask " + to_string(m) + ", which does not broadcast to [" +
                     std::to_string(g.batch) + "," + std::to_string(g.q_heads) + "," +
                     std::to_string(g.q_len) + "," + std::to_string(g.total) + "]"};
    }
  }
  return g;
}

// Whether every query row keeps a key: the mask absent or constant, and each
// of its rows allowing some key that the positions allow too.
bool every_row_keeps_a_key(const Geometry& g, const HostTensor* mask, bool bool_mask) {
  if (g.has_mask && !mask) return false;
  for (int64_t b = 0; b < g.mask[0]; ++b)
    for (int64_t h = 0; h < g.mask[1]; ++h)
      for (int64_t i = 0; i < g.q_len; ++i) {
        bool kept = false;
        for (int64_t j = 0; j < g.total && !kept; ++j) {
          if (!position_allows(g, i, j)) continue;
          if (!mask) {
            kept = true;
            continue;
          }
          const int64_t row = g.mask[2] == 1 ? 0 : i, col = g.mask[3] == 1 ? 0 : j;
          const double m = mask->get_f(((b * g.mask[1] + h) * g.mask[2] + row) * g.mask[3] + col);
          kept = bool_mask ? m != 0 : m > -kInf;
        }
        if (!kept) return false;
      }
  return true;
}

}  // namespace

Expected<Mapped> map_attention(NodeContext& ctx) {
  std::string unsupported;
  Expected<Geometry> planned = plan(ctx, &unsupported);
  if (!planned) return planned.error();
  if (!unsupported.empty()) return opaque(unsupported);
  const Geometry& g = *planned;
  const onnx::NodeProto& n = ctx.node();

  NodeChain c(ctx);
  auto heads_first = [&](TensorRef t, int64_t len, int64_t heads, int64_t size) {
    return c.op(Op::Transpose, c.op(Op::Reshape, t, AttrKey::shape, {g.batch, len, heads, size}),
                AttrKey::perm, {0, 2, 1, 3});
  };
  TensorRef q = c.input(0), k = c.input(1), v = c.input(2);
  if (g.three_d) {
    q = heads_first(q, g.q_len, g.q_heads, g.head);
    k = heads_first(k, g.kv_len, g.kv_heads, g.head);
    v = heads_first(v, g.kv_len, g.kv_heads, g.v_head);
  }
  if (g.past > 0) {
    Attrs seq;
    seq.set(AttrKey::axis, int64_t{2});
    k = c.op(Op::Concat, {c.input(4), k}, seq);
    v = c.op(Op::Concat, {c.input(5), v}, seq);
  }
  const TensorRef present_key = k, present_value = v;
  if (g.q_heads != g.kv_heads) {  // each key head read by its group of query heads
    const int64_t group = g.q_heads / g.kv_heads;
    auto repeat = [&](TensorRef t, int64_t size) {
      t = c.op(Op::Reshape, t, AttrKey::shape, {g.batch, g.kv_heads, 1, g.total, size});
      t = c.op(Op::Expand, t, AttrKey::shape, {g.batch, g.kv_heads, group, g.total, size});
      return c.op(Op::Reshape, t, AttrKey::shape, {g.batch, g.q_heads, g.total, size});
    };
    k = repeat(k, g.head);
    v = repeat(v, g.v_head);
  }

  const float scale =
      find_attr(n, "scale") ? attr_float(n, "scale", 1.0f) : 1.0 / std::sqrt(double(g.head));
  TensorRef scores = c.op(Op::Matmul, {q, c.op(Op::Transpose, k, AttrKey::perm, {0, 1, 3, 2})});
  scores = c.op(Op::Mul, {scores, c.scalar("scale", scale)});
  std::array<TensorRef, 4> qk;
  qk[0] = scores;
  const float softcap = attr_float(n, "softcap", 0.0f);
  if (softcap > 0) {
    scores = c.op(Op::Tanh, {c.op(Op::Div, {scores, c.scalar("softcap", softcap)})});
    scores = c.op(Op::Mul, {scores, c.scalar("softcap", softcap)});
  }
  qk[1] = scores;

  std::optional<TensorRef> bias;
  const bool bool_mask = g.has_mask && ctx.type(3).dtype == DType::kBool;
  if (g.has_mask)
    bias = bool_mask ? c.op(Op::Where, {c.input(3), c.scalar("kept", 0), c.scalar("masked", -kInf)})
                     : c.input(3);
  if (position_masks(g)) {
    HostTensor positions = HostTensor::zeros(ctx.type(0).dtype, Shape{g.q_len, g.total});
    for (int64_t i = 0; i < g.q_len; ++i)
      for (int64_t j = 0; j < g.total; ++j)
        if (!position_allows(g, i, j)) positions.f[i * g.total + j] = -kInf;
    const TensorRef p = ctx.new_weight("positions", positions);
    bias = bias ? c.op(Op::Add, {*bias, p}) : p;
  }
  if (bias) scores = c.op(Op::Add, {scores, *bias});
  qk[2] = scores;

  Attrs last;
  last.set(AttrKey::axis, int64_t{3});
  TensorRef probs = c.op(Op::Softmax, {scores}, last);
  if (bias && !every_row_keeps_a_key(g, g.has_mask ? ctx.constant(3) : nullptr, bool_mask)) {
    // A row whose bias has no finite entry is all -inf: softmax gives NaN
    // there, the operator a zero row.
    const int64_t rank =
        std::max<int64_t>(g.has_mask ? ctx.type(3).shape.rank() : 0, position_masks(g) ? 2 : 0);
    Attrs keys;
    keys.set(AttrKey::axes, Ints{rank - 1}).set(AttrKey::keepdims, int64_t{1});
    const TensorRef best = c.op(Op::ReduceMax, {*bias}, keys);
    const TensorRef kept = c.op(Op::Greater, {best, c.scalar("masked", -kInf)});
    probs = c.op(Op::Where, {kept, probs, c.scalar("zero", 0)});
  }
  qk[3] = probs;

  TensorRef y = c.op(Op::Matmul, {probs, v});
  if (g.three_d)
    y = c.op(Op::Reshape, c.op(Op::Transpose, y, AttrKey::perm, {0, 2, 1, 3}), AttrKey::shape,
             {g.batch, g.q_len, g.q_heads * g.v_head});
  return c.result({y, present_key, present_value, qk[g.mode]});
}

}  // namespace tso::onnx_frontend
