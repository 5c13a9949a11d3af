#include "core/graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/checker.h"
#include "core/shape_inference.h"

namespace tso {

std::vector<int> Graph::input_nodes() const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i)
    if (nodes_[i].op == Op::Input || nodes_[i].op == Op::Weight) out.push_back(i);
  return out;
}

int Graph::num_operators() const {
  int n = 0;
  for (const Node& node : nodes_) n += !is_source(node.op);
  return n;
}

void Graph::release_weight_data() {
  for (Node& node : nodes_) node.data.reset();
}

std::vector<uint64_t> node_hashes(const Graph& g) {
  std::vector<uint64_t> h(g.size());
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    uint64_t x = hash_mix(0x90de, static_cast<uint64_t>(n.op));
    if (n.op == Op::Input || n.op == Op::Weight) {
      for (unsigned char c : n.name) x = hash_mix(x, c);
    }
    x = hash_mix(x, hash_of(n.attrs));
    for (const TensorType& t : n.outs) x = hash_mix(x, hash_of(t));
    for (const TensorRef& a : n.args) x = hash_mix(hash_mix(x, h[a.node]), a.output);
    h[i] = x;
  }
  return h;
}

uint64_t structural_hash(const Graph& g) {
  std::vector<uint64_t> h = node_hashes(g);
  // The multiset of node hashes: independent of node order, and it tells a
  // graph with a duplicated subexpression from one that shares it.
  uint64_t nodes = 0;
  for (uint64_t x : h) nodes += x * 0xff51afd7ed558ccdull + 1;
  uint64_t out = hash_mix(0x6a09, nodes);
  for (const GraphOutput& o : g.outputs()) {
    for (unsigned char c : o.name) out = hash_mix(out, c);
    out = hash_mix(hash_mix(out, h[o.ref.node]), o.ref.output);
  }
  return out;
}

namespace {

// Structural comparison of node `i` of `a` with node `j` of `b`, memoized on
// the pair so shared subgraphs are compared once.
class GraphComparator {
 public:
  GraphComparator(const Graph& a, const Graph& b) : a_(a), b_(b) {}

  bool equal(int i, int j) {
    auto [it, inserted] = memo_.try_emplace({i, j}, false);
    if (!inserted) return it->second;
    const Node& x = a_.node(i);
    const Node& y = b_.node(j);
    bool same = x.op == y.op && x.attrs == y.attrs && x.outs == y.outs &&
                x.args.size() == y.args.size();
    if (same && (x.op == Op::Input || x.op == Op::Weight)) same = x.name == y.name;
    for (size_t k = 0; same && k < x.args.size(); ++k) {
      same = x.args[k].output == y.args[k].output && equal(x.args[k].node, y.args[k].node);
    }
    memo_[{i, j}] = same;
    return same;
  }

 private:
  const Graph& a_;
  const Graph& b_;
  std::map<std::pair<int, int>, bool> memo_;
};

std::map<std::string, int> inputs_by_name(const Graph& g) {
  std::map<std::string, int> m;
  for (int i : g.input_nodes()) m.emplace(g.node(i).name, i);
  return m;
}

}  // namespace

bool operator==(const Graph& a, const Graph& b) {
  if (a.size() != b.size() || a.outputs().size() != b.outputs().size()) return false;
  std::vector<uint64_t> ha = node_hashes(a), hb = node_hashes(b);
  std::sort(ha.begin(), ha.end());
  std::sort(hb.begin(), hb.end());
  if (ha != hb) return false;
  GraphComparator cmp(a, b);
  std::map<std::string, int> ia = inputs_by_name(a), ib = inputs_by_name(b);
  if (ia.size() != ib.size()) return false;
  for (const auto& [name, i] : ia) {
    auto it = ib.find(name);
    if (it == ib.end() || !cmp.equal(i, it->second)) return false;
  }
  for (size_t k = 0; k < a.outputs().size(); ++k) {
    const GraphOutput& x = a.outputs()[k];
    const GraphOutput& y = b.outputs()[k];
    if (x.name != y.name || x.ref.output != y.ref.output || !cmp.equal(x.ref.node, y.ref.node))
      return false;
  }
  return true;
}

std::string describe_node(const Graph& g, int index) {
  const Node& n = g.node(index);
  std::string who = n.name.empty() ? "%" + std::to_string(index) : "'" + n.name + "'";
  return "node " + who + " (" + std::string(op_name(n.op)) + ")";
}

int64_t node_flops(const Graph& g, int index) {
  const Node& n = g.node(index);
  std::vector<TensorType> in;
  for (const TensorRef& r : n.args) in.push_back(g.type(r));
  return flops(n.op, n.attrs, in, n.outs);
}

TensorRef GraphBuilder::input(std::string name, TensorType type) {
  Node n;
  n.op = Op::Input;
  n.name = std::move(name);
  n.outs = {type};
  return add_node(std::move(n));
}

TensorRef GraphBuilder::weight(std::string name, TensorType type,
                               std::shared_ptr<const WeightData> data) {
  Node n;
  n.op = Op::Weight;
  n.name = std::move(name);
  n.outs = {type};
  n.data = std::move(data);
  return add_node(std::move(n));
}

