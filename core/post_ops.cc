#include "core/post_ops.h"

#include "core/quantized.h"

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

bool transpose_written_by_product(const Graph& g, int t, int readers, bool is_output,
                                  bool right_weight_only) {
  const Node& n = g.node(t);
  if (n.op != Op::Transpose || n.args[0].output != 0) return false;
  const Node& m = g.node(n.args[0].node);
  if (m.op != Op::Matmul || readers != 1 || is_output || right_weight_only || runs_int8(g, m))
    return false;
  const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);
  const TensorType& a = g.type(m.args[0]);
  const TensorType& b = g.type(m.args[1]);
  // Operands of the result's rank (no rank-1 operand, whose dimension the
  // result drops), all f32.
  const int rank = m.outs[0].shape.rank();
  return rank >= 3 && a.shape.rank() == rank && b.shape.rank() == rank &&
         a.dtype == DType::kF32 && b.dtype == DType::kF32 && !perm.empty() &&
         perm.back() == rank - 1;
}

bool transpose_read_by_products(const Graph& g, int t, std::span<const int> readers,
                                bool is_output, std::span<const char> weight_only) {
  const Node& n = g.node(t);
  if (n.op != Op::Transpose || is_output || readers.empty()) return false;
  const int rank = n.outs[0].shape.rank();
  const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);
  if (rank < 3 || n.outs[0].dtype != DType::kF32 || static_cast<int>(perm.size()) != rank ||
      (perm[rank - 1] != rank - 1 && perm[rank - 2] != rank - 1))
    return false;
  for (int r : readers) {
    const Node& m = g.node(r);
    if (m.op != Op::Matmul || runs_int8(g, m) || weight_only[m.args[1].node]) return false;
    for (const TensorRef& a : m.args) {
      const TensorType& type = g.type(a);
      if (type.dtype != DType::kF32 || type.shape.rank() != m.outs[0].shape.rank()) return false;
    }
  }
  return true;
}

}  // namespace tso
