#include "frontend/pad_modes.h"

#include <string>

#include "frontend/node_chain.h"

namespace tso::onnx_frontend {

namespace {

// Each padded axis needs an index constant of its output extent: a pad past
// 2^24 elements (no image axis is so long; a hostile node's pads can ask for
// 2^60) leaves the node opaque rather than allocate it.
constexpr int64_t kMaxPaddedExtent = int64_t{1} << 24;

}  // namespace

int64_t padded_source(std::string_view mode, int64_t o, int64_t begin, int64_t n) {
  const int64_t j = o - begin;
  if (j >= 0 && j < n) return j;
  if (mode == "edge") return j < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((j % n) + n) % n;
  if (n == 1) return 0;  // reflect: a single element mirrors onto itself
  const int64_t period = 2 * (n - 1), k = ((j % period) + period) % period;
  return k < n ? k : period - k;
}

Expected<Mapped> pad_by_gathers(NodeContext& ctx, TensorRef x, std::string_view mode,
                                const std::vector<int64_t>& pads) {
  const Shape s = ctx.builder().type(x).shape;
  const int rank = s.rank();
  NodeChain chain(ctx);
  for (int d = 0; d < rank; ++d) {
    const int64_t begin = pads[d], end = pads[d + rank];
    if (begin == 0 && end == 0) continue;
    if (s[d] == 0)
      return Error{"pads axis " + std::to_string(d) + " of 0 elements in " + std::string(mode) +
                   " mode (nothing to copy)"};
    if (begin > kMaxPaddedExtent || end > kMaxPaddedExtent || s[d] + begin + end > kMaxPaddedExtent)
      return opaque("an axis padded to more than 2^24 elements in " + std::string(mode) + " mode");
    const int64_t out = s[d] + begin + end;
    HostTensor index = HostTensor::zeros(DType::kI64, Shape{out});
    for (int64_t o = 0; o < out; ++o) index.i[o] = padded_source(mode, o, begin, s[d]);
    Attrs a;
    a.set(AttrKey::axis, int64_t{d});
    x = chain.op(Op::Gather, {x, ctx.new_weight("axis" + std::to_string(d) + "_source", index)},
                 std::move(a));
  }
  return chain.result(x);
}

}  // namespace tso::onnx_frontend
