#include "runtime/cuda/signature.h"

namespace tso::cuda {

std::string op_signature(const Graph& g, int index) {
  const Node& n = g.node(index);
  std::string s(op_name(n.op));
  s += '(';
  for (size_t i = 0; i < n.args.size(); ++i) {
    if (i > 0) s += ',';
    s += to_string(g.type(n.args[i]));
  }
  bool first = true;
  for (const auto& [key, value] : n.attrs.entries()) {
    const AttrInfo& info = attr_info(key);
    Expected<AttrValue> def = parse_attr_value(info.type, info.default_text);
    if (!info.default_text.empty() && def && *def == value) continue;
    s += first ? ';' : ',';
    first = false;
    s += info.name;
    s += '=';
    s += print_attr_value(value);
  }
  s += ')';
  return s;
}

}  // namespace tso::cuda
