// ONNX export: names every tensor, writes weights as initializers (external
// data past the threshold), maps each operator, and writes the file through
// a temporary that is renamed into place.
#include <filesystem>
#include <map>

#include "core/atomic_file.h"
#include "frontend/export_ops.h"
#include "frontend/onnx.h"
#include "frontend/onnx_util.h"

namespace tso {

namespace onnx_frontend {

std::string ExportContext::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
  taken_.insert(name);
  return name;
}

std::string ExportContext::constant(const std::string& base, const HostTensor& value) {
  std::string name = fresh(base);
  store_tensor(weight_from_host(value), name, out_->add_initializer());
  return name;
}

void ExportContext::reserve(const onnx::NodeProto& node) {
  node_names_.insert(node.name());
  for (const std::string& out : node.output()) taken_.insert(out);
}

onnx::NodeProto* ExportContext::add_node(const std::string& op_type,
                                         std::vector<std::string> inputs,
                                         std::vector<std::string> outputs,
                                         const std::string& name) {
  onnx::NodeProto* p = out_->add_node();
  p->set_op_type(op_type);
  std::string unique = name;
  for (int k = 1; !node_names_.insert(unique).second; ++k) unique = name + "_" + std::to_string(k);
  p->set_name(unique);
  for (std::string& s : inputs) p->add_input(std::move(s));
  for (std::string& s : outputs) p->add_output(std::move(s));
  return p;
}

}  // namespace onnx_frontend

namespace {

using namespace onnx_frontend;

struct ExternalData {
  std::string path;      // the weights file to write
  std::string location;  // as recorded in the model, relative to it
};

Expected<onnx::ModelProto> build_model(const Graph& g, const OnnxModelInfo& info,
                                       const ExportOptions& options,
                                       const std::optional<ExternalData>& external,
                                       std::string* external_bytes) {
  onnx::ModelProto m;
  m.set_ir_version(info.ir_version);
  m.set_producer_name(options.producer_name);
  m.set_producer_version(TSO_FRONTEND_VERSION);
  bool has_default = false;
  for (const auto& [domain, version] : info.opset_imports) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(domain.empty() ? info.opset : version);
    has_default = has_default || domain.empty();
  }
  if (!has_default) {
    auto* o = m.add_opset_import();
    o->set_version(info.opset);
  }
  for (const std::string& f : info.functions)
    if (!m.add_functions()->ParseFromString(f))
      return Error{"a model-local function kept at import does not parse"};
  onnx::GraphProto* out = m.mutable_graph();
  out->set_name(g.name());
  ExportContext ctx(g, info.opset, out);
  // The dynamic part is written after the graph as import kept it, its names
  // taken first; the model's outputs are then the part's list of them, in the
  // file's order (the graph outputs only the part reads are not among them).
  onnx::GraphProto part;
  if (info.dynamic) {
    if (!part.ParseFromString(info.dynamic->graph))
      return Error{"the dynamic part kept at import does not parse"};
    for (const auto& n : part.node()) ctx.reserve(n);
    for (const auto& t : part.initializer()) ctx.reserve(t.name());
  }
  auto& names = ctx.names();
  names.resize(g.size());
  // Names: inputs keep theirs; a graph output names the tensor it reads when
  // that tensor is an operator result named by no other output; weights keep
  // theirs unless an output took it first (a weight the optimizer folded from
  // a node is named after the node, which exporters often name after its
  // output): such a weight gets a suffix, the output keeps the user's name.
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == Op::Input) names[i] = {ctx.fresh(g.node(i).name)};
  std::vector<bool> identity(g.outputs().size(), false);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const GraphOutput& o = g.outputs()[k];
    auto& slot = names[o.ref.node];
    slot.resize(g.node(o.ref.node).outs.size());
    if (g.node(o.ref.node).op == Op::Weight && slot[0].empty())  // read through an Identity
      slot[0] = ctx.fresh(g.node(o.ref.node).name);
    if (!slot[o.ref.output].empty()) {
      identity[k] = true;
      continue;
    }
    slot[o.ref.output] = ctx.fresh(o.name);
    if (slot[o.ref.output] != o.name)
      return Error{"graph output '" + o.name + "' clashes with another name"};
  }
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).op == Op::Weight && names[i].empty()) names[i] = {ctx.fresh(g.node(i).name)};
  for (int i = 0; i < g.size(); ++i) {
    names[i].resize(g.node(i).outs.size());
    for (size_t k = 0; k < names[i].size(); ++k)
      if (names[i][k].empty())
        names[i][k] = ctx.fresh("t" + std::to_string(i) + "_" + std::to_string(k));
  }
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op == Op::Input) {
      set_value_info(names[i][0], n.outs[0], out->add_input());
      continue;
    }
    if (!n.data) return Error{"weight '" + n.name + "' has no data to export"};
    onnx::TensorProto* t = out->add_initializer();
    store_tensor(*n.data, names[i][0], t);
    if (external) {
      t->clear_raw_data();
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const char* key, const std::string& value) {
        auto* e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
      };
      add("location", external->location);
      add("offset", std::to_string(external_bytes->size()));
      add("length", std::to_string(n.data->bytes.size()));
      external_bytes->append(reinterpret_cast<const char*>(n.data->bytes.data()),
                             n.data->bytes.size());
    }
  }
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (n.op == Op::Input || n.op == Op::Weight) continue;
    if (is_source(n.op)) {
      store_tensor(weight_from_host(constant_value(n)), names[i][0], out->add_initializer());
      continue;
    }
    TSO_RETURN_IF_ERROR(export_node(ctx, i));
  }
  std::map<std::string, TensorType> output_types;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const GraphOutput& o = g.outputs()[k];
    if (identity[k]) ctx.add_node("Identity", {ctx.name_of(o.ref)}, {ctx.fresh(o.name)}, o.name);
    output_types[o.name] = g.type(o.ref);
    if (!info.dynamic) set_value_info(o.name, g.type(o.ref), out->add_output());
  }
  if (!info.dynamic) return m;
  for (const auto& t : part.initializer()) *out->add_initializer() = t;
  for (const auto& n : part.node()) *out->add_node() = n;
  for (const auto& o : part.output()) {
    auto it = output_types.find(o.name());
    if (it == output_types.end())
      *out->add_output() = o;
    else
      set_value_info(o.name(), it->second, out->add_output());
  }
  return m;
}

