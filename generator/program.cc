// Template application, kinds and program replay.
#include "generator/program.h"

#include <algorithm>

#include "core/shape_inference.h"

namespace tso::gen {

namespace {

uint64_t kind_hash(const Kind& k) {
  uint64_t h = hash_mix(hash_of(k.shape), static_cast<uint64_t>(k.source));
  for (const Segs& s : k.segs) {
    h = hash_mix(h, s.n);
    for (int i = 0; i < s.n; ++i) h = hash_mix(h, s.size[i]);
  }
  return h;
}

// The pieces of `k` along `axis`, or the whole extent as one piece.
std::vector<int32_t> pieces(const Kind& k, int axis) {
  const Segs& s = k.segs[axis];
  if (s.n == 0) return {static_cast<int32_t>(k.shape[axis])};
  return {s.size.begin(), s.size.begin() + s.n};
}

Segs make_segs(const std::vector<int32_t>& p) {
  Segs s;
  if (p.size() < 2 || p.size() > kMaxSegs) return s;
  s.n = static_cast<uint8_t>(p.size());
  std::copy(p.begin(), p.end(), s.size.begin());
  return s;
}

Segs same_or_none(const Segs& a, const Segs& b) { return a == b ? a : Segs{}; }

// Argument checks the core shape inference does not make: TASO's conventions
// for which tensors an operator may take.
bool admissible(const OpTemplate& t, std::span<const Kind* const> a) {
  switch (t.op) {
    case Op::Conv2d: {
      if (a[0]->source == Source::kWeight || a[0]->shape.rank() != 4 || a[1]->shape.rank() != 4)
        return false;
      return a[1]->shape[2] == t.conv_kernel[0] && a[1]->shape[3] == t.conv_kernel[1];
    }
    case Op::Enlarge: {
      if (a[0]->source == Source::kOp || a[0]->shape.rank() != 4) return false;
      const std::vector<int64_t>& k = t.attrs.ints(AttrKey::kernel);
      return k.size() == 2 && !(k[0] == a[0]->shape[2] && k[1] == a[0]->shape[3]);
    }
    case Op::Matmul: return a[0]->shape.rank() == 2 && a[1]->shape.rank() == 2;
    case Op::Add:
    case Op::Mul: return a[0]->shape == a[1]->shape;  // no broadcasting, as TASO
    case Op::ScalarMul: return a[1]->shape.rank() == 0 && a[0]->shape.rank() > 0;
    case Op::Split: return a[0]->shape.rank() > t.attrs.i(AttrKey::axis) &&
                           a[0]->segs[t.attrs.i(AttrKey::axis)].n >= 2;
    default: return true;
  }
}

// Split info of the outputs (see program.h).
std::vector<Kind> out_segs(const OpTemplate& t, std::span<const Kind* const> a,
                           const std::vector<TensorType>& outs) {
  std::vector<Kind> k(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) k[i].shape = outs[i].shape;
  Kind& o = k[0];
  switch (t.op) {
    case Op::Conv2d:
      o.segs[0] = a[0]->segs[0];
      o.segs[1] = a[1]->segs[0];
      break;
    case Op::Matmul:
      o.segs[0] = a[0]->segs[0];
      o.segs[1] = a[1]->segs[1];
      break;
    case Op::Add:
    case Op::Mul:
      for (int d = 0; d < kMaxRank; ++d) o.segs[d] = same_or_none(a[0]->segs[d], a[1]->segs[d]);
      break;
    case Op::ScalarMul:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh: o.segs = a[0]->segs; break;
    case Op::AvgPool:
    case Op::MaxPool:
    case Op::Enlarge:
      o.segs[0] = a[0]->segs[0];
      o.segs[1] = a[0]->segs[1];
      break;
    case Op::Transpose: {
      const std::vector<int64_t>& perm = t.attrs.ints(AttrKey::perm);
      for (size_t d = 0; d < perm.size(); ++d) o.segs[d] = a[0]->segs[perm[d]];
      break;
    }
    case Op::Concat: {
      int axis = static_cast<int>(t.attrs.i(AttrKey::axis));
      for (int d = 0; d < kMaxRank; ++d) o.segs[d] = same_or_none(a[0]->segs[d], a[1]->segs[d]);
      std::vector<int32_t> p = pieces(*a[0], axis), q = pieces(*a[1], axis);
      p.insert(p.end(), q.begin(), q.end());
      o.segs[axis] = make_segs(p);
      break;
    }
    case Op::Split: {
      int axis = static_cast<int>(t.attrs.i(AttrKey::axis));
      std::vector<int32_t> p = pieces(*a[0], axis);
      p.pop_back();
      for (Kind& piece : k) piece.segs = a[0]->segs;
      k[0].segs[axis] = make_segs(p);
      k[1].segs[axis] = Segs{};
      break;
    }
    default: break;  // constants: no pieces
  }
  return k;
}

}  // namespace

bool commutative(const OpTemplate& t) { return t.op == Op::Add || t.op == Op::Mul; }

KindTable::KindTable(const OpSet& set) : set_(set) {
  for (const GenVar& v : set.vars) {
    Kind k;
    k.shape = v.type.shape;
    k.source = v.weight ? Source::kWeight : Source::kInput;
    var_kinds_.push_back(intern(k));
  }
}

int KindTable::intern(const Kind& k) {
  std::vector<int>& bucket = index_[kind_hash(k)];
  for (int id : bucket)
    if (kinds_[id] == k) return id;
  kinds_.push_back(k);
  bucket.push_back(static_cast<int>(kinds_.size()) - 1);
  return bucket.back();
}

const Applied* KindTable::apply(int tmpl, std::span<const int> arg_kinds) {
  TSO_CHECK(arg_kinds.size() <= 2);
  const int k0 = arg_kinds.size() > 0 ? arg_kinds[0] : 0;
  const int k1 = arg_kinds.size() > 1 ? arg_kinds[1] : 0;
  if (int s = slot(tmpl, k0, k1); s != -2) return s < 0 ? nullptr : applied_[s].get();
  slot(tmpl, k0, k1) = -1;
  const OpTemplate& t = set_.ops[tmpl];
  std::array<const Kind*, 2> a{};
  std::vector<TensorType> types;
  for (size_t i = 0; i < arg_kinds.size(); ++i) {
    a[i] = &kinds_[arg_kinds[i]];
    types.push_back({DType::kF32, a[i]->shape});
  }
  std::span<const Kind* const> args(a.data(), arg_kinds.size());
  if (!admissible(t, args)) return nullptr;
  Attrs attrs = t.attrs;
  if (t.op == Op::Conv2d) {
    int64_t cin = args[0]->shape[1], wcin = args[1]->shape[1];
    if (cin % wcin != 0) return nullptr;
    attrs.set(AttrKey::groups, cin / wcin);
  }
  if (t.op == Op::Split) {
    std::vector<int32_t> p = pieces(*args[0], static_cast<int>(t.attrs.i(AttrKey::axis)));
    int64_t last = p.back(), total = args[0]->shape[t.attrs.i(AttrKey::axis)];
    attrs.set(AttrKey::sizes, std::vector<int64_t>{total - last, last});
  }
  if (Status s = complete_attrs(t.op, &attrs); !s.ok()) return nullptr;
  Expected<std::vector<TensorType>> outs = infer_types(t.op, &attrs, types);
  if (!outs) return nullptr;
  auto app = std::make_unique<Applied>();
  app->node.op = t.op;
  app->node.attrs = std::move(attrs);
  app->node.outs = *outs;
  for (const Kind& k : out_segs(t, args, *outs)) app->out_kinds.push_back(intern(k));
  slot(tmpl, k0, k1) = static_cast<int>(applied_.size());
  applied_.push_back(std::move(app));
  return applied_.back().get();
}

int& KindTable::slot(int tmpl, int k0, int k1) {
  const int need = static_cast<int>(kinds_.size());
  if (need > capacity_) {
    int cap = std::max(64, capacity_);
    while (cap < need) cap *= 2;
    const int ops = static_cast<int>(set_.ops.size());
    std::vector<int32_t> grown(static_cast<size_t>(ops) * cap * cap, -2);
    for (int t = 0; t < ops; ++t)
      for (int a = 0; a < capacity_; ++a)
        for (int b = 0; b < capacity_; ++b)
          grown[(static_cast<size_t>(t) * cap + a) * cap + b] =
              dense_[(static_cast<size_t>(t) * capacity_ + a) * capacity_ + b];
    dense_.swap(grown);
    capacity_ = cap;
  }
  return dense_[(static_cast<size_t>(tmpl) * capacity_ + k0) * capacity_ + k1];
}

Code encode(const Program& p) {
  TSO_CHECK(p.ops.size() <= kMaxOps);
  Code c{};
  c[0] = static_cast<uint8_t>(p.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) {
    c[1 + 3 * i] = p.ops[i].tmpl;
    c[2 + 3 * i] = p.ops[i].args[0];
    c[3 + 3 * i] = p.ops[i].args[1];
  }
  return c;
}

Program decode(const Code& c) {
  Program p;
  for (int i = 0; i < c[0]; ++i) p.ops.push_back({c[1 + 3 * i], {c[2 + 3 * i], c[3 + 3 * i]}});
  return p;
}

uint64_t var_hash(int var) { return hash_mix(0x5eed0fa11ull, static_cast<uint64_t>(var) + 1); }

uint64_t op_hash(int tmpl, bool comm, std::span<const uint64_t> args) {
  std::array<uint64_t, 2> a{};
  std::copy(args.begin(), args.end(), a.begin());
  if (comm && args.size() == 2 && a[1] < a[0]) std::swap(a[0], a[1]);
  uint64_t h = hash_mix(0x0b5e55edull, static_cast<uint64_t>(tmpl) + 1);
  for (size_t i = 0; i < args.size(); ++i) h = hash_mix(h, a[i]);
  return hash_mix(h, args.size());
}

uint64_t output_hash(uint64_t op, int output) { return hash_mix(op, 0x100 + output); }

std::vector<uint64_t> tensor_hashes(const OpSet& set, const Program& p,
                                    std::span<const uint64_t> var_h) {
  std::vector<uint64_t> h(var_h.begin(), var_h.end());
  for (const ProgOp& op : p.ops) {
    const OpTemplate& t = set.ops[op.tmpl];
    std::array<uint64_t, 2> a{};
    for (int j = 0; j < t.arity; ++j) a[j] = h[op.args[j]];
    uint64_t oh = op_hash(op.tmpl, commutative(t), std::span(a.data(), t.arity));
    for (int o = 0; o < outputs_of(t); ++o) h.push_back(output_hash(oh, o));
  }
  return h;
}

Replayed replay(KindTable& table, const Program& p) {
  Replayed r;
  const OpSet& set = table.set();
  r.num_vars = static_cast<int>(set.vars.size());
  for (int v = 0; v < r.num_vars; ++v) {
    r.kind.push_back(table.var_kind(v));
    r.producer.push_back(-1);
    r.uses.push_back(0);
    r.shash.push_back(var_hash(v));
  }
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgOp& op = p.ops[i];
    const OpTemplate& t = set.ops[op.tmpl];
    std::array<int, 2> kinds{};
    std::array<uint64_t, 2> hashes{};
    for (int j = 0; j < t.arity; ++j) {
      int a = op.args[j];
      TSO_CHECK(a < static_cast<int>(r.kind.size()), "argument out of range");
      kinds[j] = r.kind[a];
      hashes[j] = r.shash[a];
      ++r.uses[a];
    }
    const Applied* app = table.apply(op.tmpl, std::span(kinds.data(), t.arity));
    TSO_CHECK(app != nullptr, "replayed program does not apply: " + t.text);
    uint64_t h = op_hash(op.tmpl, commutative(t), std::span(hashes.data(), t.arity));
    r.applied.push_back(app);
    r.op_args.emplace_back(op.args.begin(), op.args.begin() + t.arity);
    r.op_shash.push_back(h);
    r.op_outputs.emplace_back();
    for (size_t o = 0; o < app->out_kinds.size(); ++o) {
      r.op_outputs.back().push_back(static_cast<int>(r.kind.size()));
      r.kind.push_back(app->out_kinds[o]);
      r.producer.push_back(static_cast<int>(i));
      r.uses.push_back(0);
      r.shash.push_back(output_hash(h, static_cast<int>(o)));
    }
  }
  return r;
}

std::vector<int> live_tensors(const Replayed& r) {
  std::vector<int> out;
  for (size_t i = 0; i < r.kind.size(); ++i)
    if (r.uses[i] == 0) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> used_vars(const Replayed& r) {
  std::vector<int> out;
  for (int v = 0; v < r.num_vars; ++v)
    if (r.uses[v] > 0) out.push_back(v);
  return out;
}

}  // namespace tso::gen
