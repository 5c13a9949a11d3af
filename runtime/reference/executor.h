// The reference executor: the definition of what every tso operator computes.
// Simple and obviously correct first; fast enough to run ResNet-50 on a CPU.
// One implementation, templated on the scalar:
//   float, double  — true operator semantics;
//   Mod            — exact arithmetic mod 2^31-1 for fingerprints, where the
//                    non-linear operators are the fixed polynomial surrogates
//                    listed below (the generator relies on them).
//
// Polynomial surrogates on Mod (x is the element, all arithmetic mod p):
//   (documented by the implementation; see executor.cc)
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/reference/tensor.h"

namespace tso::ref {

// Evaluates one node on its argument tensors. Opaque nodes are an error that
// names the operator and the node.
template <class S>
Expected<std::vector<Tensor<S>>> eval_node(const Node& node,
                                           std::span<const Tensor<S>* const> args);

// Evaluates the whole graph. `feeds` gives a tensor for every input node and
// for weights without stored data (by name); weights with stored data use it
// (converted to S) unless `feeds` overrides them. Returns the graph outputs
// in order.
template <class S>
Expected<std::vector<Tensor<S>>> evaluate(const Graph& g,
                                          const std::map<std::string, Tensor<S>>& feeds);

}  // namespace tso::ref
