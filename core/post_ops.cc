#include "core/post_ops.h"

namespace tso {

bool is_post_op_anchor(Op op) { return op == Op::Conv2d || op == Op::Matmul || op == Op::Gemm; }

bool is_unary_post_op(Op op) {
  switch (op) {
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Clip:
    case Op::Gelu:
    case Op::Exp:
    case Op::Sqrt:
    case Op::Neg:
    case Op::LeakyRelu:
    case Op::Softplus:
    case Op::Log:
    case Op::Abs:
      return true;
    default:
      return false;
  }
}

bool post_op_operand_fits(Op anchor, const Shape& other, const Shape& out) {
  if (other.rank() > out.rank()) return false;
  if (other.numel() == 1 || other == out) return true;
  const int lead = out.rank() - other.rank();
  int spans = -1;
  for (int d = 0; d < other.rank(); ++d) {
    if (other[d] == 1) continue;
    if (other[d] != out[lead + d] || spans >= 0) return false;
    spans = lead + d;
  }
  return anchor == Op::Conv2d ? spans == 1 : spans == out.rank() - 1;
}

}  // namespace tso
