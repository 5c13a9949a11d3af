#include "frontend/lrn.h"

#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_lrn(NodeContext& ctx) {
  const TensorType& type = ctx.type(0);
  const Shape& s = type.shape;
  if (!HostTensor::is_float(type.dtype))
    return Error{"normalizes " + to_string(type) + " (floating-point only)"};
  if (s.rank() < 2)
    return Error{"needs an input of rank 2 or more (N, C, ...), got " + to_string(type)};
  const int64_t size = attr_int(ctx.node(), "size", 0);
  if (size < 1) return Error{"needs a size of 1 or more, got " + std::to_string(size)};
  int64_t inner = 1;
  for (int d = 2; d < s.rank(); ++d) inner *= s[d];
  const int64_t below = (size - 1) / 2, above = size - 1 - below;

  NodeChain chain(ctx);
  const TensorRef x = chain.input(0);
  const TensorRef squares = chain.reshape(chain.op(Op::Mul, {x, x}), {s[0], 1, s[1], inner});
  Attrs pool;
  pool.set(AttrKey::kernel, std::vector<int64_t>{size, 1});
  pool.set(AttrKey::stride, std::vector<int64_t>{1, 1});
  pool.set(AttrKey::pad, Padding{Padding::kExplicit, {below, 0, above, 0}});
  pool.set(AttrKey::count_include_pad, int64_t{1});
  const TensorRef mean = chain.op(Op::AvgPool, {squares}, std::move(pool));
  const TensorRef window = chain.reshape(mean, std::vector<int64_t>(s.begin(), s.end()));
  const TensorRef scaled =
      chain.op(Op::Mul, {window, chain.scalar("alpha", attr_float(ctx.node(), "alpha", 1e-4f))});
  const TensorRef base =
      chain.op(Op::Add, {scaled, chain.scalar("bias", attr_float(ctx.node(), "bias", 1.0f))});
  const TensorRef denominator =
      chain.op(Op::Pow, {base, chain.scalar("beta", attr_float(ctx.node(), "beta", 0.75f))});
  return chain.result(chain.op(Op::Div, {x, denominator}));
}

}  // namespace tso::onnx_frontend
