#include "driver/model_summary.h"

#include <set>

#include "core/shape_inference.h"
#include "core/text_format.h"

namespace tso::driver {
namespace {

int64_t tensor_bytes(const TensorType& t) { return t.shape.numel() * dtype_bytes(t.dtype); }

// Attributes whose value differs from the operator's default, as
// `key=value`; required attributes are always shown. The opaque operator's
// type is part of the operator's label instead.
std::string attr_summary(const Node& node) {
  std::string out;
  for (const auto& [key, value] : node.attrs.entries()) {
    if (key == AttrKey::op_type) continue;
    const AttrInfo& info = attr_info(key);
    if (!info.default_text.empty()) {
      Expected<AttrValue> def = parse_attr_value(info.type, info.default_text);
      if (def.ok() && *def == value) continue;
    }
    if (!out.empty()) out += ' ';
    out += std::string(info.name) + "=" + print_attr_value(value);
  }
  return out;
}

std::string op_label(const Node& node) {
  if (node.op == Op::Opaque) return "opaque:" + node.attrs.str(AttrKey::op_type);
  return std::string(op_name(node.op));
}

}  // namespace

ModelSummary summarize(const Graph& g) {
  ModelSummary s;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (is_source(n.op)) {
      const bool named = n.op == Op::Input || n.op == Op::Weight;
      s.sources.push_back({i, named ? n.name : "", n.op, n.outs[0],
                           n.op == Op::Weight ? tensor_bytes(n.outs[0]) : -1});
      if (n.op == Op::Weight) s.param_bytes += tensor_bytes(n.outs[0]);
      continue;
    }
    OperatorRow row{i, n.name, op_label(n), attr_summary(n), {}, n.outs};
    std::set<int> weights_read;
    for (const TensorRef& r : n.args) {
      row.inputs.push_back(g.type(r));
      if (g.node(r.node).op == Op::Weight && weights_read.insert(r.node).second)
        row.param_bytes += tensor_bytes(g.type(r));
    }
    row.flops = flops(n.op, n.attrs, row.inputs, n.outs);
    s.flops += row.flops;
    ++s.op_counts[std::string(op_name(n.op))];
    if (n.op == Op::Opaque) ++s.opaque_counts[n.attrs.str(AttrKey::op_type)];
    s.operators.push_back(std::move(row));
  }
  for (const GraphOutput& o : g.outputs())
    s.outputs.push_back({o.name, describe_node(g, o.ref.node), g.type(o.ref)});
  return s;
}

}  // namespace tso::driver
