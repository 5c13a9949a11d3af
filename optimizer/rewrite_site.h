// Where a rewrite of the search's chosen path happened, for the report's
// drawings and per-kind gains: the nodes it removed from the graph before it
// and the nodes it added to the graph after it, each with its operator, its
// arguments and its cost under the search's cost model, plus the nodes
// outside the site that they read (its boundary).
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "optimizer/cost_model.h"
#include "optimizer/graph_index.h"

namespace tso::opt {

struct SiteNode {
  int id = 0;             // index in the graph it belongs to
  std::string op;         // op_name
  std::string name;       // Node::name
  std::string type;       // its first result's type, "f32[1,16,32,32]"
  std::vector<int> args;  // ids of the nodes it reads, in argument order
  double cost_us = 0;     // node_cost; 0 for a boundary node
  bool boundary = false;  // read by the site, not part of it
};

// The nodes of `g` marked in `in_site` (one flag per node), then the nodes
// outside it they read, in node order.
std::vector<SiteNode> site_nodes(const Graph& g, const GraphIndex& index, const CostModel& model,
                                 const std::vector<char>& in_site);

// The sum of the site's own nodes' costs.
double site_cost(const std::vector<SiteNode>& site);

}  // namespace tso::opt
