// The Z3 vocabulary of the operator specifications: one uninterpreted sort
// `T` for tensors and one uninterpreted function per operator of
// core/ops.def (derived from the X-macro table, never listed by hand). Axiom
// files (specs/*.smt2) and the verifier's rule translation both speak it.
//
// Signature of an operator's function: its attributes in AttrKey order (the
// order of the TSO_ATTR lines of ops.def),
// each encoded by type, then its tensor arguments.
//   Int, Act        -> Int  (Act: none 0, relu 1, sigmoid 2, tanh 3, gelu 4)
//   Float           -> Real
//   Ints            -> (Seq Int)
//   Pad             -> (Seq Int) [mode, top, left, bottom, right], mode valid 0,
//                      same 1, explicit 2 (valid has zero pads)
// Two operators carry shape information their laws need instead of (or
// beside) attributes:
//   concat  (concat axis rank n0 n1 x y): exactly two tensors, n0 and n1 their
//           extents along `axis`, rank their rank; n-ary concats nest to the left.
//   split   (split axis total offset length x): one result of a split, the
//           `length` elements from `offset` along `axis` of x, whose extent is
//           `total`.
// An operator with optional inputs gets one function per input count: the
// name for the fewest inputs, `name.N` for N inputs (conv2d.3 has a bias).
// Fused clip. conv2d, matmul and gemm take an activation and, for act =
// clip only, its bounds min and max. Their function `name` takes the
// activation and not the bounds, which are the defaults for every other
// activation; a second function `name_clip` (`conv2d_clip.3`, ...) takes the
// bounds (Real, in place of the activation) and means the result clipped to
// them: one parameterized symbol for every pair of bounds.
// Graph inputs and weights are tensor variables, not functions; operators with
// string attributes (opaque, cast) have no function.
//
// Two shape functions let axioms state preconditions: (rank x) and (dim x i),
// the extent of axis i. The verifier asserts them for every tensor of a rule;
// for a term an axiom creates they are unknown, so a guard on them holds only
// of tensors whose shape is known.
#pragma once

#include <z3++.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/attrs.h"
#include "core/ops.h"

namespace tso::specs {

struct OpFunction {
  enum class Shape : uint8_t { kPlain, kConcat, kSplit };
  Op op;
  int inputs = 0;
  Shape shape = Shape::kPlain;
  bool fused_clip = false;  // `name_clip`: the bounds in place of the activation
  std::string name;
  // Attributes encoded as leading parameters, in order (split: axis only; its
  // total, offset and length follow; concat: axis, then rank, n0, n1).
  std::vector<AttrKey> attrs;
  z3::func_decl decl;
};

// One table per z3::context.
class OpFunctions {
 public:
  explicit OpFunctions(z3::context& ctx);

  z3::context& ctx() const { return *ctx_; }
  const z3::sort& tensor() const { return tensor_; }
  const z3::sort& ints() const { return ints_; }  // (Seq Int)
  const std::vector<OpFunction>& all() const { return fns_; }
  // The function of `op` applied to `inputs` tensors (concat: 2), its
  // `name_clip` form when `fused_clip`; null if none.
  const OpFunction* find(Op op, int inputs, bool fused_clip = false) const;
  const OpFunction* find(std::string_view name) const;
  const z3::func_decl& rank() const { return rank_; }
  const z3::func_decl& dim() const { return dim_; }

  // For Z3's SMT-LIB2 parser: the sort T, every operator function, rank and dim.
  z3::sort_vector sorts() const;
  z3::func_decl_vector decls() const;

  // The Z3 sort that encodes an attribute of type `t`.
  z3::sort attr_sort(AttrType t) const;

 private:
  z3::context* ctx_;
  z3::sort tensor_;
  z3::sort ints_;
  std::vector<OpFunction> fns_;
  z3::func_decl rank_;
  z3::func_decl dim_;
};

// Encodes `v` (an attribute value of type `t`) as a Z3 term of attr_sort(t).
z3::expr encode_attr(z3::context& ctx, AttrType t, const AttrValue& v);
// A (Seq Int) literal.
z3::expr int_seq(z3::context& ctx, const std::vector<z3::expr>& items);

}  // namespace tso::specs
