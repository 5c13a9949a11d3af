#include "tests/graph_iso.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/labelled_graph.h"

namespace tso::testing {
namespace {

struct NodeLabel {
  Op op;
  Attrs attrs;
  std::vector<TensorType> outs;
  std::string name;  // graph inputs and weights only
  friend bool operator==(const NodeLabel&, const NodeLabel&) = default;
};

// Node labels and merged-node classes, shared by the two graphs compared.
struct Tables {
  Labels labels;
  std::vector<NodeLabel> nodes;
  std::map<std::pair<int, std::vector<std::pair<int, int>>>, int> classes;

  int node(const Node& n) {
    bool named = n.op == Op::Input || n.op == Op::Weight;
    return Labels::value(nodes, NodeLabel{n.op, n.attrs, n.outs, named ? n.name : ""});
  }
  // A merged node: a node label and the classes (and outputs) of its arguments.
  int merged(int label, const std::vector<std::pair<int, int>>& args) {
    return classes.try_emplace({label, args}, static_cast<int>(classes.size())).first->second;
  }
};

// A vertex per node (or merged node) labelled `vertex_label`, argument edges
// labelled with their position and output, and a vertex per graph output.
// `vertex_of[i]` is node i's vertex; nodes sharing one add their arguments
// once, from the first of them.
LabelledGraph encode(const Graph& g, const std::vector<int>& vertex_of,
                     const std::vector<int>& vertex_label, Labels& labels) {
  LabelledGraph out;
  for (int label : vertex_label) add_vertex(out, label);
  std::vector<bool> done(vertex_label.size());
  for (int i = 0; i < g.size(); ++i) {
    if (done[vertex_of[i]]) continue;
    done[vertex_of[i]] = true;
    const Node& n = g.node(i);
    for (size_t k = 0; k < n.args.size(); ++k)
      add_labelled_edge(
          out, vertex_of[n.args[k].node], vertex_of[i],
          labels.text("arg " + std::to_string(k) + "." + std::to_string(n.args[k].output)));
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const GraphOutput& o = g.outputs()[k];
    Vertex v = add_vertex(out, labels.text("output " + std::to_string(k) + " " + o.name));
    add_labelled_edge(out, vertex_of[o.ref.node], v,
                      labels.text("result " + std::to_string(o.ref.output)));
  }
  return out;
}

LabelledGraph encode_nodes(const Graph& g, Tables& t) {
  std::vector<int> vertex_of(g.size()), vertex_label(g.size());
  for (int i = 0; i < g.size(); ++i) {
    vertex_of[i] = i;
    vertex_label[i] = t.labels.text("node " + std::to_string(t.node(g.node(i))));
  }
  return encode(g, vertex_of, vertex_label, t.labels);
}

LabelledGraph encode_merged(const Graph& g, Tables& t) {
  std::vector<int> cls(g.size()), vertex_of(g.size());
  std::map<int, int> vertex_of_class, count;
  for (int i = 0; i < g.size(); ++i) {
    std::vector<std::pair<int, int>> args;
    for (const TensorRef& a : g.node(i).args) args.emplace_back(cls[a.node], a.output);
    cls[i] = t.merged(t.node(g.node(i)), args);
    vertex_of[i] =
        vertex_of_class.try_emplace(cls[i], static_cast<int>(vertex_of_class.size())).first->second;
    ++count[cls[i]];
  }
  // Labelled with the node label and the count, not the class: VF2 still has
  // the structure to match.
  std::vector<int> vertex_label(vertex_of_class.size());
  for (int i = 0; i < g.size(); ++i)
    vertex_label[vertex_of[i]] = t.labels.text("node " + std::to_string(t.node(g.node(i))) + " x" +
                                               std::to_string(count[cls[i]]));
  return encode(g, vertex_of, vertex_label, t.labels);
}

}  // namespace

bool isomorphic(const Graph& a, const Graph& b) {
  Tables t;
  return vf2_isomorphic(encode_nodes(a, t), encode_nodes(b, t));
}

bool isomorphic_up_to_sharing(const Graph& a, const Graph& b) {
  Tables t;
  return vf2_isomorphic(encode_merged(a, t), encode_merged(b, t));
}

}  // namespace tso::testing
