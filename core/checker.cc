#include "core/checker.h"

#include <map>
#include <string>
#include <vector>

#include "core/shape_inference.h"

namespace tso {

namespace {

std::string types_str(std::span<const TensorType> ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + to_string(ts[i]);
  return s + ")";
}

std::string attrs_str(const Attrs& a) {
  std::string s = "{";
  for (size_t i = 0; i < a.entries().size(); ++i) {
    const auto& [k, v] = a.entries()[i];
    s += (i ? ", " : "") + std::string(attr_info(k).name) + "=" + print_attr_value(v);
  }
  return s + "}";
}

Error node_error(const Graph& g, int i, const std::string& msg) {
  return Error{describe_node(g, i) + ": " + msg};
}

Status check_args(const Graph& g, int i) {
  const Node& n = g.node(i);
  const OpInfo& info = op_info(n.op);
  const int count = static_cast<int>(n.args.size());
  if (count < info.min_inputs || (info.max_inputs != kVariadic && count > info.max_inputs))
    return node_error(g, i, "has " + std::to_string(count) + " inputs, outside the " +
                                std::to_string(info.min_inputs) + ".." +
                                (info.max_inputs == kVariadic ? std::string("")
                                                              : std::to_string(info.max_inputs)) +
                                " that " + std::string(info.name) + " takes");
  for (size_t k = 0; k < n.args.size(); ++k) {
    const TensorRef& a = n.args[k];
    bool ok = a.node >= 0 && a.node < i && a.output >= 0 &&
              a.output < static_cast<int>(g.node(a.node).outs.size());
    if (!ok)
      return node_error(g, i, "argument " + std::to_string(k) + " refers to output " +
                                  std::to_string(a.output) + " of node " + std::to_string(a.node) +
                                  ", which is not an output of an earlier node");
  }
  return Status::Ok();
}

// Graph inputs have no attributes; their type is recorded when declared.
Status check_graph_input(const Graph& g, int i) {
  const Node& n = g.node(i);
  if (!n.attrs.empty()) return node_error(g, i, "takes no attributes, has " + attrs_str(n.attrs));
  if (n.outs.size() != 1) return node_error(g, i, "must have exactly one output");
  for (int64_t d : n.outs[0].shape)
    if (d < 0) return node_error(g, i, "has invalid type " + to_string(n.outs[0]));
  return check_size(n.outs[0], describe_node(g, i));
}

Status check_weight_data(const Graph& g, int i) {
  const Node& n = g.node(i);
  if (!n.data) return Status::Ok();
  if (n.op != Op::Weight) return node_error(g, i, "carries weight data but is not a weight");
  const TensorType& t = n.outs[0];
  const int64_t want = byte_size(t);
  if (n.data->type != t || static_cast<int64_t>(n.data->bytes.size()) != want)
    return node_error(g, i, "weight data of type " + to_string(n.data->type) + " with " +
                                std::to_string(n.data->bytes.size()) + " bytes does not match " +
                                to_string(t) + " (" + std::to_string(want) + " bytes)");
  return Status::Ok();
}

// Attributes are complete and canonical, and the recorded output types are
// the ones inference gives.
Status check_types(const Graph& g, int i) {
  const Node& n = g.node(i);
  Attrs full = n.attrs;
  if (Status s = complete_attrs(n.op, &full); !s.ok()) return node_error(g, i, s.error().message);
  if (full != n.attrs)
    return node_error(g, i, "attributes " + attrs_str(n.attrs) + " are incomplete; expected " +
                                attrs_str(full));
  if (n.op == Op::Opaque) {
    if (n.outs.empty()) return node_error(g, i, "has no recorded output types");
    for (size_t k = 0; k < n.outs.size(); ++k)
      TSO_RETURN_IF_ERROR(
          check_size(n.outs[k], describe_node(g, i) + " output " + std::to_string(k)));
    return Status::Ok();
  }
  if (n.op == Op::Split && n.outs.size() != n.attrs.ints(AttrKey::sizes).size())
    return node_error(g, i, "has " + std::to_string(n.outs.size()) + " outputs but sizes " +
                                print_attr_value(n.attrs.ints(AttrKey::sizes)));
  std::vector<TensorType> in;
  for (const TensorRef& a : n.args) in.push_back(g.type(a));
  Expected<std::vector<TensorType>> inferred = infer_types(n.op, &full, in);
  if (!inferred.ok()) return node_error(g, i, inferred.error().message);
  if (full != n.attrs)
    return node_error(g, i, "attributes " + attrs_str(n.attrs) + " are not canonical; expected " +
                                attrs_str(full));
  if (*inferred != n.outs)
    return node_error(g, i, "recorded types " + types_str(n.outs) + " differ from inferred " +
                                types_str(*inferred) + " for inputs " + types_str(in));
  return Status::Ok();
}

Status check_outputs(const Graph& g) {
  std::map<std::string, int> names;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const GraphOutput& o = g.outputs()[k];
    bool ok = o.ref.node >= 0 && o.ref.node < g.size() && o.ref.output >= 0 &&
              o.ref.output < static_cast<int>(g.node(o.ref.node).outs.size());
    if (!ok)
      return Error{"output '" + o.name + "' refers to output " + std::to_string(o.ref.output) +
                   " of node " + std::to_string(o.ref.node) + ", which does not exist"};
    if (!names.emplace(o.name, k).second)
      return Error{"output name '" + o.name + "' is used twice"};
  }
  return Status::Ok();
}

// Every operator and constant feeds some output; unused inputs and weights
// are allowed (they are part of the model's signature).
Status check_reachable(const Graph& g) {
  std::vector<char> live(g.size(), 0);
  for (const GraphOutput& o : g.outputs()) live[o.ref.node] = 1;
  for (int i = g.size() - 1; i >= 0; --i)
    if (live[i])
      for (const TensorRef& a : g.node(i).args) live[a.node] = 1;
  for (int i = 0; i < g.size(); ++i) {
    Op op = g.node(i).op;
    if (!live[i] && op != Op::Input && op != Op::Weight)
      return node_error(g, i, "does not contribute to any graph output");
  }
  return Status::Ok();
}

}  // namespace

Status check(const Graph& g) {
  std::map<std::string, int> input_names;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    TSO_RETURN_IF_ERROR(check_args(g, i));
    if (n.op == Op::Input || n.op == Op::Weight) {
      TSO_RETURN_IF_ERROR(check_graph_input(g, i));
      auto [it, fresh] = input_names.emplace(n.name, i);
      if (!fresh)
        return node_error(g, i, "has the same name as " + describe_node(g, it->second));
    } else {
      TSO_RETURN_IF_ERROR(check_types(g, i));
    }
    TSO_RETURN_IF_ERROR(check_weight_data(g, i));
  }
  TSO_RETURN_IF_ERROR(check_outputs(g));
  return check_reachable(g);
}

}  // namespace tso
