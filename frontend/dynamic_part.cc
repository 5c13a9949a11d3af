#include "frontend/dynamic_part.h"

#include <algorithm>

#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

std::vector<const onnx::GraphProto*> subgraphs(const onnx::NodeProto& n) {
  std::vector<const onnx::GraphProto*> out;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

// Adds to `reads` what `g` reads of the graphs around it: any name neither
// `g` nor the subgraphs enclosing it (`scope`) define.
void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> scope,
                         std::vector<std::string>* reads, std::unordered_set<std::string>* seen) {
  for (const auto& v : g.input()) scope.insert(v.name());
  for (const auto& t : g.initializer()) scope.insert(t.name());
  auto read = [&](const std::string& name) {
    if (!name.empty() && !scope.count(name) && seen->insert(name).second) reads->push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) read(in);
    for (const onnx::GraphProto* sub : subgraphs(n)) {
      std::vector<std::string> inner;
      std::unordered_set<std::string> inner_seen;
      collect_outer_reads(*sub, scope, &inner, &inner_seen);
      for (const std::string& name : inner) read(name);
    }
    for (const std::string& out : n.output()) scope.insert(out);
  }
  for (const auto& v : g.output()) read(v.name());
}

}  // namespace

bool has_subgraph(const onnx::NodeProto& n) {
  return std::any_of(n.attribute().begin(), n.attribute().end(), [](const auto& a) {
    return a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS ||
           a.has_g() || a.graphs_size() > 0;
  });
}

std::vector<std::string> outer_reads(const onnx::NodeProto& n) {
  std::vector<std::string> reads;
  std::unordered_set<std::string> seen;
  for (const onnx::GraphProto* g : subgraphs(n)) collect_outer_reads(*g, {}, &reads, &seen);
  return reads;
}

bool DynamicPartBuilder::takes(const onnx::NodeProto& n) const {
  if (has_subgraph(n)) return true;
  return std::any_of(n.input().begin(), n.input().end(),
                     [&](const std::string& in) { return computes(in); });
}

void DynamicPartBuilder::add(const onnx::NodeProto& n) {
  std::vector<std::string> names(n.input().begin(), n.input().end());
  for (std::string& name : outer_reads(n)) names.push_back(std::move(name));
  for (const std::string& name : names)
    if (!name.empty() && !computes(name) && read_set_.insert(name).second) reads_.push_back(name);
  for (const std::string& out : n.output())
    if (!out.empty()) computed_.insert(out);
  *part_.add_node() = n;
}

void DynamicPartBuilder::add_constant(const std::string& name, const WeightData& data) {
  store_tensor(data, name, part_.add_initializer());
}

DynamicPart DynamicPartBuilder::finish(const onnx::GraphProto& g) {
  std::unordered_set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());
  DynamicPart d;
  d.nodes = part_.node_size();
  if (d.nodes > 0) d.first = describe(part_.node(0));
  for (const auto& n : part_.node())
    ++d.op_counts[n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                : n.domain() + "." + n.op_type()];
  *part_.mutable_output() = g.output();
  for (const std::string& name : computed_reads_)
    if (!outputs.count(name)) d.reads.push_back(name);
  d.graph = part_.SerializeAsString();
  return d;
}

}  // namespace tso::onnx_frontend

namespace tso {

Status check_static(const OnnxModelInfo& info, const std::string& file) {
  if (!info.dynamic) return Status::Ok();
  const DynamicPart& d = *info.dynamic;
  const std::string what =
      d.nodes == 1 ? d.first + " holds"
                   : d.first + " and the " + std::to_string(d.nodes - 1) + " nodes after it hold";
  return Error{file + ": " + what +
               " control flow or shapes known only when the model runs, which tso's runtimes "
               "do not run (tso optimize and tso inspect take the model: that part is kept as "
               "ONNX and written back unchanged)"};
}

}  // namespace tso
