// Modular evaluation and hashing of fingerprint values.
#include "generator/values.h"

#include <random>

#include "runtime/reference/executor.h"
#include "runtime/reference/scalar.h"

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

bool fast_conv_applies(const Node& n, size_t arity) {
  if (n.op != Op::Conv2d || (arity != 2 && arity != 3)) return false;
  if (n.attrs.ints(AttrKey::stride) != std::vector<int64_t>{1, 1}) return false;
  if (n.attrs.has(AttrKey::dilation) && n.attrs.ints(AttrKey::dilation) != std::vector<int64_t>{1, 1})
    return false;
  const Act act = n.attrs.act(AttrKey::act);
  return n.attrs.pad(AttrKey::pad).mode == Padding::kSame && (act == Act::kNone || act == Act::kRelu);
}

ModTensor fast_conv(const Node& n, const ModTensor& x, const ModTensor& w, const ModTensor* b) {
  const int64_t nb = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t co = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t groups = n.attrs.i(AttrKey::groups), cog = co / groups;
  TSO_CHECK(cg * groups == c && cog * groups == co, "conv2d groups");
  // `same` with stride 1: the padding before is half of kernel - 1.
  const int64_t ph = (kh - 1) / 2, pw = (kw - 1) / 2;
  TSO_CHECK(b == nullptr || b->data.size() == static_cast<size_t>(co), "conv2d bias");
  ModTensor y(Shape{nb, co, h, wd});
  for (int64_t bi = 0; bi < nb; ++bi)
    for (int64_t o = 0; o < co; ++o) {
      const int64_t g = o / cog;
      for (int64_t oh = 0; oh < h; ++oh)
        for (int64_t ow = 0; ow < wd; ++ow) {
          // The bias is reduced (< p), so it adds to the low sum.
          uint64_t lo = b == nullptr ? 0 : b->data[o].v, hi = 0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const ref::Mod* xp = x.data.data() + ((bi * c + g * cg + ci) * h) * wd;
            const ref::Mod* wp = w.data.data() + ((o * cg + ci) * kh) * kw;
            for (int64_t i = 0; i < kh; ++i) {
              const int64_t ih = oh + i - ph;
              if (ih < 0 || ih >= h) continue;
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iw = ow + j - pw;
                if (iw < 0 || iw >= wd) continue;
                const uint64_t p = uint64_t{xp[ih * wd + iw].v} * wp[i * kw + j].v;
                lo += p & ref::Mod::kP;
                hi += p >> 31;
              }
            }
          }
          ref::Mod r(ref::Mod::reduce(lo + hi));
          if (n.attrs.act(AttrKey::act) == Act::kRelu) r = ref::fn::relu(r);
          y.data[((bi * co + o) * h + oh) * wd + ow] = r;
        }
    }
  return y;
}

std::vector<ValuePtr> eval_applied(const Applied& app, std::span<const Value* const> args,
                                   int sets) {
  std::vector<std::shared_ptr<Value>> outs(app.out_kinds.size());
  for (auto& o : outs) o = std::make_shared<Value>();
  for (int s = 0; s < sets; ++s) {
    std::array<const ModTensor*, kMaxArgs> in{};
    for (size_t i = 0; i < args.size(); ++i) in[i] = &args[i]->sets[s];
    if (fast_conv_applies(app.node, args.size())) {
      outs[0]->sets.push_back(fast_conv(app.node, *in[0], *in[1], in[2]));
      continue;
    }
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
    std::array<const Value*, kMaxArgs> a{};
    int n = 0;
    for (int arg : r.op_args[i]) a[n++] = vals[arg].get();
    int sets = static_cast<int>(inputs.front()->sets.size());
    std::vector<ValuePtr> outs = eval_applied(*r.applied[i], std::span(a.data(), n), sets);
    for (size_t o = 0; o < outs.size(); ++o) vals[r.op_outputs[i][o]] = std::move(outs[o]);
  }
  return vals;
}

}  // namespace tso::gen
