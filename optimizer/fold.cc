#include "optimizer/fold.h"

#include <cstring>
#include <set>
#include <vector>

#include "core/half.h"
#include "optimizer/graph_index.h"
#include "runtime/reference/executor.h"

namespace tso::opt {

namespace {

// f32 values as they are; f16 ones (data movement of f16 weights, so every
// value is a half) back to halves, exactly.
std::shared_ptr<const WeightData> to_weight(const ref::Tensor<float>& t, const TensorType& type) {
  auto w = std::make_shared<WeightData>();
  w->type = type;
  if (type.dtype == DType::kF16) {
    std::vector<uint16_t> halves(t.data.size());
    for (size_t k = 0; k < halves.size(); ++k) halves[k] = float_to_half(t.data[k]);
    w->bytes.resize(halves.size() * sizeof(uint16_t));
    std::memcpy(w->bytes.data(), halves.data(), w->bytes.size());
    return w;
  }
  w->bytes.resize(t.data.size() * sizeof(float));
  std::memcpy(w->bytes.data(), t.data.data(), w->bytes.size());
  return w;
}

}  // namespace

Expected<Graph> fold_weights(const Graph& g, FoldStats* stats) {
  GraphIndex index(g);
  const int n = g.size();
  // Fold targets: weight-only f32 operators read by something that is not,
  // and f16 ones that only move data (the concatenated and enlarged kernels
  // of merged f16 convolutions): folded in f32, their values are halves. An
  // f16 operator that computes stays, since the runtimes compute it in f32
  // and its value rounded to f16 would be another. A dequantize_linear stays
  // too: it is how a quantized model stores a weight in 8 bits (a quarter of
  // the bytes, and the int8 kernels ONNX Runtime picks for a DQ before a
  // Conv); what the search builds on it (a concatenation of two) folds.
  std::vector<char> target(n, 0);
  auto is_op = [&](int i) { return g.node(i).op != Op::Input && g.node(i).op != Op::Weight; };
  for (int i = 0; i < n; ++i) {
    if (index.constant[i] || !is_op(i)) continue;
    for (const TensorRef& a : g.node(i).args)
      if (index.constant[a.node] && is_op(a.node)) target[a.node] = 1;
  }
  for (const GraphOutput& o : g.outputs())
    if (index.constant[o.ref.node] && is_op(o.ref.node)) target[o.ref.node] = 1;
  std::vector<char> moves_data(n, 0);  // weights, and data movement of such
  for (int i = 0; i < n; ++i) {
    const Node& node = g.node(i);
    moves_data[i] = node.op == Op::Weight || op_info(node.op).kind == OpKind::Shape;
    if (node.op == Op::Pad) {  // and writes a value a half holds
      const float v = static_cast<float>(node.attrs.f(AttrKey::value));
      moves_data[i] = half_to_float(float_to_half(v)) == v;
    }
    for (const TensorRef& a : node.args) moves_data[i] = moves_data[i] && moves_data[a.node];
  }
  for (int i = 0; i < n; ++i) {
    const Node& node = g.node(i);
    const bool foldable = node.outs.size() == 1 && node.op != Op::DequantizeLinear &&
                          (node.outs[0].dtype == DType::kF32 ||
                           (node.outs[0].dtype == DType::kF16 && moves_data[i]));
    if (target[i] && !foldable) target[i] = 0;
  }
  // Evaluate what the targets need, in node order.
  std::vector<char> needed(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    if (!target[i] && !needed[i]) continue;
    needed[i] = 1;
    for (const TensorRef& a : g.node(i).args) needed[a.node] = 1;
  }
  std::vector<std::vector<ref::Tensor<float>>> values(n);
  for (int i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    const Node& node = g.node(i);
    if (node.op == Op::Weight && !node.data)
      return Error{describe_node(g, i) + ": has no data, so the operators on it cannot be folded"};
    std::vector<const ref::Tensor<float>*> args;
    for (const TensorRef& a : node.args) args.push_back(&values[a.node][a.output]);
    auto r = ref::eval_node<float>(node, args);
    if (!r) return Error{"folding " + describe_node(g, i) + ": " + r.error().message};
    values[i] = std::move(*r);
  }
  // Rebuild: folded targets become weights, their weight-only inputs go.
  std::set<std::string> names;
  for (int i : g.input_nodes()) names.insert(g.node(i).name);
  GraphBuilder b(g.name());
  std::vector<int> remap(n, -1);
  int folded = 0;
  for (int i = 0; i < n; ++i) {
    const Node& node = g.node(i);
    if (target[i]) {
      std::string base = node.name.empty() ? "tso.folded" : node.name;
      std::string name = base;
      for (int k = 1; !names.insert(name).second; ++k) name = base + "." + std::to_string(k);
      remap[i] = b.weight(name, node.outs[0], to_weight(values[i][0], node.outs[0])).node;
      ++folded;
      continue;
    }
    Node copy = node;
    for (TensorRef& a : copy.args) a.node = remap[a.node];
    bool dangling = false;
    for (const TensorRef& a : copy.args) dangling = dangling || a.node < 0;
    if (!dangling) remap[i] = b.add_node(std::move(copy)).node;
  }
  for (const GraphOutput& o : g.outputs()) b.output(o.name, {remap[o.ref.node], o.ref.output});
  Expected<Graph> first = b.finish();
  if (!first) return first.error();
  // Drop weights that nothing reads any more (they fed folded operators).
  std::vector<char> used(first->size(), 0);
  for (int i = 0; i < first->size(); ++i)
    for (const TensorRef& a : first->node(i).args) used[a.node] = 1;
  for (const GraphOutput& o : first->outputs()) used[o.ref.node] = 1;
  GraphBuilder c(g.name());
  std::vector<int> re(first->size(), -1);
  for (int i = 0; i < first->size(); ++i) {
    const Node& node = first->node(i);
    if (node.op == Op::Weight && !used[i]) continue;
    Node copy = node;
    for (TensorRef& a : copy.args) a.node = re[a.node];
    re[i] = c.add_node(std::move(copy)).node;
  }
  for (const GraphOutput& o : first->outputs()) c.output(o.name, {re[o.ref.node], o.ref.output});
  Expected<Graph> out = c.finish();
  if (!out) return out.error();
  if (stats) {
    stats->folded = folded;
    stats->removed_nodes = g.size() - out->size() + folded;
  }
  return out;
}

}  // namespace tso::opt
