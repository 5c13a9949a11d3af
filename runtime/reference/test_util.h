// Helpers shared by the reference executor's tests: literal tensors, nodes
// with completed attributes, and comparisons that report the first mismatch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "core/shape_inference.h"
#include "runtime/reference/executor.h"

namespace tso::ref::testing {

// A tensor from literal values; Mod takes them as (integer) signed values.
template <class S>
Tensor<S> T(Shape s, std::initializer_list<double> values) {
  std::vector<S> d;
  for (double v : values) {
    if constexpr (std::is_same_v<S, Mod>)
      d.push_back(Mod::from_signed(static_cast<int64_t>(std::llround(v))));
    else
      d.push_back(static_cast<S>(v));
  }
  EXPECT_EQ(static_cast<int64_t>(d.size()), s.numel()) << "literal for " << to_string(s);
  return Tensor<S>(s, std::move(d));
}

inline Attrs attrs(std::initializer_list<std::pair<AttrKey, AttrValue>> entries) {
  Attrs a;
  for (const auto& [k, v] : entries) a.set(k, v);
  return a;
}

// A node of `op` with `a` completed by the defaults, as GraphBuilder makes it.
inline Node node(Op op, Attrs a = {}, std::string name = {}) {
  Node n;
  n.op = op;
  n.attrs = std::move(a);
  Status s = complete_attrs(op, &n.attrs);
  EXPECT_TRUE(s.ok()) << s.error().message;
  n.name = std::move(name);
  return n;
}

// Evaluates `n` on `args`; a failure is a test failure and yields no outputs.
template <class S>
std::vector<Tensor<S>> eval(const Node& n, const std::vector<Tensor<S>>& args) {
  std::vector<const Tensor<S>*> ptrs;
  for (const Tensor<S>& t : args) ptrs.push_back(&t);
  Expected<std::vector<Tensor<S>>> r = eval_node<S>(n, ptrs);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : std::vector<Tensor<S>>{};
}

template <class S>
Tensor<S> eval1(const Node& n, const std::vector<Tensor<S>>& args) {
  std::vector<Tensor<S>> r = eval(n, args);
  return r.empty() ? Tensor<S>() : std::move(r[0]);
}

template <class S>
double as_double(S v) {
  if constexpr (std::is_same_v<S, Mod>)
    return static_cast<double>(v.to_signed());
  else
    return static_cast<double>(v);
}

// The tolerance policy of core/ops.h: max|a-b| / max(max|b|, 1e-6).
template <class A, class B>
double relative_error(const Tensor<A>& a, const Tensor<B>& b) {
  double diff = 0, scale = 1e-6;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    diff = std::max(diff, std::abs(as_double(a.data[i]) - as_double(b.data[i])));
    scale = std::max(scale, std::abs(as_double(b.data[i])));
  }
  return diff / scale;
}

// Element-by-element comparison: exact for Mod, within `tol` (absolute) for
// float and double.
template <class S>
::testing::AssertionResult close(const Tensor<S>& got, const Tensor<S>& want, double tol = 1e-5) {
  if (!(got.shape == want.shape))
    return ::testing::AssertionFailure()
           << "shape " << to_string(got.shape) << ", expected " << to_string(want.shape);
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool ok = std::is_same_v<S, Mod> ? got.data[i] == want.data[i]
                                     : std::abs(as_double(got.data[i]) - as_double(want.data[i])) <= tol;
    if (!ok)
      return ::testing::AssertionFailure() << "element " << i << " is " << as_double(got.data[i])
                                           << ", expected " << as_double(want.data[i]);
  }
  return ::testing::AssertionSuccess();
}

// Seeded random tensors: uniform in [lo, hi] for float and double, uniform
// over all residues for Mod.
template <class S>
Tensor<S> random_tensor(Shape s, std::mt19937_64& rng, double lo = -1, double hi = 1) {
  Tensor<S> t(s);
  for (S& v : t.data) {
    if constexpr (std::is_same_v<S, Mod>)
      v = Mod(rng());
    else
      v = static_cast<S>(std::uniform_real_distribution<double>(lo, hi)(rng));
  }
  return t;
}

template <class To, class From>
Tensor<To> cast(const Tensor<From>& t) {
  Tensor<To> r(t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) r.data[i] = static_cast<To>(t.data[i]);
  return r;
}

}  // namespace tso::ref::testing
