// The f16-to-f32 rebuild of a graph, node by node through a GraphBuilder, so
// that shape inference gives every widened node its f32 type.
#include "runtime/cpu/widen_f16.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/half.h"

namespace tso::cpu {

TensorType widened(TensorType t) {
  if (t.dtype == DType::kF16) t.dtype = DType::kF32;
  return t;
}

Node widened(const Node& n) {
  Node out = n;
  for (TensorType& t : out.outs) t = widened(t);
  if (n.op == Op::Cast && !n.outs.empty() && n.outs[0].dtype == DType::kF16)
    out.attrs.set(AttrKey::to, std::string("f32"));
  return out;
}

namespace {

std::shared_ptr<const WeightData> widened_data(const WeightData& w) {
  auto out = std::make_shared<WeightData>();
  out->type = widened(w.type);
  const size_t n = w.bytes.size() / 2;
  out->bytes.resize(n * 4);
  for (size_t k = 0; k < n; ++k) {
    uint16_t h;
    std::memcpy(&h, w.bytes.data() + 2 * k, 2);
    const float f = half_to_float(h);
    std::memcpy(out->bytes.data() + 4 * k, &f, 4);
  }
  return out;
}

Expected<TensorRef> cast(GraphBuilder& b, TensorRef x, DType to, const std::string& name) {
  Attrs a;
  a.set(AttrKey::to, std::string(dtype_name(to)));
  return b.add1(Op::Cast, {x}, std::move(a), name);
}

bool has_f16(const Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(), [](const Node& n) {
    return std::any_of(n.outs.begin(), n.outs.end(),
                       [](const TensorType& t) { return t.dtype == DType::kF16; });
  });
}

}  // namespace

Expected<std::optional<Graph>> widen_f16(const Graph& g) {
  if (!has_f16(g)) return std::optional<Graph>();
  GraphBuilder b(g.name());
  std::vector<std::vector<TensorRef>> refs(g.size());
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    std::vector<TensorRef> args;
    for (const TensorRef& r : n.args) args.push_back(refs[r.node][r.output]);
    const bool f16_out = !n.outs.empty() && n.outs[0].dtype == DType::kF16;
    if (n.op == Op::Input) {
      TensorRef x = b.input(n.name, n.outs[0]);
      if (f16_out) {
        Expected<TensorRef> wide = cast(b, x, DType::kF32, n.name);
        if (!wide) return wide.error();
        x = *wide;
      }
      refs[i] = {x};
    } else if (n.op == Op::Weight) {
      refs[i] = {
          b.weight(n.name, widened(n.outs[0]), f16_out && n.data ? widened_data(*n.data) : n.data)};
    } else if (n.op == Op::Cast && f16_out && b.type(args[0]).dtype == DType::kF32) {
      refs[i] = {args[0]};
    } else if (n.op == Op::Opaque || is_source(n.op)) {
      Node copy = n;
      copy.args = args;
      for (TensorType& t : copy.outs) t = widened(t);
      const TensorRef first = b.add_node(std::move(copy));
      for (int k = 0; k < static_cast<int>(n.outs.size()); ++k) refs[i].push_back({first.node, k});
    } else {
      Attrs attrs = n.attrs;
      if (n.op == Op::Cast && f16_out) attrs.set(AttrKey::to, std::string("f32"));
      Expected<std::vector<TensorRef>> outs = b.add(n.op, args, std::move(attrs), n.name);
      if (!outs) return outs.error();
      refs[i] = std::move(*outs);
    }
  }
  for (const GraphOutput& o : g.outputs()) {
    TensorRef r = refs[o.ref.node][o.ref.output];
    if (g.type(o.ref).dtype == DType::kF16) {
      Expected<TensorRef> narrow = cast(b, r, DType::kF16, g.node(o.ref.node).name);
      if (!narrow) return narrow.error();
      r = *narrow;
    }
    b.output(o.name, r);
  }
  Expected<Graph> out = b.finish();
  if (!out) return out.error();
  return std::optional<Graph>(std::move(*out));
}

}  // namespace tso::cpu
