#include "frontend/erf_gelu.h"

#include <cmath>
#include <optional>

#include "frontend/node_links.h"

namespace tso::onnx_frontend {

namespace {

class ChainFinder {
 public:
  ChainFinder(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses)
      : g_(g), links_(g, uses) {}

  // The chain whose Erf is node `e`, if there is one.
  std::optional<ErfGeluChain> at(int e) const {
    const onnx::NodeProto& erf = g_.node(e);
    if (!is_node(erf, "Erf", 1) || only_reader(erf.input(0)) != e) return std::nullopt;
    const int d = producer(erf.input(0));
    const int a = only_reader(erf.output(0));
    if (d < 0 || a < 0 || !is_node(g_.node(a), "Add", 2)) return std::nullopt;
    const std::string one = other_input(g_.node(a), erf.output(0), true);
    const int r = only_reader(g_.node(a).output(0));
    if (one.empty() || r < 0 || !is_node(g_.node(r), "Mul", 2)) return std::nullopt;
    // x / sqrt 2, or x * (1 / sqrt 2) with x on either side.
    const onnx::NodeProto& div = g_.node(d);
    const bool by_div = is_node(div, "Div", 2);
    if (!by_div && !is_node(div, "Mul", 2)) return std::nullopt;
    for (int side : {0, 1}) {
      if (by_div && side == 1) break;
      const std::string& x = div.input(side);
      const std::string scale = other_input(div, x, !by_div);
      if (scale.empty()) continue;
      std::optional<ErfGeluChain> c = halved(x, a, r);
      if (!c) continue;
      c->inner.insert(c->inner.begin(), {d, e, a});
      c->constants.insert(c->constants.begin(),
                          {{scale, by_div ? std::sqrt(2.0) : 1 / std::sqrt(2.0)}, {one, 1.0}});
      return c;
    }
    return std::nullopt;
  }

 private:
  // Given r = Mul(., a), the rest of the chain on x: Mul(x, a) then Mul(., 0.5),
  // or Mul(x, 0.5) then r. Inner nodes after the Add and the 0.5 only.
  std::optional<ErfGeluChain> halved(const std::string& x, int a, int r) const {
    const std::string& sum = g_.node(a).output(0);
    const std::string left = other_input(g_.node(r), sum, true);
    if (left.empty()) return std::nullopt;
    ErfGeluChain c;
    c.x = x;
    if (left == x) {
      const int y = only_reader(g_.node(r).output(0));
      if (y < 0 || !is_node(g_.node(y), "Mul", 2)) return std::nullopt;
      const std::string half = other_input(g_.node(y), g_.node(r).output(0), true);
      if (half.empty()) return std::nullopt;
      c.inner = {r};
      c.last = y;
      c.constants = {{half, 0.5}};
      return c;
    }
    const int h = producer(left);
    if (h < 0 || only_reader(left) != r || !is_node(g_.node(h), "Mul", 2)) return std::nullopt;
    const std::string half = other_input(g_.node(h), x, true);
    if (half.empty()) return std::nullopt;
    c.inner = {h};
    c.last = r;
    c.constants = {{half, 0.5}};
    return c;
  }

  int producer(const std::string& name) const { return links_.producer(name); }
  int only_reader(const std::string& name) const { return links_.only_reader(name); }

  const onnx::GraphProto& g_;
  NodeLinks links_;
};

}  // namespace

std::vector<ErfGeluChain> find_erf_gelu_chains(const onnx::GraphProto& g,
                                               const std::unordered_map<std::string, int>& uses) {
  ChainFinder finder(g, uses);
  return disjoint_chains<ErfGeluChain>(g, [&](int i) { return finder.at(i); });
}

}  // namespace tso::onnx_frontend
