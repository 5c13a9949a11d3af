#include "frontend/resize_gather.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/node_chain.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_resize_by_gathers(NodeContext& ctx, const ResizePlan& p) {
  const TensorType& type = ctx.type(0);
  if (p.mode != "nearest" && !HostTensor::is_float(type.dtype))
    return opaque("a " + p.mode + " resize of " + std::string(dtype_name(type.dtype)));
  NodeChain chain(ctx);
  TensorRef x = chain.input(0);
  const int rank = type.shape.rank();
  for (int d = 0; d < rank; ++d) {
    const int64_t in = type.shape[d], out = p.out[d];
    if (out == in && p.scale[d] == 1.0) continue;
    std::vector<ResizeTaps> taps(out);
    size_t width = 0;
    for (int64_t o = 0; o < out; ++o) {
      taps[o] = resize_taps(p, ctx.node(), d, o, in);
      width = std::max(width, taps[o].size());
    }
    // The weights of one tap, broadcast along the axes after d.
    Shape weight_shape{out};
    for (int k = d + 1; k < rank; ++k) weight_shape.push_back(1);
    std::optional<TensorRef> sum;
    for (size_t k = 0; k < width; ++k) {
      HostTensor index = HostTensor::zeros(DType::kI64, Shape{out});
      std::vector<double> w(out, 0.0);  // fewer taps here (exclude_outside): weight 0
      for (int64_t o = 0; o < out; ++o)
        if (k < taps[o].size()) std::tie(index.i[o], w[o]) = taps[o][k];
      if (std::all_of(w.begin(), w.end(), [](double v) { return v == 0; })) continue;
      Attrs a;
      a.set(AttrKey::axis, int64_t{d});
      const std::string tap = "axis" + std::to_string(d) + "_tap" + std::to_string(k);
      TensorRef term = chain.op(Op::Gather, {x, ctx.new_weight(tap + "_index", index)}, a);
      // Nearest's taps weigh 1 (the only mode of integers and bools): no mul.
      if (!std::all_of(w.begin(), w.end(), [](double v) { return v == 1; })) {
        HostTensor weight = HostTensor::zeros(type.dtype, weight_shape);
        weight.f = std::move(w);
        term = chain.op(Op::Mul, {term, ctx.new_weight(tap + "_weight", weight)});
      }
      sum = sum ? chain.op(Op::Add, {*sum, term}) : term;
    }
    if (!sum) return opaque("a resize whose taps all weigh 0 along axis " + std::to_string(d));
    x = *sum;
  }
  return chain.result(x);
}

}  // namespace tso::onnx_frontend
