// Internal to generator/: exact fingerprint values. Every tensor of an
// enumerated graph is evaluated on t independent random input sets in the
// reference executor's modular scalar (runtime/reference/executor.h), and
// hashed; a graph's key combines the hashes of its live tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "generator/program.h"
#include "runtime/reference/tensor.h"

namespace tso::gen {

using ModTensor = ref::Tensor<ref::Mod>;

struct Value {
  std::vector<ModTensor> sets;  // one per random input set
  uint64_t hash = 0;
};
using ValuePtr = std::shared_ptr<const Value>;

uint64_t value_hash(const std::vector<ModTensor>& sets);
// The variables' values: `sets` random sets drawn from `seed`.
std::vector<ValuePtr> input_values(const OpSet& set, int sets, uint64_t seed);
// One operator on t input sets; aborts if the executor rejects an
// application shape inference accepted (an internal invariant).
std::vector<ValuePtr> eval_applied(const Applied& app, std::span<const Value* const> args,
                                   int sets);
// conv2d in Mod for stride 1, no dilation, `same` padding, an optional bias
// and no or relu activation (all of the generator's convolutions), by direct
// loops with the products reduced lazily: 2^31 = 1 (mod p), so the low and
// high 31 bits of the products add up separately and each output is reduced
// once. The same values as the reference executor (tested); eval_applied
// uses it. `b` is the bias, or nullptr.
bool fast_conv_applies(const Node& n, size_t arity);
ModTensor fast_conv(const Node& n, const ModTensor& x, const ModTensor& w,
                    const ModTensor* b = nullptr);
// Every tensor of a replayed program, in tensor order.
std::vector<ValuePtr> eval_program(const Replayed& r, const std::vector<ValuePtr>& inputs);
inline bool same_value(const Value& a, const Value& b) {
  return a.hash == b.hash && a.sets == b.sets;
}

}  // namespace tso::gen
