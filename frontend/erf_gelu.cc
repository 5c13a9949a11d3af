#include "frontend/erf_gelu.h"

#include <cmath>
#include <optional>
#include <unordered_set>

namespace tso::onnx_frontend {

namespace {

bool is(const onnx::NodeProto& n, const char* type, int inputs) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && n.op_type() == type &&
         n.input_size() == inputs && n.output_size() == 1;
}

// The other input of the binary node `n` when one of its inputs is `name`
// (input 0 only unless `commutative`); empty when neither is, or both are.
std::string other_input(const onnx::NodeProto& n, const std::string& name, bool commutative) {
  if (n.input(0) == name && n.input(1) != name) return n.input(1);
  if (commutative && n.input(1) == name && n.input(0) != name) return n.input(0);
  return {};
}

class ChainFinder {
 public:
  ChainFinder(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses)
      : g_(g), uses_(uses) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& o : g.node(i).output()) producer_[o] = i;
      for (const std::string& in : g.node(i).input()) reader_[in] = i;
    }
  }

  // The chain whose Erf is node `e`, if there is one.
  std::optional<ErfGeluChain> at(int e) const {
    const onnx::NodeProto& erf = g_.node(e);
    if (!is(erf, "Erf", 1) || only_reader(erf.input(0)) != e) return std::nullopt;
    const int d = producer(erf.input(0));
    const int a = only_reader(erf.output(0));
    if (d < 0 || a < 0 || !is(g_.node(a), "Add", 2)) return std::nullopt;
    const std::string one = other_input(g_.node(a), erf.output(0), true);
    const int r = only_reader(g_.node(a).output(0));
    if (one.empty() || r < 0 || !is(g_.node(r), "Mul", 2)) return std::nullopt;
    // x / sqrt 2, or x * (1 / sqrt 2) with x on either side.
    const onnx::NodeProto& div = g_.node(d);
    const bool by_div = is(div, "Div", 2);
    if (!by_div && !is(div, "Mul", 2)) return std::nullopt;
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
      if (y < 0 || !is(g_.node(y), "Mul", 2)) return std::nullopt;
      const std::string half = other_input(g_.node(y), g_.node(r).output(0), true);
      if (half.empty()) return std::nullopt;
      c.inner = {r};
      c.last = y;
      c.constants = {{half, 0.5}};
      return c;
    }
    const int h = producer(left);
    if (h < 0 || only_reader(left) != r || !is(g_.node(h), "Mul", 2)) return std::nullopt;
    const std::string half = other_input(g_.node(h), x, true);
    if (half.empty()) return std::nullopt;
    c.inner = {h};
    c.last = r;
    c.constants = {{half, 0.5}};
    return c;
  }

  int producer(const std::string& name) const {
    auto it = producer_.find(name);
    return it == producer_.end() ? -1 : it->second;
  }
  // The one node reading `name`, or -1 (several readers, or a graph output).
  int only_reader(const std::string& name) const {
    auto u = uses_.find(name);
    auto r = reader_.find(name);
    return u == uses_.end() || u->second != 1 || r == reader_.end() ? -1 : r->second;
  }

  const onnx::GraphProto& g_;
  const std::unordered_map<std::string, int>& uses_;
  std::unordered_map<std::string, int> producer_, reader_;
};

}  // namespace

std::vector<ErfGeluChain> find_erf_gelu_chains(const onnx::GraphProto& g,
                                               const std::unordered_map<std::string, int>& uses) {
  ChainFinder finder(g, uses);
  std::vector<ErfGeluChain> chains;
  std::unordered_set<int> claimed;
  for (int e = 0; e < g.node_size(); ++e) {
    std::optional<ErfGeluChain> c = finder.at(e);
    if (!c) continue;
    bool free = !claimed.count(c->last);
    for (int k : c->inner) free = free && !claimed.count(k);
    if (!free) continue;
    claimed.insert(c->last);
    claimed.insert(c->inner.begin(), c->inner.end());
    chains.push_back(std::move(*c));
  }
  return chains;
}

}  // namespace tso::onnx_frontend
