// The dispatch table: one switch over Op with no default, so the compiler
// flags a new operator (-Wswitch), and a static_assert over the X-macro list
// of core/ops.def that every operator maps to a family.
#include "runtime/cuda/dispatch.h"

namespace tso::cuda {
namespace {

constexpr Kernel kNoKernel = static_cast<Kernel>(255);

constexpr Kernel family(Op op) {
  switch (op) {
    case Op::Input:
    case Op::Weight:
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool: return Kernel::kSource;
    case Op::Conv2d: return Kernel::kConv;
    case Op::Matmul: return Kernel::kMatmul;
    case Op::Gemm: return Kernel::kGemm;
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Erf:
    case Op::Gelu:
    case Op::Clip:
    case Op::Sqrt:
    case Op::Neg:
    case Op::Exp:
    case Op::LeakyRelu:
    case Op::Softplus:
    case Op::Log:
    case Op::Abs:
    case Op::Sin:
    case Op::Cos: return Kernel::kUnary;
    case Op::Add:
    case Op::Mul:
    case Op::ScalarMul:
    case Op::Sub:
    case Op::Div:
    case Op::Pow:
    case Op::Max:
    case Op::Min: return Kernel::kBinary;
    case Op::IsNaN: return Kernel::kIsNaN;
    case Op::Where: return Kernel::kWhere;
    case Op::BatchNorm: return Kernel::kBatchNorm;
    case Op::Softmax:
    case Op::LogSoftmax: return Kernel::kSoftmax;
    case Op::LayerNorm: return Kernel::kLayerNorm;
    case Op::ReduceMean:
    case Op::GlobalAvgPool: return Kernel::kReduceMean;
    case Op::AvgPool:
    case Op::MaxPool: return Kernel::kPool;
    case Op::Transpose:
    case Op::Slice:
    case Op::Enlarge: return Kernel::kCopy;
    case Op::Pad: return Kernel::kPad;
    case Op::Concat: return Kernel::kConcat;
    case Op::UpdateSlice:
      return Kernel::kUpdateSlice;
    case Op::Split:
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze: return Kernel::kView;
    case Op::Gather:
    case Op::GatherElements:
    case Op::Expand:
    case Op::Cast:
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
    case Op::Not:
    case Op::And:
    case Op::Or:
    case Op::CumSum:
    case Op::ArgMax:
    case Op::TopK:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::GridSample:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2:
    case Op::Opaque: return Kernel::kUnsupported;
  }
  return kNoKernel;
}

#define TSO_OP(id, name, min_inputs, max_inputs, outputs, kind, attrs)         \
  static_assert(family(Op::id) != kNoKernel, "ops.def operator " name          \
                                             " has no CUDA kernel family");
#include "core/ops.def"

}  // namespace

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::kSource: return "source";
    case Kernel::kConv: return "cudnn_conv";
    case Kernel::kMatmul: return "cublaslt_matmul";
    case Kernel::kGemm: return "cublaslt_gemm";
    case Kernel::kUnary: return "unary";
    case Kernel::kBinary: return "binary";
    case Kernel::kIsNaN: return "isnan";
    case Kernel::kWhere: return "where";
    case Kernel::kBatchNorm: return "batchnorm";
    case Kernel::kSoftmax: return "softmax";
    case Kernel::kLayerNorm: return "layernorm";
    case Kernel::kReduceMean: return "reduce_mean";
    case Kernel::kPool: return "pool";
    case Kernel::kCopy: return "strided_copy";
    case Kernel::kPad: return "pad";
    case Kernel::kConcat: return "concat";
    case Kernel::kUpdateSlice:
      return "update_slice";
    case Kernel::kView: return "view";
    case Kernel::kUnsupported: return "unsupported";
  }
  return "?";
}

Kernel kernel_for(Op op) { return family(op); }

Expected<Kernel> kernel_for_node(const Graph& g, int index) {
  const Node& n = g.node(index);
  Kernel k = family(n.op);
  if (k == Kernel::kUnsupported && n.op != Op::Opaque)
    return Error{describe_node(g, index) + ": the CUDA runtime has no " +
                 std::string(op_name(n.op)) +
                 " kernel (the CPU runtime and the reference executor run it)"};
  if (k == Kernel::kUnsupported) {
    const AttrValue* t = n.attrs.find(AttrKey::op_type);
    std::string op_type = t ? std::get<std::string>(*t) : "?";
    return Error{describe_node(g, index) + ": the CUDA runtime cannot run opaque operator '" +
                 op_type + "' (not in the tso IR)"};
  }
  return k;
}

}  // namespace tso::cuda
