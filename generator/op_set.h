// The generator's operator set: the symbolic input tensors graphs are built
// over and the operator templates the enumeration applies. It is a text file
// the user can edit (generator/taso.ops is TASO's set); the grammar is in
// generator/README.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/types.h"

namespace tso::gen {

// A symbolic input. Variables of the same kind and type form one renaming
// class: a rule and its renaming within a class are the same rule.
struct GenVar {
  std::string name;
  TensorType type;
  bool weight = false;  // weights never feed conv2d's data input
  int renaming_class = 0;
};

// One operator the enumeration applies: an operator with fixed attributes.
// Attributes that depend on the arguments (split sizes, conv groups) are
// derived when the template is applied. `bias` (written as a bare word in
// the op-set file): conv2d takes a third argument, its bias (x, w, b); add
// takes a vector broadcast along its first argument's last axis.
struct OpTemplate {
  std::string text;  // as written, normalized to single spaces (provenance, messages)
  Op op = Op::Add;
  Attrs attrs;
  int arity = 0;
  bool bias = false;
  std::vector<int64_t> conv_kernel;  // conv2d: the weight's [KH, KW]
};

struct LayoutLift {
  bool perm = false, concat_axis = false, split_axis = false;
  int rank_lo = 0, rank_hi = 0;  // 0: no `lift rank`
  friend bool operator==(const LayoutLift&, const LayoutLift&) = default;
};

struct OpSet {
  std::string name;
  // Rule names are PREFIX<N>_<index> (`prefix` line; "g" by default), so the
  // rules of different op sets' files never share a name.
  std::string rule_prefix = "g";
  std::vector<GenVar> vars;
  std::vector<OpTemplate> ops;
  // `lift conv2d ATTR...` (stride, pad, dilation, groups): each written rule
  // whose conv2d nodes agree on one of these attributes also gets a copy
  // with that attribute a parameter (generator/lift.h). Empty: no copies.
  std::vector<AttrKey> lift_conv2d;
  // `lift pool ATTR...` (kernel, stride, pad): the same for the avgpool and
  // maxpool nodes of a rule, their attributes parameters ?pk ?ps ?pp.
  std::vector<AttrKey> lift_pool;
  // `lift transpose perm`, `lift concat axis`, `lift split axis` and `lift
  // rank LO..HI` (required by the others): the lifted copy states a rule of
  // rank-generic operators (elementwise, transpose, concat, split, matmul)
  // for operands of every rank in LO..HI, with a transpose's permutation, a
  // concat's or split's axis a parameter (generator/lift.h).
  LayoutLift lift_layout;
};

// Errors read "FILE:LINE: message".
Expected<OpSet> parse_op_set(std::string_view text, std::string_view filename);
Expected<OpSet> load_op_set(const std::string& path);

// TASO's operator set in the source tree (generator/taso.ops), the default
// of `tso generate --ops` from any working directory.
std::string default_op_set_path();

}  // namespace tso::gen
