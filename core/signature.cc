#include "core/signature.h"

#include <vector>

namespace tso {

std::string op_signature(const Node& n, std::span<const TensorType> inputs) {
  std::string s(op_name(n.op));
  s += '(';
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) s += ',';
    s += to_string(inputs[i]);
  }
  bool first = true;
  for (const auto& [key, value] : n.attrs.entries()) {
    const AttrInfo& info = attr_info(key);
    if (!info.default_text.empty()) {
      Expected<AttrValue> def = parse_attr_value(info.type, info.default_text);
      if (def && *def == value) continue;
    }
    s += first ? ';' : ',';
    first = false;
    s += info.name;
    s += '=';
    s += print_attr_value(value);
  }
  s += ')';
  return s;
}

std::string post_op_signature(Op anchor, const Node& n, std::span<const TensorType> inputs,
                              int chain) {
  std::string s(op_name(anchor));
  s += '+';
  if (chain == 0) return s + op_signature(n, inputs);
  std::vector<TensorType> swapped(inputs.begin(), inputs.end());
  std::swap(swapped[0], swapped[static_cast<size_t>(chain)]);
  return s + op_signature(n, swapped);
}

bool is_post_op_signature(std::string_view signature) {
  const size_t plus = signature.find('+');
  return plus != std::string_view::npos && plus < signature.find('(');
}

std::string op_signature(const Graph& g, int node) {
  const Node& n = g.node(node);
  std::vector<TensorType> inputs;
  inputs.reserve(n.args.size());
  for (TensorRef r : n.args) inputs.push_back(g.type(r));
  return op_signature(n, inputs);
}

}  // namespace tso
