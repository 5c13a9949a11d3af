#include "core/signature.h"

#include <algorithm>
#include <array>
#include <variant>
#include <vector>

namespace tso {
namespace {

// A convolution's padding as explicit pads: `same` pads with the extents of
// its arguments, as the runtimes resolve it (core/attrs.h), so that a
// convolution written with `same` and one with the pads it resolves to share
// a signature (they run one kernel; the rules write `same`, the frontends
// explicit pads). Other padding, and a node whose window is not known yet,
// as given.
AttrValue conv_padding(const Node& n, std::span<const TensorType> inputs, const AttrValue& pad) {
  const Padding* p = std::get_if<Padding>(&pad);
  const AttrValue* stride = n.attrs.find(AttrKey::stride);
  const AttrValue* dilation = n.attrs.find(AttrKey::dilation);
  if (n.op != Op::Conv2d || !p || p->mode != Padding::kSame || inputs.size() < 2 ||
      inputs[0].shape.rank() != 4 || inputs[1].shape.rank() != 4 || !stride || !dilation)
    return pad;
  const auto* st = std::get_if<std::vector<int64_t>>(stride);
  const auto* dil = std::get_if<std::vector<int64_t>>(dilation);
  if (!st || !dil || st->size() != 2 || dil->size() != 2) return pad;
  Padding explicit_pads{Padding::kExplicit, {}};
  for (int d = 0; d < 2; ++d) {
    const int64_t in = inputs[0].shape[2 + d], s = (*st)[d];
    const int64_t span = (inputs[1].shape[2 + d] - 1) * (*dil)[d] + 1;
    if (s < 1) return pad;
    const int64_t total = std::max<int64_t>(0, ((in + s - 1) / s - 1) * s + span - in);
    explicit_pads.pads[d] = total / 2;
    explicit_pads.pads[d + 2] = total - total / 2;
  }
  if (explicit_pads.pads == std::array<int64_t, 4>{}) return Padding{};
  return explicit_pads;
}

}  // namespace

std::string op_signature(const Node& n, std::span<const TensorType> inputs) {
  std::string s(op_name(n.op == Op::ScalarMul ? Op::Mul : n.op));
  s += '(';
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) s += ',';
    s += to_string(inputs[i]);
  }
  bool first = true;
  for (const auto& [key, given] : n.attrs.entries()) {
    const AttrValue value = key == AttrKey::pad ? conv_padding(n, inputs, given) : given;
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
