#include "frontend/decomposed_layernorm.h"

#include <algorithm>
#include <optional>

#include "frontend/node_links.h"

namespace tso::onnx_frontend {

namespace {

// A ReduceMean of one data input, with its axes as an attribute (below opset
// 18) or as input 1.
bool is_reduce_mean(const onnx::NodeProto& n) {
  return is_node(n, "ReduceMean", 1) || is_node(n, "ReduceMean", 2);
}

class ChainFinder {
 public:
  ChainFinder(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses)
      : g_(g), links_(g, uses) {}

  // The chain whose Sub is node `s`, if there is one.
  std::optional<LayerNormChain> at(int s) const {
    const onnx::NodeProto& sub = g_.node(s);
    if (!is_node(sub, "Sub", 2)) return std::nullopt;
    LayerNormChain c;
    c.x = sub.input(0);
    c.mean = links_.producer(sub.input(1));
    if (c.mean < 0 || !is_reduce_mean(g_.node(c.mean)) || g_.node(c.mean).input(0) != c.x ||
        links_.only_reader(sub.input(1)) != s)
      return std::nullopt;
    // d is read by the square and by the Div, and by nothing else.
    const std::string& d = sub.output(0);
    std::vector<int> readers = links_.readers(d);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (readers.size() != 2) return std::nullopt;
    for (int q : readers) {
      const int div = readers[0] == q ? readers[1] : readers[0];
      if (std::optional<LayerNormChain> rest = from_square(c, s, q, div)) return rest;
    }
    return std::nullopt;
  }

 private:
  // The chain on from the square q of d and the Div of d.
  std::optional<LayerNormChain> from_square(LayerNormChain c, int s, int q, int div) const {
    const std::string& d = g_.node(s).output(0);
    const onnx::NodeProto& square = g_.node(q);
    // d's only readers are q and div (at), so the square reads nothing else.
    if (is_node(square, "Pow", 2) && square.input(0) == d && square.input(1) != d) {
      c.exponent = square.input(1);
    } else if (!(is_node(square, "Mul", 2) && square.input(0) == d && square.input(1) == d)) {
      return std::nullopt;
    }
    c.variance = links_.only_reader(square.output(0));
    if (c.variance < 0 || !is_reduce_mean(g_.node(c.variance)) ||
        g_.node(c.variance).input(0) != square.output(0))
      return std::nullopt;
    const int add = links_.only_reader(g_.node(c.variance).output(0));
    if (add < 0 || !is_node(g_.node(add), "Add", 2)) return std::nullopt;
    c.epsilon = other_input(g_.node(add), g_.node(c.variance).output(0), true);
    const int sqrt = links_.only_reader(g_.node(add).output(0));
    if (c.epsilon.empty() || sqrt < 0 || !is_node(g_.node(sqrt), "Sqrt", 1)) return std::nullopt;
    const onnx::NodeProto& quotient = g_.node(div);
    if (!is_node(quotient, "Div", 2) || quotient.input(0) != d ||
        quotient.input(1) != g_.node(sqrt).output(0) ||
        links_.only_reader(g_.node(sqrt).output(0)) != div)
      return std::nullopt;
    c.inner = {c.mean, s, q, c.variance, add, sqrt};
    c.last = div;
    // The affine mul and add, when they follow.
    const int mul = links_.only_reader(quotient.output(0));
    if (mul < 0 || !is_node(g_.node(mul), "Mul", 2)) return c;
    c.scale = other_input(g_.node(mul), quotient.output(0), true);
    if (c.scale.empty()) return c;
    c.inner.push_back(div);
    c.last = mul;
    const int plus = links_.only_reader(g_.node(mul).output(0));
    if (plus < 0 || !is_node(g_.node(plus), "Add", 2)) return c;
    c.bias = other_input(g_.node(plus), g_.node(mul).output(0), true);
    if (c.bias.empty()) return c;
    c.inner.push_back(mul);
    c.last = plus;
    return c;
  }

  const onnx::GraphProto& g_;
  NodeLinks links_;
};

}  // namespace

std::vector<LayerNormChain> find_layernorm_chains(
    const onnx::GraphProto& g, const std::unordered_map<std::string, int>& uses) {
  ChainFinder finder(g, uses);
  return disjoint_chains<LayerNormChain>(g, [&](int i) { return finder.at(i); });
}

}  // namespace tso::onnx_frontend
