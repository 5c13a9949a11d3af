// Numeric comparison on the reference executor, as core/ops.h states the
// tolerance policy: relative error max|a-b| / max(max|b|, 1e-6).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/reference/tensor.h"
#include "substitutions/rules.h"

namespace tso::verifier {

constexpr double kDoubleTolerance = 1e-9;

double relative_error(const ref::Tensor<double>& a, const ref::Tensor<double>& b);

// Uniform values in [-1, 1] for every input node of `g`.
std::map<std::string, ref::Tensor<double>> random_feeds(const Graph& g, std::mt19937_64& rng);

// Evaluates `a` and `b` (same inputs by name, same output count) in double on
// the same random feeds and returns the largest relative error over their
// outputs. Differing output shapes or an evaluation error are errors.
Expected<double> compare_graphs(const Graph& a, const Graph& b, std::mt19937_64& rng);

// A seeded random binding of a rule's variables near their example types:
// one of four schemes (every extent scaled alike, equal extents mapped to
// equal new ones, independent nudges, or one extent of one variable changed),
// so that equalities and sums between extents often survive, or all but one
// do; where every extent is scaled, a split's sizes parameter is scaled
// with them. Not always valid for the rule.
RuleBindings perturbed_types(const Rule& rule, std::mt19937_64& rng);

// A rule at one binding: both sides, as `instantiate` builds them.
struct Instance {
  RuleBindings bindings;
  Graph source, target;
  std::string shapes;  // " x: f32[2,4] ...", for messages
};

// Distinct instances of the rule at perturbed types where the optimizer may
// apply it (both sides valid, each target output of its source output's
// type), up to `count` of them out of `attempts` tries. A lifted rule's
// tries go round its concrete rules (every rank of its clause and
// permutation, instances.h), whose label leads `shapes`.
std::vector<Instance> perturbed_instances(const Rule& rule, int count, int attempts,
                                          std::mt19937_64& rng);

}  // namespace tso::verifier
