#include "frontend/quantize.h"

#include <string>

#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_quantize(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const bool quantize = n.op_type() == "QuantizeLinear";
  if (n.input_size() < 2) return Error{"needs at least 2 inputs"};
  if (attr_int(n, "block_size", 0) != 0) return opaque("blocked quantization");
  const TensorType x = ctx.type(0), scale = ctx.type(1);
  if (scale.dtype != DType::kF32) return opaque("a scale of " + to_string(scale));
  const bool has_zero = ctx.has_input(2);
  DType q = quantize ? DType::kU8 : x.dtype;  // the quantized element type
  if (has_zero) {
    q = ctx.type(2).dtype;
  } else if (quantize) {
    const int64_t out = attr_int(n, "output_dtype", 0);
    if (out == onnx::TensorProto::INT8)
      q = DType::kI8;
    else if (out != 0 && out != onnx::TensorProto::UINT8)
      return opaque("a quantization to ONNX type " + std::to_string(out));
  }
  if (quantize) {
    if (x.dtype != DType::kF32) return opaque("a quantization of " + to_string(x));
    if (q != DType::kU8 && q != DType::kI8)
      return opaque("a quantization to " + std::string(dtype_name(q)));
  } else {
    if (x.dtype != DType::kU8 && x.dtype != DType::kI8 && x.dtype != DType::kI32)
      return opaque("a dequantization of " + to_string(x));
    const int64_t out = attr_int(n, "output_dtype", 0);
    if (out != 0 && out != onnx::TensorProto::FLOAT)
      return opaque("a dequantization to ONNX type " + std::to_string(out));
  }
  std::vector<TensorRef> args;
  for (int k = 0; k < 2 + has_zero; ++k) {
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    args.push_back(*t);
  }
  if (!has_zero) args.push_back(ctx.new_weight("zero_point", HostTensor::zeros(q, scale.shape)));
  Attrs a;
  a.set(AttrKey::axis, attr_int(n, "axis", 1));
  return add_one(ctx, quantize ? Op::QuantizeLinear : Op::DequantizeLinear, std::move(args),
                 std::move(a));
}

}  // namespace tso::onnx_frontend
