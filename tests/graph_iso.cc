#include "tests/graph_iso.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/vf2_sub_graph_iso.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tso::testing {
namespace {

using LabelledGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                            boost::property<boost::vertex_name_t, int>>;

struct NodeLabel {
  Op op;
  Attrs attrs;
  std::vector<TensorType> outs;
  std::string name;  // graph inputs and weights only
  friend bool operator==(const NodeLabel&, const NodeLabel&) = default;
};

// Interns labels into integers shared by the two graphs compared, by exact
// comparison (no hashing: the oracle must not share the hashes' collisions).
class Labels {
 public:
  int node(const Node& n) {
    NodeLabel l{n.op, n.attrs, n.outs, n.op == Op::Input || n.op == Op::Weight ? n.name : ""};
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i] == l) return static_cast<int>(i);
    nodes_.push_back(std::move(l));
    return static_cast<int>(nodes_.size()) - 1;
  }
  // Labels of the vertices that stand for argument positions, outputs and
  // merged nodes, past every node label.
  int tag(const std::string& text) {
    return kTags + tags_.try_emplace(text, static_cast<int>(tags_.size())).first->second;
  }
  // Merged-node classes: a node label and the classes of its arguments.
  int merged(int label, const std::vector<std::pair<int, int>>& args) {
    return classes_.try_emplace({label, args}, static_cast<int>(classes_.size())).first->second;
  }

 private:
  static constexpr int kTags = 1 << 24;
  std::vector<NodeLabel> nodes_;
  std::map<std::string, int> tags_;
  std::map<std::pair<int, std::vector<std::pair<int, int>>>, int> classes_;
};

// A vertex per node (or merged node), one per argument edge (so two
// arguments reading one tensor are two paths, never parallel edges) and one
// per graph output. `vertex_of[i]` is node i's vertex; nodes sharing a vertex
// are added once, from the first of them.
LabelledGraph encode(const Graph& g, const std::vector<int>& vertex_of,
                     const std::vector<int>& vertex_label, Labels& labels) {
  LabelledGraph out(vertex_label.size());
  for (size_t v = 0; v < vertex_label.size(); ++v)
    boost::put(boost::vertex_name, out, v, vertex_label[v]);
  std::vector<bool> done(vertex_label.size());
  for (int i = 0; i < g.size(); ++i) {
    if (done[vertex_of[i]]) continue;
    done[vertex_of[i]] = true;
    const Node& n = g.node(i);
    for (size_t k = 0; k < n.args.size(); ++k) {
      auto arg = boost::add_vertex(
          labels.tag("arg " + std::to_string(k) + "." + std::to_string(n.args[k].output)), out);
      boost::add_edge(vertex_of[n.args[k].node], arg, out);
      boost::add_edge(arg, vertex_of[i], out);
    }
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const GraphOutput& o = g.outputs()[k];
    auto v = boost::add_vertex(labels.tag("output " + std::to_string(k) + "." +
                                          std::to_string(o.ref.output) + " " + o.name),
                               out);
    boost::add_edge(vertex_of[o.ref.node], v, out);
  }
  return out;
}

LabelledGraph encode_nodes(const Graph& g, Labels& labels) {
  std::vector<int> vertex_of(g.size()), vertex_label(g.size());
  for (int i = 0; i < g.size(); ++i) {
    vertex_of[i] = i;
    vertex_label[i] = labels.node(g.node(i));
  }
  return encode(g, vertex_of, vertex_label, labels);
}

LabelledGraph encode_merged(const Graph& g, Labels& labels) {
  std::vector<int> cls(g.size()), vertex_of(g.size());
  std::map<int, int> vertex_of_class, count;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    std::vector<std::pair<int, int>> args;
    for (const TensorRef& a : n.args) args.emplace_back(cls[a.node], a.output);
    cls[i] = labels.merged(labels.node(n), args);
    vertex_of[i] =
        vertex_of_class.try_emplace(cls[i], static_cast<int>(vertex_of_class.size())).first->second;
    ++count[cls[i]];
  }
  std::vector<int> vertex_label(vertex_of_class.size());
  for (int i = 0; i < g.size(); ++i)
    vertex_label[vertex_of[i]] = labels.tag("node " + std::to_string(labels.node(g.node(i))) +
                                            " x" + std::to_string(count[cls[i]]));
  return encode(g, vertex_of, vertex_label, labels);
}

bool vf2_isomorphic(const LabelledGraph& a, const LabelledGraph& b) {
  if (boost::num_vertices(a) != boost::num_vertices(b) ||
      boost::num_edges(a) != boost::num_edges(b))
    return false;
  auto first_match = [](auto&&, auto&&) { return false; };  // stop at the first mapping
  return boost::vf2_graph_iso(
      a, b, first_match, boost::vertex_order_by_mult(a),
      boost::vertices_equivalent(boost::make_property_map_equivalent(
          boost::get(boost::vertex_name, a), boost::get(boost::vertex_name, b))));
}

}  // namespace

bool isomorphic(const Graph& a, const Graph& b) {
  Labels labels;
  return vf2_isomorphic(encode_nodes(a, labels), encode_nodes(b, labels));
}

bool isomorphic_up_to_sharing(const Graph& a, const Graph& b) {
  Labels labels;
  return vf2_isomorphic(encode_merged(a, labels), encode_merged(b, labels));
}

}  // namespace tso::testing
