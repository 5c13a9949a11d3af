// The reference executor: the definition of what every tso operator computes.
// Simple and obviously correct first; fast enough to run ResNet-50 on a CPU
// (conv2d is im2col + Eigen GEMM). One implementation, templated on the scalar:
//   float, double  — true operator semantics;
//   Mod            — exact arithmetic mod p = 2^31-1 for fingerprints, where the
//                    non-linear operators are the fixed polynomial surrogates
//                    below (the generator relies on them; never change one
//                    without regenerating the rule files).
// Tensors of every element type are held as S: integers by value, bool as 0
// and 1 (what isnan produces; where reads any non-zero condition as true).
//
// Mod surrogates and exact forms (x an element, all arithmetic mod p, 1/k the
// modular inverse of k, f_s the surrogate of f):
//   relu(x)       = (x^2 + x)/2              agrees with relu on -1, 0, 1; relu(x)-relu(-x) = x
//   sigmoid(x)    = 1/2 + x/4 - x^3/48       degree-3 Taylor polynomial at 0
//   tanh(x)       = x - x^3/3                degree-3 Taylor; odd; = 2 sigmoid_s(2x) - 1
//   erf(x)        = x - x^3/3 + x^5/10       Taylor of erf without its 2/sqrt(pi); odd, degree 5
//   gelu(x)       = x (1 + erf_s(x)) / 2     gelu's formula on erf_s (1/sqrt 2 has no Mod image)
//   exp(x)        = 1 + x + x^2/2 + x^3/6    degree-3 Taylor
//   sqrt(x)       = (3 + 6x - x^2)/8         degree-2 Taylor at 1
//   div(a, b)     = a * b^-1                 exact; 0^-1 = 0
//   pow(x, y)     = x^k, k = signed(y)       exact for integer exponents; k < 0 uses x^-1
//   softmax(x)    = exp_s(x) / sum exp_s(x)  along the axis; no max shift (exp_s(a-b) != exp_s(a)/exp_s(b))
//   layernorm(x)  = (x - mu) * sqrt_s(var + eps)^-1 * scale + bias   mu, var exact means
//   batchnorm(x)  = (x - mean) * sqrt_s(var + eps)^-1 * scale + bias per channel
//   avgpool, global_avgpool, reduce_mean = sum * count^-1            exact
//   reduce_sum    = sum                                             exact
//   reduce_max    = max as for maxpool (below)
//   reduce_l2     = sqrt(sum of squares), through the sqrt surrogate
//   maxpool, clip = max / clamp in the order of the signed representatives in
//                   (-p/2, p/2): exact, deterministic, and the real max whenever
//                   the values are small integers
//   where(c, a, b) = a where c != 0, else b                         exact
//   isnan         = an error: Mod values are never NaN, and the generator
//                   does not enumerate isnan
//   leaky_relu, softplus, log, log_softmax = an error (no surrogate; the
//                   generator does not enumerate them)
//   abs, max, min = an error: Mod values have no sign and no order
//   grid_sample   = an error (Mod values are no coordinates)
//   equal, less, greater = an error: Mod values have no order, and equality
//                   mod p is not the reals'; the generator does not enumerate them
//   not, and, or  = 1 - x, ab, a + b - ab                           exact on bool (0 and 1)
//   cumsum        = running sums                                    exact
//   gather        = exact copy of the rows at the indices signed(k)
//   cast          = identity, or x != 0 to bool (Mod integers are integers)
//   act on conv2d, matmul and gemm = the standalone surrogate, so
//                   relu(conv2d(x, w)) == conv2d(x, w; act=relu) exactly
// signed(y) is y's representative in (-p/2, p/2). Float constants — attribute
// values (epsilon, alpha, beta, clip bounds, pad value) and stored weights —
// become the nearest integer (halves away from zero) reduced mod p, so
// epsilon = 1e-5 is 0 on Mod; non-finite weights are an error.
//
// Surrogates are low-degree polynomials, so a fingerprint match through a
// non-linear operator is only a candidate: e.g. relu_s(2x) = 4 relu_s(x) - x
// holds on Mod and not on floats. Candidates are re-checked in float.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/reference/tensor.h"

namespace tso::ref {

// Evaluates one node on its argument tensors. The node's attributes must be
// complete (as GraphBuilder makes them). A weight node with stored data
// evaluates to that data; an input node, and a weight without data, are an
// error. Opaque nodes are an error that names the operator and the node.
template <class S>
Expected<std::vector<Tensor<S>>> eval_node(const Node& node,
                                           std::span<const Tensor<S>* const> args);

// Evaluates the whole graph. `feeds` gives a tensor for every input node and
// for weights without stored data (by name); weights with stored data use it
// (converted to S) unless `feeds` overrides them. A missing feed, a feed of
// the wrong shape, or an operator result that disagrees with the graph's
// recorded type is an error naming the node. Returns the graph outputs in
// order. Intermediate tensors are freed after their last use.
template <class S>
Expected<std::vector<Tensor<S>>> evaluate(const Graph& g,
                                          const std::map<std::string, Tensor<S>>& feeds);

// A stored weight converted to S (f32, f16, f64, i64, i32 and bool data).
template <class S>
Expected<Tensor<S>> weight_value(const WeightData& data);

}  // namespace tso::ref
