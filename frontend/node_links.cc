#include "frontend/node_links.h"

namespace tso::onnx_frontend {

bool is_node(const onnx::NodeProto& n, const char* type, int inputs) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && n.op_type() == type &&
         n.input_size() == inputs && n.output_size() == 1;
}

std::string other_input(const onnx::NodeProto& n, const std::string& name, bool commutative) {
  if (n.input(0) == name && n.input(1) != name) return n.input(1);
  if (commutative && n.input(1) == name && n.input(0) != name) return n.input(0);
  return {};
}

NodeLinks::NodeLinks(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses)
    : uses_(uses) {
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& o : g.node(i).output()) producer_[o] = i;
    for (const std::string& in : g.node(i).input())
      if (!in.empty()) readers_[in].push_back(i);
  }
}

int NodeLinks::producer(const std::string& name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? -1 : it->second;
}

int NodeLinks::only_reader(const std::string& name) const {
  const std::vector<int> r = readers(name);
  return r.size() == 1 ? r[0] : -1;
}

std::vector<int> NodeLinks::readers(const std::string& name) const {
  auto u = uses_.find(name);
  auto r = readers_.find(name);
  if (u == uses_.end() || r == readers_.end() || u->second != static_cast<int>(r->second.size()))
    return {};
  return r->second;
}

}  // namespace tso::onnx_frontend
