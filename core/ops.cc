#include "core/ops.h"

#include <array>

namespace tso {

namespace {

#define A(key) (uint64_t{1} << static_cast<int>(AttrKey::key))
constexpr OpInfo kOps[] = {
#define TSO_OP(id, name, min_inputs, max_inputs, outputs, kind, attrs) \
  {Op::id, name, min_inputs, max_inputs, outputs, OpKind::kind, uint64_t{attrs}},
#include "core/ops.def"
};
#undef A

static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps);
static_assert(kNumAttrKeys <= 64, "attribute masks are 64-bit");

constexpr bool ops_in_enum_order() {
  for (int i = 0; i < kNumOps; ++i)
    if (static_cast<int>(kOps[i].op) != i) return false;
  return true;
}
static_assert(ops_in_enum_order());

}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }

std::span<const OpInfo> all_ops() { return kOps; }

bool find_op(std::string_view name, Op* out) {
  for (const OpInfo& info : kOps) {
    if (info.name == name) {
      *out = info.op;
      return true;
    }
  }
  return false;
}

bool is_commutative(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Mul:
      return true;
    default:
      return false;
  }
}

}  // namespace tso
