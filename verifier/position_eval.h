// Internal to verifier/: one output position of a program evaluated alone,
// in the prime field of ref::Mod. Only the positions it reads are computed
// (recursively, each computed value remembered for the test), so a position
// costs its reduction, whatever the size of the tensors: the region check
// decides a box from O(rank) positions.
//
// Every graph input and weight is a variable: test t of seed s gives element
// i of input `name` the value input_value(s, t, name, i), so two programs
// over the same inputs see the same values. A position-wise operator and a
// fused activation are the reference executor's surrogate polynomial
// (runtime/reference/executor.h), so a position equals the whole program's
// evaluation on Mod; except clip, whose Mod clamp sends nearly every random
// field element to a bound: here it is x (x + k), k hashed from its bounds.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "runtime/reference/tensor.h"

namespace tso::verifier {

ref::Mod input_value(uint64_t seed, int test, std::string_view name, int64_t flat);

// The degree of the program's outputs as polynomials in its inputs (at
// least 1): a position-wise operator or fused activation multiplies its
// argument's degree by its surrogate's.
int polynomial_degree(const Graph& g);

class PositionEvaluator {
 public:
  // `g` holds only the operators box_derivation.h accepts.
  explicit PositionEvaluator(const Graph& g);

  // Starts a test: new input values, an empty memo.
  void start(uint64_t seed, int test);
  ref::Mod output(int o, std::span<const int64_t> index);
  // Tensor elements read so far, over every test: the work done.
  int64_t reads() const { return reads_; }

 private:
  using Index = std::array<int64_t, Shape::kMaxRank>;
  using Strides = std::array<int64_t, Shape::kMaxRank>;  // 0 past the rank
  struct NodeInfo {
    std::vector<Strides> strides;  // per output
    uint64_t name_hash = 0;        // inputs and weights
    uint64_t key = 0;              // of the current test
  };

  ref::Mod value(TensorRef r, const Index& idx);
  // The `count` positions idx + k * step along `axis` (k < count) into
  // `out`, each counted in reads() as value() counts it: the reductions read
  // their operands a row at a time, so data movement maps the row once
  // instead of once per element.
  void row(TensorRef r, Index idx, int axis, int64_t step, int64_t count, ref::Mod* out);
  void row_by_element(TensorRef r, Index idx, int axis, int64_t step, int64_t count, ref::Mod* out);
  // A row that a seam along `axis` at source positions [lo, hi) cuts: the
  // k with idx[axis] + k * step inside it, as [first, last).
  // Position `f` of the row-major order of shape `s`, in `x`'s first axes.
  static Index unflatten(const Shape& s, int64_t f, Index x);
  static std::pair<int64_t, int64_t> inside(int64_t p0, int64_t step, int64_t count, int64_t lo,
                                            int64_t hi);
  ref::Mod compute(const Node& n, const Index& idx);
  ref::Mod conv(const Node& n, const Index& idx);
  ref::Mod avgpool(const Node& n, const Index& idx);
  ref::Mod matmul(const Node& n, const Index& idx);
  ref::Mod gemm(const Node& n, const Index& idx);
  static Index broadcast(const Shape& s, const Shape& out, const Index& idx);
  ref::Mod move(const Node& n, TensorRef r, const Index& idx);
  const Shape& shape(TensorRef r) const { return g_.type(r).shape; }
  int64_t flat(TensorRef r, const Index& idx) const;

  const Graph& g_;
  std::vector<NodeInfo> info_;
  std::unordered_map<uint64_t, ref::Mod> memo_;  // (node << 40 | flat index) -> value
  int64_t reads_ = 0;
};

}  // namespace tso::verifier
