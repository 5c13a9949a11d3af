#include "tests/labelled_graph.h"

#include <algorithm>
#include <boost/graph/vf2_sub_graph_iso.hpp>

namespace tso::testing {

Vertex add_vertex(LabelledGraph& g, int label) {
  Vertex v = boost::add_vertex(g);
  boost::put(boost::vertex_name, g, v, label);
  return v;
}

void add_labelled_edge(LabelledGraph& g, Vertex from, Vertex to, int label) {
  Vertex mid = add_vertex(g, label);
  boost::add_edge(from, mid, g);
  boost::add_edge(mid, to, g);
}

std::vector<std::vector<int>> invariant(const LabelledGraph& g) {
  auto label = [&](Vertex v) { return boost::get(boost::vertex_name, g, v); };
  std::vector<std::vector<int>> out;
  for (Vertex v : boost::make_iterator_range(boost::vertices(g))) {
    std::vector<int> in, next;
    for (auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      in.push_back(label(boost::source(e, g)));
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g)))
      next.push_back(label(boost::target(e, g)));
    std::sort(in.begin(), in.end());
    std::sort(next.begin(), next.end());
    std::vector<int> row = {label(v), static_cast<int>(in.size())};
    row.insert(row.end(), in.begin(), in.end());
    row.insert(row.end(), next.begin(), next.end());
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end());
  return out;
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

}  // namespace tso::testing
