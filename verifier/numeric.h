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

namespace tso::verifier {

constexpr double kDoubleTolerance = 1e-9;

double relative_error(const ref::Tensor<double>& a, const ref::Tensor<double>& b);

// Uniform values in [-1, 1] for every input node of `g`.
std::map<std::string, ref::Tensor<double>> random_feeds(const Graph& g, std::mt19937_64& rng);

// Evaluates `a` and `b` (same inputs by name, same output count) in double on
// the same random feeds and returns the largest relative error over their
// outputs. Differing output shapes or an evaluation error are errors.
Expected<double> compare_graphs(const Graph& a, const Graph& b, std::mt19937_64& rng);

}  // namespace tso::verifier
