#include "frontend/import_composite.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

bool float_input(NodeContext& ctx) { return HostTensor::is_float(ctx.type(0).dtype); }

}  // namespace

Expected<Mapped> map_gelu(NodeContext& ctx) {
  const std::string approximate = attr_string(ctx.node(), "approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return Error{"has approximate '" + approximate + "' (none or tanh)"};
  if (!float_input(ctx)) return opaque("a Gelu of integers");
  NodeChain c(ctx);
  const TensorRef x = c.input(0);
  if (approximate == "none") return c.result(c.op(Op::Gelu, {x}));
  const TensorRef cube = c.op(Op::Mul, {c.op(Op::Mul, {x, x}), x});
  const TensorRef inner = c.op(Op::Add, {x, c.op(Op::Mul, {cube, c.scalar("cubic", 0.044715)})});
  const double k = std::sqrt(2.0 / std::numbers::pi);
  const TensorRef gate = c.op(Op::Tanh, {c.op(Op::Mul, {inner, c.scalar("sqrt_2_over_pi", k)})});
  const TensorRef half = c.op(Op::Mul, {x, c.scalar("half", 0.5)});
  return c.result(c.op(Op::Mul, {half, c.op(Op::Add, {gate, c.scalar("one", 1.0)})}));
}

Expected<Mapped> map_swish(NodeContext& ctx) {
  if (!float_input(ctx)) return opaque("a Swish of integers");
  const float alpha = attr_float(ctx.node(), "alpha", 1.0f);
  if (!std::isfinite(alpha)) return Error{"has alpha " + std::to_string(alpha) + ", not finite"};
  NodeChain c(ctx);
  const TensorRef x = c.input(0);
  const TensorRef arg = alpha == 1.0f ? x : c.op(Op::Mul, {x, c.scalar("alpha", alpha)});
  return c.result(c.op(Op::Mul, {x, c.op(Op::Sigmoid, {arg})}));
}

Expected<Mapped> map_rms_norm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() != 2) return Error{"needs 2 inputs"};
  if (!float_input(ctx)) return Error{"needs a float input, got " + to_string(ctx.type(0))};
  const int rank = ctx.type(0).shape.rank();
  int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return Error{"has axis " + std::to_string(attr_int(n, "axis", -1)) + " for " +
                 to_string(ctx.type(0))};
  const float epsilon = attr_float(n, "epsilon", 1e-5f);
  if (!std::isfinite(epsilon) || epsilon < 0)
    return Error{"has epsilon " + std::to_string(epsilon) + "; it must be finite and >= 0"};
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  Attrs mean;
  mean.set(AttrKey::axes, axes).set(AttrKey::keepdims, int64_t{1});
  NodeChain c(ctx);
  const TensorRef x = c.input(0), scale = c.input(1);
  const TensorRef mean_square = c.op(Op::ReduceMean, {c.op(Op::Mul, {x, x})}, std::move(mean));
  const TensorRef rms =
      c.op(Op::Sqrt, {c.op(Op::Add, {mean_square, c.scalar("epsilon", epsilon)})});
  return c.result(c.op(Op::Mul, {c.op(Op::Div, {x, rms}), scale}));
}

}  // namespace tso::onnx_frontend
