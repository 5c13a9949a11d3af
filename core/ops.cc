#include "core/ops.h"

#include <algorithm>
#include <array>
#include <vector>

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

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace tso