int64_t weight_bytes(const Graph& g) {
  int64_t total = 0;
  for (int i : g.input_nodes())
    if (g.node(i).data) total += static_cast<int64_t>(g.node(i).data->bytes.size());
  return total;
}

}  // namespace

Expected<std::string> export_onnx_bytes(const Graph& graph, const OnnxModelInfo& info,
                                        const ExportOptions& options) {
  std::string unused;
  Expected<onnx::ModelProto> m = build_model(graph, info, options, std::nullopt, &unused);
  if (!m) return m.error();
  return m->SerializeAsString();
}

Status export_onnx(const Graph& graph, const OnnxModelInfo& info, const std::string& path,
                   const ExportOptions& options) {
  std::optional<ExternalData> external;
  if (weight_bytes(graph) > options.external_data_threshold)
    external = ExternalData{path + ".weights",
                            std::filesystem::path(path).filename().string() + ".weights"};
  std::string external_bytes;
  Expected<onnx::ModelProto> m = build_model(graph, info, options, external, &external_bytes);
  if (!m) return Error{path + ": " + m.error().message};
  // Both files are written before either is renamed: a failure changes
  // neither, and only an interruption between the two renames could pair
  // new weights with the previous model. The model is serialized into its
  // file, not into a copy in memory first.
  Expected<AtomicFile> model = AtomicFile::create(path);
  if (!model) return model.error();
  if (!m->SerializeToOstream(&model->out()))
    return Error{path + ": the model could not be serialized or written"};
  if (!external) return model->commit();
  Expected<AtomicFile> weights = AtomicFile::create(external->path);
  if (!weights) return weights.error();
  weights->out() << external_bytes;
  TSO_RETURN_IF_ERROR(weights->commit());
  return model->commit();
}

}  // namespace tso
