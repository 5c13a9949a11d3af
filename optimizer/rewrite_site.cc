#include "optimizer/rewrite_site.h"

namespace tso::opt {

std::vector<SiteNode> site_nodes(const Graph& g, const GraphIndex& index, const CostModel& model,
                                 const std::vector<char>& in_site) {
  std::vector<char> boundary(g.size(), 0);
  for (int i = 0; i < g.size(); ++i)
    if (in_site[i])
      for (TensorRef a : g.node(i).args)
        if (!in_site[a.node]) boundary[a.node] = 1;
  std::vector<SiteNode> out;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < g.size(); ++i) {
      if (!(pass == 0 ? in_site[i] : boundary[i])) continue;
      const Node& n = g.node(i);
      SiteNode s{i,        std::string(op_name(n.op)),
                 n.name,   n.outs.empty() ? std::string() : to_string(n.outs[0]),
                 {},       pass == 0 ? node_cost(g, index, model, i) : 0.0,
                 pass == 1};
      for (TensorRef a : n.args) s.args.push_back(a.node);
      out.push_back(std::move(s));
    }
  return out;
}

double site_cost(const std::vector<SiteNode>& site) {
  double sum = 0;
  for (const SiteNode& n : site)
    if (!n.boundary) sum += n.cost_us;
  return sum;
}

}  // namespace tso::opt
