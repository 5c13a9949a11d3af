// Vertex-labelled directed graphs and Boost.Graph's VF2 isomorphism on them:
// the common ground of the graph and rule identity oracles (graph_iso.h,
// rule_iso.h). Labels are interned texts or values compared exactly, never
// hashes, so the oracle shares no collision with what it checks.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <string>
#include <vector>

namespace tso::testing {

using LabelledGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                            boost::property<boost::vertex_name_t, int>>;
using Vertex = LabelledGraph::vertex_descriptor;

// Interns labels into integers; one table serves both graphs compared.
class Labels {
 public:
  int text(const std::string& label) {
    return texts_.try_emplace(label, static_cast<int>(texts_.size())).first->second;
  }
  // Values with ==, interned by exact comparison (a linear scan: a few dozen
  // values per comparison).
  template <class T>
  static int value(std::vector<T>& table, const T& v) {
    for (size_t i = 0; i < table.size(); ++i)
      if (table[i] == v) return static_cast<int>(i);
    table.push_back(v);
    return static_cast<int>(table.size()) - 1;
  }

 private:
  std::map<std::string, int> texts_;
};

Vertex add_vertex(LabelledGraph& g, int label);
// Connects `from` to `to` through a vertex labelled `label`: an edge label
// that also keeps two edges between the same vertices apart (VF2 wants no
// parallel edges).
void add_labelled_edge(LabelledGraph& g, Vertex from, Vertex to, int label);

// Each vertex's label with its in- and out-neighbours' labels, sorted: equal
// for isomorphic graphs, so a key to bucket many graphs by before comparing
// pairs with VF2.
std::vector<std::vector<int>> invariant(const LabelledGraph& g);

// Whether a bijection of the vertices preserves labels and edges (VF2).
bool vf2_isomorphic(const LabelledGraph& a, const LabelledGraph& b);

}  // namespace tso::testing
