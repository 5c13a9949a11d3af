#include "frontend/depth_space.h"

#include <string>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_depth_space(NodeContext& ctx) {
  const Shape& x = ctx.type(0).shape;
  if (x.rank() != 4) return Error{"needs an input of rank 4, got " + to_string(ctx.type(0))};
  const int64_t b = attr_int(ctx.node(), "blocksize", 0);
  if (b < 1) return Error{"needs a blocksize of 1 or more, got " + std::to_string(b)};
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  NodeChain chain(ctx);
  const TensorRef in = chain.input(0);
  if (ctx.node().op_type() == "SpaceToDepth") {
    if (h % b != 0 || w % b != 0)
      return Error{"needs a height and width divisible by the blocksize " + std::to_string(b) +
                   ", got " + to_string(ctx.type(0))};
    const TensorRef blocks = chain.reshape(in, {n, c, h / b, b, w / b, b});
    const TensorRef moved = chain.op(Op::Transpose, blocks, AttrKey::perm, {0, 3, 5, 1, 2, 4});
    return chain.result(chain.reshape(moved, {n, c * b * b, h / b, w / b}));
  }
  if (c % (b * b) != 0)
    return Error{"needs channels divisible by the blocksize squared (" + std::to_string(b * b) +
                 "), got " + to_string(ctx.type(0))};
  const std::string mode = attr_string(ctx.node(), "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return Error{"has mode '" + mode + "' (DCR or CRD)"};
  const int64_t depth = c / (b * b);
  // DCR: channel (i b + j) depth + k; CRD: channel k b^2 + i b + j.
  const bool dcr = mode == "DCR";
  const TensorRef blocks =
      dcr ? chain.reshape(in, {n, b, b, depth, h, w}) : chain.reshape(in, {n, depth, b, b, h, w});
  const TensorRef moved = chain.op(
      Op::Transpose, blocks, AttrKey::perm,
      dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3});
  return chain.result(chain.reshape(moved, {n, depth, h * b, w * b}));
}

}  // namespace tso::onnx_frontend
