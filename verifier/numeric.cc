#include "verifier/numeric.h"

#include <algorithm>
#include <cmath>

#include "runtime/reference/executor.h"

namespace tso::verifier {

double relative_error(const ref::Tensor<double>& a, const ref::Tensor<double>& b) {
  double diff = 0, scale = 1e-6;
  for (size_t i = 0; i < a.data.size(); ++i) {
    // Both sides undefined at the same element (batchnorm at var + eps < 0):
    // no evidence either way.
    if (std::isnan(a.data[i]) && std::isnan(b.data[i])) continue;
    double d = std::abs(a.data[i] - b.data[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::abs(b.data[i]));
  }
  return diff / scale;
}

std::map<std::string, ref::Tensor<double>> random_feeds(const Graph& g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, ref::Tensor<double>> feeds;
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    ref::Tensor<double> t(n.outs[0].shape);
    for (double& v : t.data) v = u(rng);
    feeds.emplace(n.name, std::move(t));
  }
  return feeds;
}

Expected<double> compare_graphs(const Graph& a, const Graph& b, std::mt19937_64& rng) {
  std::map<std::string, ref::Tensor<double>> feeds = random_feeds(a, rng);
  for (auto& [name, t] : random_feeds(b, rng)) feeds.emplace(name, std::move(t));
  Expected<std::vector<ref::Tensor<double>>> va = ref::evaluate<double>(a, feeds);
  if (!va) return va.error();
  Expected<std::vector<ref::Tensor<double>>> vb = ref::evaluate<double>(b, feeds);
  if (!vb) return vb.error();
  if (va->size() != vb->size()) return Error{"the two sides have different output counts"};
  double worst = 0;
  for (size_t i = 0; i < va->size(); ++i) {
    if ((*va)[i].shape != (*vb)[i].shape)
      return Error{"output " + std::to_string(i) + " has shape " + to_string((*va)[i].shape) +
                   " on one side and " + to_string((*vb)[i].shape) + " on the other"};
    worst = std::max(worst, relative_error((*va)[i], (*vb)[i]));
  }
  return worst;
}

}  // namespace tso::verifier