namespace {

std::string who(const std::string& name, Op op) {
  std::string id = name.empty() ? "" : "'" + name + "' ";
  return "node " + id + "(" + std::string(op_name(op)) + ")";
}

Status check_arity(Op op, size_t n, const std::string& name) {
  const OpInfo& info = op_info(op);
  bool ok = static_cast<int>(n) >= info.min_inputs &&
            (info.max_inputs == kVariadic || static_cast<int>(n) <= info.max_inputs);
  if (ok) return Status::Ok();
  std::string want = info.max_inputs == kVariadic
                         ? "at least " + std::to_string(info.min_inputs)
                         : info.min_inputs == info.max_inputs
                               ? std::to_string(info.min_inputs)
                               : std::to_string(info.min_inputs) + " to " +
                                     std::to_string(info.max_inputs);
  return Error{who(name, op) + ": takes " + want + " inputs, got " + std::to_string(n)};
}

}  // namespace

Expected<std::vector<TensorRef>> GraphBuilder::add(Op op, std::vector<TensorRef> args, Attrs attrs,
                                                   std::string name) {
  TSO_CHECK(op != Op::Input && op != Op::Weight && op != Op::Opaque,
            "use input(), weight() or add_opaque()");
  TSO_RETURN_IF_ERROR(check_arity(op, args.size(), name));
  if (Status s = complete_attrs(op, &attrs); !s.ok())
    return Error{who(name, op) + ": " + s.error().message};
  std::vector<TensorType> in;
  in.reserve(args.size());
  for (const TensorRef& a : args) {
    TSO_CHECK(a.node >= 0 && a.node < size() && a.output >= 0 &&
                  a.output < static_cast<int>(g_.nodes_[a.node].outs.size()),
              "argument refers to a tensor outside this builder");
    in.push_back(type(a));
  }
  Expected<std::vector<TensorType>> outs = infer_types(op, &attrs, in);
  if (!outs.ok()) return Error{who(name, op) + ": " + outs.error().message};
  Node n{op, std::move(args), std::move(attrs), std::move(*outs), std::move(name), nullptr};
  TensorRef first = add_node(std::move(n));
  std::vector<TensorRef> refs;
  for (int k = 0; k < static_cast<int>(g_.nodes_.back().outs.size()); ++k)
    refs.push_back({first.node, k});
  return refs;
}

Expected<TensorRef> GraphBuilder::add1(Op op, std::vector<TensorRef> args, Attrs attrs,
                                       std::string name) {
  Expected<std::vector<TensorRef>> r = add(op, std::move(args), std::move(attrs), std::move(name));
  if (!r.ok()) return r.error();
  TSO_CHECK(r->size() == 1, "add1 on a multi-output operator");
  return r->front();
}

Expected<std::vector<TensorRef>> GraphBuilder::add_opaque(std::vector<TensorRef> args, Attrs attrs,
                                                          std::vector<TensorType> outs,
                                                          std::string name) {
  if (Status s = complete_attrs(Op::Opaque, &attrs); !s.ok())
    return Error{who(name, Op::Opaque) + ": " + s.error().message};
  if (outs.empty()) return Error{who(name, Op::Opaque) + ": has no outputs"};
  for (size_t k = 0; k < outs.size(); ++k)
    TSO_RETURN_IF_ERROR(
        check_size(outs[k], who(name, Op::Opaque) + " output " + std::to_string(k)));
  Node n{Op::Opaque, std::move(args), std::move(attrs), std::move(outs), std::move(name), nullptr};
  TensorRef first = add_node(std::move(n));
  std::vector<TensorRef> refs;
  for (int k = 0; k < static_cast<int>(g_.nodes_.back().outs.size()); ++k)
    refs.push_back({first.node, k});
  return refs;
}

TensorRef GraphBuilder::add_node(Node node) {
  g_.nodes_.push_back(std::move(node));
  return {size() - 1, 0};
}

void GraphBuilder::output(std::string name, TensorRef ref) {
  g_.outputs_.push_back({std::move(name), ref});
}

Expected<Graph> GraphBuilder::finish() {
  Graph g = std::move(g_);
  g_ = Graph{};
  g_.name_ = g.name_;
  const int n = g.size();
  std::vector<char> live(n, 0);
  for (const GraphOutput& o : g.outputs_) {
    if (o.ref.node < 0 || o.ref.node >= n)
      return Error{"output '" + o.name + "' refers to a tensor that does not exist"};
    live[o.ref.node] = 1;
  }
  for (int i = n - 1; i >= 0; --i) {
    const Node& node = g.nodes_[i];
    if (node.op == Op::Input || node.op == Op::Weight) live[i] = 1;
    if (!live[i]) continue;
    for (const TensorRef& a : node.args)
      if (a.node >= 0 && a.node < i) live[a.node] = 1;
  }
  std::vector<int> remap(n, -1);
  std::vector<Node> kept;
  kept.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    Node node = std::move(g.nodes_[i]);
    for (TensorRef& a : node.args)
      if (a.node >= 0 && a.node < i) a.node = remap[a.node];
    kept.push_back(std::move(node));
  }
  g.nodes_ = std::move(kept);
  for (GraphOutput& o : g.outputs_) o.ref.node = remap[o.ref.node];
  TSO_RETURN_IF_ERROR(check(g));
  return g;
}

std::vector<char> weight_only_nodes(const Graph& g) {
  std::vector<char> constant(g.size(), 0);
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    bool c = n.op != Op::Input && n.op != Op::Opaque;
    for (const TensorRef& a : n.args) c = c && constant[a.node];
    constant[i] = c;
  }
  return constant;
}

}  // namespace tso
