// Internal to generator/: the compact form of an enumerated graph and the
// application of operator templates to typed tensors.
//
// A Program is a sequence of template applications over the operator set's
// variables. Tensors are numbered: variables 0..V-1, then each operator's
// outputs in order. Graphs are kept in this form (a few bytes) during
// enumeration; a core Graph is built only for candidates.
//
// Split info. As in TASO, a tensor remembers, per axis, the pieces a concat
// joined along it (conv2d carries its weight's output-channel pieces to its
// channel axis, matmul its operands' outer pieces, ...); split cuts a tensor
// at its last recorded boundary. So split sizes are a function of the
// arguments, and so are conv2d groups (C_in / the weight's C_in).
//
// Arity. Templates take 0..3 arguments: a biased conv2d takes (x, w, b).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "generator/op_set.h"

namespace tso::gen {

constexpr int kMaxOps = 6;
constexpr int kMaxSegs = 6;
constexpr int kMaxRank = 4;
constexpr int kMaxArgs = 3;

// Pieces recorded along one axis; n == 0: none.
struct Segs {
  uint8_t n = 0;
  std::array<int32_t, kMaxSegs> size{};
  friend bool operator==(const Segs&, const Segs&) = default;
};

enum class Source : uint8_t { kOp, kInput, kWeight };

// Everything the applicability of a template depends on.
struct Kind {
  Shape shape;
  std::array<Segs, kMaxRank> segs{};
  Source source = Source::kOp;
  friend bool operator==(const Kind&, const Kind&) = default;
};

// A template applied to argument kinds: the node (operator and complete
// attributes) and the kinds of its outputs.
struct Applied {
  Node node;
  std::vector<int> out_kinds;
};

// Interns kinds and caches template applications. Not thread-safe: one per
// thread.
class KindTable {
 public:
  explicit KindTable(const OpSet& set);
  int intern(const Kind& k);
  const Kind& kind(int id) const { return kinds_[id]; }
  int var_kind(int var) const { return var_kinds_[var]; }
  // nullptr when the template does not apply to these arguments.
  const Applied* apply(int tmpl, std::span<const int> arg_kinds);
  // `apply` for the enumeration's inner loop (arity <= 2): a table lookup
  // once computed.
  const Applied* apply2(int tmpl, int arity, int k0, int k1) {
    if (k0 < capacity_ && k1 < capacity_) {
      int s = dense_[(static_cast<size_t>(tmpl) * capacity_ + k0) * capacity_ + k1];
      if (s != -2) return s < 0 ? nullptr : applied_[s].get();
    }
    std::array<int, 2> k{k0, k1};
    return apply(tmpl, std::span(k.data(), arity));
  }
  // For a 3-argument template: whether its first two arguments may have
  // these kinds (some third argument could then complete it). The
  // enumeration probes the third argument only after this holds.
  bool admits_prefix(int tmpl, int k0, int k1);
  const OpSet& set() const { return set_; }

 private:
  const OpSet& set_;
  std::vector<Kind> kinds_;
  std::unordered_map<uint64_t, std::vector<int>> index_;
  std::vector<int> var_kinds_;
  // (tmpl, kind0, kind1) -> applied index, -1 (does not apply) or -2 (not
  // yet computed); dense, since it sits in the enumeration's inner loop.
  // For a 3-argument template the slot says whether the prefix admits
  // (kPrefixOk or -1), and the applications sit in `ternary_`.
  static constexpr int kPrefixOk = -3;
  int& slot(int tmpl, int k0, int k1);
  // The application's index in applied_, or -1.
  int compute(int tmpl, std::span<const int> arg_kinds);
  int capacity_ = 0;
  std::vector<int32_t> dense_;
  std::unordered_map<uint64_t, int> ternary_;
  std::vector<std::unique_ptr<Applied>> applied_;
};

struct ProgOp {
  uint8_t tmpl = 0;
  std::array<uint8_t, kMaxArgs> args{};
  friend bool operator==(const ProgOp&, const ProgOp&) = default;
};

struct Program {
  std::vector<ProgOp> ops;
  friend bool operator==(const Program&, const Program&) = default;
};

// Fixed-size encoding: [ops, (tmpl, its arguments) per op], zero-padded, so
// a record is 32 bytes. Programs with fewer operators order first; two
// programs compare as their operators do in order (equal templates take
// equal byte counts), so for templates of arity <= 2 the order is the one
// of three bytes per operator. Holds kMaxOps operators of arity <= 2, and
// max_ops_for(set) operators in general.
using Code = std::array<uint8_t, 24>;
Code encode(const OpSet& set, const Program& p);
Program decode(const OpSet& set, const Code& c);
int max_ops_for(const OpSet& set);

// Structural hashes: a variable by its index, an operator output by its
// template, the hashes of its arguments (sorted for commutative operators)
// and its output index. Equal hashes mean the same expression, whatever the
// order the operators were applied in.
uint64_t var_hash(int var);
uint64_t op_hash(int tmpl, bool commutative, std::span<const uint64_t> arg_hashes);
uint64_t output_hash(uint64_t op, int output);
bool commutative(const OpTemplate& t);
int max_arity(const OpSet& set);

// The number of outputs of a template (split is two-way, as in TASO).
inline int outputs_of(const OpTemplate& t) { return t.op == Op::Split ? 2 : 1; }

// Structural hashes of every tensor of `p`, variable v hashed as var_h[v]
// (var_hash(v) for the program itself; other values to rename variables).
std::vector<uint64_t> tensor_hashes(const OpSet& set, const Program& p,
                                    std::span<const uint64_t> var_h);

// A program replayed over kinds: per tensor its kind, producer and
// structural hash; per operator its application.
struct Replayed {
  int num_vars = 0;
  std::vector<int> kind;
  std::vector<int> producer;  // operator index, -1 for variables
  std::vector<int> uses;
  std::vector<uint64_t> shash;
  std::vector<std::vector<int>> op_args;
  std::vector<std::vector<int>> op_outputs;
  std::vector<uint64_t> op_shash;
  std::vector<const Applied*> applied;
};

// TSO_CHECKs that the program is valid (it came from the enumeration).
Replayed replay(KindTable& table, const Program& p);
// Unused variables and unconsumed operator outputs, in tensor order.
std::vector<int> live_tensors(const Replayed& r);
// Variables an operator of the program reads.
std::vector<int> used_vars(const Replayed& r);

}  // namespace tso::gen
