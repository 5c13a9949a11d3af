#include "optimizer/fold.h"

#include <cstring>
#include <set>
#include <vector>

#include "optimizer/graph_index.h"
#include "runtime/reference/executor.h"

namespace tso::opt {

namespace {

std::shared_ptr<const WeightData> to_weight(const ref::Tensor<float>& t, const TensorType& type) {
  auto w = std::make_shared<WeightData>();
  w->type = type;
  w->bytes.resize(t.data.size() * sizeof(float));
  std::memcpy(w->bytes.data(), t.data.data(), w->bytes.size());
  return w;
}

}  // namespace

Expected<Graph> fold_weights(const Graph& g, FoldStats* stats) {
  GraphIndex index(g);
  const int n = g.size();
  // Fold targets: weight-only f32 operators read by something that is not.
  std::vector<char> target(n, 0);
  auto is_op = [&](int i) { return g.node(i).op != Op::Input && g.node(i).op != Op::Weight; };
  for (int i = 0; i < n; ++i) {
    if (index.constant[i] || !is_op(i)) continue;
    for (const TensorRef& a : g.node(i).args)
      if (index.constant[a.node] && is_op(a.node)) target[a.node] = 1;
  }
  for (const GraphOutput& o : g.outputs())
    if (index.constant[o.ref.node] && is_op(o.ref.node)) target[o.ref.node] = 1;
  for (int i = 0; i < n; ++i) {
    const Node& node = g.node(i);
    if (target[i] && (node.outs.size() != 1 || node.outs[0].dtype != DType::kF32)) target[i] = 0;
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
