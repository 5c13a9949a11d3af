// Modular evaluation and hashing of fingerprint values.
#include "generator/values.h"

#include <random>

#include "runtime/reference/executor.h"

namespace tso::gen {

uint64_t value_hash(const std::vector<ModTensor>& sets) {
  uint64_t h = 0x7e2501f0ull;
  for (const ModTensor& t : sets) {
    h = hash_mix(h, hash_of(t.shape));
    for (ref::Mod m : t.data) h = hash_mix(h, m.v);
  }
  // A final avalanche: keys are sums of these, so low bits must be mixed.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

std::vector<ValuePtr> input_values(const OpSet& set, int sets, uint64_t seed) {
  std::vector<ValuePtr> out;
  for (size_t v = 0; v < set.vars.size(); ++v) {
    auto val = std::make_shared<Value>();
    for (int s = 0; s < sets; ++s) {
      std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + v * 1315423911ull + s * 2654435761ull);
      ModTensor t(set.vars[v].type.shape);
      for (ref::Mod& m : t.data) m = ref::Mod(rng() % ref::Mod::kP);
      val->sets.push_back(std::move(t));
    }
    val->hash = value_hash(val->sets);
    out.push_back(std::move(val));
  }
  return out;
}

std::vector<ValuePtr> eval_applied(const Applied& app, std::span<const Value* const> args,
                                   int sets) {
  std::vector<std::shared_ptr<Value>> outs(app.out_kinds.size());
  for (auto& o : outs) o = std::make_shared<Value>();
  for (int s = 0; s < sets; ++s) {
    std::array<const ModTensor*, 2> in{};
    for (size_t i = 0; i < args.size(); ++i) in[i] = &args[i]->sets[s];
    Expected<std::vector<ModTensor>> r =
        ref::eval_node<ref::Mod>(app.node, std::span(in.data(), args.size()));
    TSO_CHECK(r.ok(), r.ok() ? "" : r.error().message);
    for (size_t o = 0; o < outs.size(); ++o) outs[o]->sets.push_back(std::move((*r)[o]));
  }
  std::vector<ValuePtr> result;
  for (auto& o : outs) {
    o->hash = value_hash(o->sets);
    result.push_back(std::move(o));
  }
  return result;
}

std::vector<ValuePtr> eval_program(const Replayed& r, const std::vector<ValuePtr>& inputs) {
  std::vector<ValuePtr> vals(inputs.begin(), inputs.end());
  vals.resize(r.kind.size());
  for (size_t i = 0; i < r.applied.size(); ++i) {
    std::array<const Value*, 2> a{};
    int n = 0;
    for (int arg : r.op_args[i]) a[n++] = vals[arg].get();
    int sets = static_cast<int>(inputs.front()->sets.size());
    std::vector<ValuePtr> outs = eval_applied(*r.applied[i], std::span(a.data(), n), sets);
    for (size_t o = 0; o < outs.size(); ++o) vals[r.op_outputs[i][o]] = std::move(outs[o]);
  }
  return vals;
}

}  // namespace tso::gen
