#include "verifier/numeric.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/reference/executor.h"
#include "verifier/instances.h"

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

namespace {

// Whether some split's sizes are the parameter `name`.
bool sizes_param(const Rule& rule, const std::string& name) {
  for (const RuleSide* side : {&rule.source, &rule.target})
    for (const RuleNode& n : side->nodes)
      for (const PatternAttr& a : n.attrs)
        if (a.key == AttrKey::sizes && a.form == PatternAttr::Form::kParam && a.param == name)
          return true;
  return false;
}

}  // namespace

RuleBindings perturbed_types(const Rule& rule, std::mt19937_64& rng) {
  RuleBindings b;
  for (const RuleVar& v : rule.inputs) b.types[v.name] = v.type;
  if (rule.inputs.empty()) return b;
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int scheme = static_cast<int>(uniform(0, 3));
  if (scheme == 3) {  // one extent of one variable
    Shape& s = b.types[rule.inputs[uniform(0, rule.inputs.size() - 1)].name].shape;
    if (s.rank() > 0) {
      int64_t& e = s[static_cast<int>(uniform(0, s.rank() - 1))];
      int64_t v = uniform(1, 6);
      e = v >= e ? v + 1 : v;
    }
    return b;
  }
  const int64_t scale = uniform(2, 3);
  if (scheme == 0) {
    // A split's sizes given by a parameter (a lifted rule's ?z0) are extents
    // too: scaled with them, they still split what the variables' concat
    // makes.
    for (const RuleParam& p : rule.params) {
      const auto* sizes = std::get_if<std::vector<int64_t>>(&p.example);
      if (!sizes || !sizes_param(rule, p.name)) continue;
      std::vector<int64_t> scaled = *sizes;
      for (int64_t& e : scaled) e *= scale;
      b.params[p.name] = std::move(scaled);
    }
  }
  std::map<int64_t, int64_t> remap;
  auto pick = [&](int64_t v) -> int64_t {
    if (scheme == 0) return v * scale;
    if (scheme == 1) {
      auto it = remap.find(v);
      if (it == remap.end()) it = remap.emplace(v, uniform(1, 7)).first;
      return it->second;
    }
    return std::max<int64_t>(1, v + uniform(-1, 2));
  };
  for (const RuleVar& v : rule.inputs) {
    Shape& s = b.types[v.name].shape;
    for (int i = 0; i < s.rank(); ++i)
      if (uniform(0, 3) != 0 || scheme != 2) s[i] = pick(s[i]);
  }
  return b;
}

namespace {

bool same_output_types(const Graph& a, const Graph& b) {
  for (size_t i = 0; i < a.outputs().size(); ++i)
    if (a.type(a.outputs()[i].ref) != b.type(b.outputs()[i].ref)) return false;
  return true;
}

}  // namespace

std::vector<Instance> perturbed_instances(const Rule& rule, int count, int attempts,
                                          std::mt19937_64& rng) {
  // A lifted rule stands for one concrete rule per rank of its clause and
  // permutation (instances.h): each is perturbed in turn.
  const std::vector<RuleInstance> forms = rule_instances(rule);
  std::vector<Instance> out;
  std::set<std::string> seen;
  for (int i = 0; i < attempts && static_cast<int>(out.size()) < count; ++i) {
    const RuleInstance& form = forms[static_cast<size_t>(i) % forms.size()];
    Instance inst;
    inst.bindings = perturbed_types(form.rule, rng);
    if (!form.label.empty()) inst.shapes = " (" + form.label + ")";
    for (const auto& [name, t] : inst.bindings.types) inst.shapes += " " + name + ": " + to_string(t);
    if (seen.count(inst.shapes)) continue;
    Expected<Graph> src = instantiate(form.rule, RuleSideKind::kSource, inst.bindings);
    Expected<Graph> dst = instantiate(form.rule, RuleSideKind::kTarget, inst.bindings);
    if (!src || !dst || !same_output_types(*src, *dst)) continue;
    seen.insert(inst.shapes);
    inst.source = std::move(*src);
    inst.target = std::move(*dst);
    out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace tso::verifier
