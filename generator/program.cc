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
// for which tensors an operator may take. `a` may be a prefix of a
// 3-argument template's arguments (admits_prefix): only those are checked.
bool admissible(const OpTemplate& t, std::span<const Kind* const> a) {
  switch (t.op) {
    case Op::Conv2d: {
      if (a[0]->source == Source::kWeight || a[0]->shape.rank() != 4 || a[1]->shape.rank() != 4)
        return false;
      if (a[1]->shape[2] != t.conv_kernel[0] || a[1]->shape[3] != t.conv_kernel[1]) return false;
      if (a[0]->shape[1] % a[1]->shape[1] != 0) return false;
      // The bias: one value per output channel.
      return a.size() < 3 || (a[2]->shape.rank() == 1 && a[2]->shape[0] == a[1]->shape[0]);
    }
    case Op::Enlarge: {
      if (a[0]->source == Source::kOp || a[0]->shape.rank() != 4) return false;
      const std::vector<int64_t>& k = t.attrs.ints(AttrKey::kernel);
      return k.size() == 2 && !(k[0] == a[0]->shape[2] && k[1] == a[0]->shape[3]);
    }
    case Op::Matmul: {
      const int r = a[0]->shape.rank();
      return (r == 2 || r == 3) && a[1]->shape.rank() == 2;
    }
    case Op::Add:
      if (t.bias) {  // a vector along the last axis
        const int r = a[0]->shape.rank();
        return r >= 2 && a[1]->shape.rank() == 1 && a[1]->shape[0] == a[0]->shape[r - 1];
      }
      return a[0]->shape == a[1]->shape;  // no broadcasting, as TASO
    case Op::Mul: return a[0]->shape == a[1]->shape;
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
      // A bias cut otherwise than the weight leaves the channels uncut.
      if (a.size() < 3 || a[2]->segs[0].n == 0 || a[2]->segs[0] == a[1]->segs[0])
        o.segs[1] = a[1]->segs[0];
      break;
    case Op::Matmul: {
      const int r = a[0]->shape.rank();
      for (int d = 0; d + 1 < r; ++d) o.segs[d] = a[0]->segs[d];
      o.segs[r - 1] = a[1]->segs[1];
      break;
    }
    case Op::Add:
      if (t.bias) {
        const int last = a[0]->shape.rank() - 1;
        o.segs = a[0]->segs;
        o.segs[last] = same_or_none(a[0]->segs[last], a[1]->segs[0]);
        break;
      }
      [[fallthrough]];
    case Op::Mul:
      for (int d = 0; d < kMaxRank; ++d) o.segs[d] = same_or_none(a[0]->segs[d], a[1]->segs[d]);
      break;
    case Op::ScalarMul:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Gelu:
    case Op::Clip:
      o.segs = a[0]->segs;
      break;
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

bool commutative(const OpTemplate& t) {
  return (t.op == Op::Add && !t.bias) || t.op == Op::Mul;
}

int max_arity(const OpSet& set) {
  int n = 0;
  for (const OpTemplate& t : set.ops) n = std::max(n, t.arity);
  return n;
}

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
  TSO_CHECK(arg_kinds.size() <= kMaxArgs);
  if (arg_kinds.size() == 3) {
    for (int k : arg_kinds) TSO_CHECK(k < (1 << 16), "too many kinds");
    const uint64_t key = uint64_t{static_cast<uint32_t>(tmpl)} << 48 |
                         uint64_t{static_cast<uint32_t>(arg_kinds[0])} << 32 |
                         uint64_t{static_cast<uint32_t>(arg_kinds[1])} << 16 |
                         static_cast<uint32_t>(arg_kinds[2]);
    auto it = ternary_.find(key);
    if (it == ternary_.end()) it = ternary_.emplace(key, compute(tmpl, arg_kinds)).first;
    return it->second < 0 ? nullptr : applied_[it->second].get();
  }
  const int k0 = arg_kinds.size() > 0 ? arg_kinds[0] : 0;
  const int k1 = arg_kinds.size() > 1 ? arg_kinds[1] : 0;
  if (int s = slot(tmpl, k0, k1); s != -2) return s < 0 ? nullptr : applied_[s].get();
  const int s = compute(tmpl, arg_kinds);
  slot(tmpl, k0, k1) = s;
  return s < 0 ? nullptr : applied_[s].get();
}

bool KindTable::admits_prefix(int tmpl, int k0, int k1) {
  const OpTemplate& t = set_.ops[tmpl];
  TSO_CHECK(t.arity == 3);
  if (int s = slot(tmpl, k0, k1); s != -2) return s == kPrefixOk;
  std::array<const Kind*, 2> a{&kinds_[k0], &kinds_[k1]};
  const bool ok = admissible(t, std::span<const Kind* const>(a.data(), 2));
  slot(tmpl, k0, k1) = ok ? kPrefixOk : -1;
  return ok;
}

int KindTable::compute(int tmpl, std::span<const int> arg_kinds) {
  const OpTemplate& t = set_.ops[tmpl];
  std::array<const Kind*, kMaxArgs> a{};
  std::vector<TensorType> types;
  for (size_t i = 0; i < arg_kinds.size(); ++i) {
    a[i] = &kinds_[arg_kinds[i]];
    types.push_back({DType::kF32, a[i]->shape});
  }
  std::span<const Kind* const> args(a.data(), arg_kinds.size());
  if (!admissible(t, args)) return -1;
  Attrs attrs = t.attrs;
  if (t.op == Op::Conv2d) attrs.set(AttrKey::groups, args[0]->shape[1] / args[1]->shape[1]);
  if (t.op == Op::Split) {
    std::vector<int32_t> p = pieces(*args[0], static_cast<int>(t.attrs.i(AttrKey::axis)));
    int64_t last = p.back(), total = args[0]->shape[t.attrs.i(AttrKey::axis)];
    attrs.set(AttrKey::sizes, std::vector<int64_t>{total - last, last});
  }
  if (Status s = complete_attrs(t.op, &attrs); !s.ok()) return -1;
  Expected<std::vector<TensorType>> outs = infer_types(t.op, &attrs, types);
  if (!outs) return -1;
  auto app = std::make_unique<Applied>();
  app->node.op = t.op;
  app->node.attrs = std::move(attrs);
  app->node.outs = *outs;
  for (const Kind& k : out_segs(t, args, *outs)) app->out_kinds.push_back(intern(k));
  applied_.push_back(std::move(app));
  return static_cast<int>(applied_.size()) - 1;
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

Code encode(const OpSet& set, const Program& p) {
  Code c{};
  c[0] = static_cast<uint8_t>(p.ops.size());
  size_t at = 1;
  for (const ProgOp& op : p.ops) {
    const int arity = set.ops[op.tmpl].arity;
    // Arity-0 and -1 templates keep three bytes, as in the fixed layout.
    const int n = std::max(arity, 2);
    TSO_CHECK(at + 1 + n <= c.size(), "program too long for a record");
    c[at++] = op.tmpl;
    for (int j = 0; j < n; ++j) c[at++] = op.args[j];
  }
  return c;
}

Program decode(const OpSet& set, const Code& c) {
  Program p;
  size_t at = 1;
  for (int i = 0; i < c[0]; ++i) {
    ProgOp op;
    op.tmpl = c[at++];
    const int n = std::max(set.ops[op.tmpl].arity, 2);
    for (int j = 0; j < n; ++j) op.args[j] = c[at++];
    p.ops.push_back(op);
  }
  return p;
}

int max_ops_for(const OpSet& set) {
  return std::min<int>(kMaxOps, (std::tuple_size_v<Code> - 1) / (1 + std::max(max_arity(set), 2)));
}

uint64_t var_hash(int var) { return hash_mix(0x5eed0fa11ull, static_cast<uint64_t>(var) + 1); }

uint64_t op_hash(int tmpl, bool comm, std::span<const uint64_t> args) {
  std::array<uint64_t, kMaxArgs> a{};
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
    std::array<uint64_t, kMaxArgs> a{};
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
    std::array<int, kMaxArgs> kinds{};
    std::array<uint64_t, kMaxArgs> hashes{};
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
