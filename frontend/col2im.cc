#include "frontend/col2im.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

// The most block elements mapped, each a term of several IR nodes (VOLO's
// blocks have 9): a larger block stays opaque rather than grow the graph.
constexpr int64_t kMaxTerms = 1024;

std::string list(const Ints& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The node's geometry, checked against its input's shape.
struct Col2ImPlan {
  int64_t batch = 0, channels = 0;
  Ints image, block, dilations, strides, pads;  // pads: begins, then ends
  Ints grid;                                    // block positions per spatial axis
};

// An Error message when the attributes or shapes are malformed; `unsupported`
// set when they are valid but the IR cannot hold the result.
Expected<Col2ImPlan> plan_col2im(NodeContext& ctx, std::string* unsupported) {
  const HostTensor* image = ctx.constant(1);
  const HostTensor* block = ctx.constant(2);
  if (!image || !block) {
    *unsupported = "an image or block shape that is not constant";
    return Col2ImPlan{};
  }
  Col2ImPlan p;
  p.image = host_to_ints(*image);
  p.block = host_to_ints(*block);
  const size_t n = p.image.size();
  if (n == 0 || p.block.size() != n)
    return Error{"has image shape " + list(p.image) + " and block shape " + list(p.block) +
                 ", which need one extent per spatial axis each"};
  const onnx::NodeProto& node = ctx.node();
  p.dilations = attr_ints(node, "dilations").value_or(Ints(n, 1));
  p.strides = attr_ints(node, "strides").value_or(Ints(n, 1));
  p.pads = attr_ints(node, "pads").value_or(Ints(2 * n, 0));
  if (p.dilations.size() != n || p.strides.size() != n || p.pads.size() != 2 * n)
    return Error{"has dilations " + list(p.dilations) + ", strides " + list(p.strides) +
                 " and pads " + list(p.pads) + " for " + std::to_string(n) + " spatial axes"};
  const Shape s = ctx.type(0).shape;
  if (s.rank() != 3)
    return Error{"has input " + to_string(ctx.type(0)) + "; Col2Im reads [N, C * block, L]"};
  int64_t block_elements = 1, blocks = 1;
  for (size_t d = 0; d < n; ++d) {
    if (p.image[d] < 1 || p.block[d] < 1 || p.dilations[d] < 1 || p.strides[d] < 1 ||
        p.pads[d] < 0 || p.pads[d + n] < 0)
      return Error{"has image shape " + list(p.image) + ", block shape " + list(p.block) +
                   ", dilations " + list(p.dilations) + ", strides " + list(p.strides) +
                   " and pads " + list(p.pads) +
                   ": extents, dilations and strides must be >= 1, "
                   "pads >= 0"};
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (p.image[d] > kMax || p.block[d] > kMax || p.dilations[d] > kMax || p.strides[d] > kMax ||
        p.pads[d] > kMax || p.pads[d + n] > kMax)
      return Error{"has an image, block, dilation, stride or pad extent above 2^31"};
    const int64_t padded = p.image[d] + p.pads[d] + p.pads[d + n];
    const int64_t span = p.dilations[d] * (p.block[d] - 1) + 1;
    if (span > padded)
      return Error{"has a block spanning " + std::to_string(span) + " on spatial axis " +
                   std::to_string(d) + ", more than the padded image's " + std::to_string(padded)};
    p.grid.push_back((padded - span) / p.strides[d] + 1);
    if (p.block[d] > s[1] / block_elements || p.grid.back() > s[2] / blocks) break;
    block_elements *= p.block[d];
    blocks *= p.grid.back();
  }
  if (p.grid.size() != n || s[1] % block_elements != 0 || blocks != s[2])
    return Error{"has input " + to_string(ctx.type(0)) + " for image shape " + list(p.image) +
                 " and block shape " + list(p.block) +
                 ": its channels must be a multiple of the block's elements and its last extent "
                 "the number of blocks the padded image holds"};
  if (2 + 2 * static_cast<int>(n) > Shape::kMaxRank)
    *unsupported = "more spatial axes than the IR's rank allows";
  else if (block_elements > kMaxTerms)
    *unsupported = "a block of more than " + std::to_string(kMaxTerms) + " elements";
  p.batch = s[0];
  p.channels = s[1] / block_elements;
  return p;
}

}  // namespace

Expected<Mapped> map_col2im(NodeContext& ctx) {
  std::string unsupported;
  Expected<Col2ImPlan> planned = plan_col2im(ctx, &unsupported);
  if (!planned) return planned.error();
  if (!unsupported.empty()) return opaque(unsupported);
  const Col2ImPlan& p = *planned;
  const int n = static_cast<int>(p.image.size());

  NodeChain c(ctx);
  auto slice = [&](TensorRef t, Ints starts, Ints ends, Ints axes) {
    if (axes.empty()) return t;
    Attrs a;
    a.set(AttrKey::steps, Ints(axes.size(), 1));
    a.set(AttrKey::starts, std::move(starts)).set(AttrKey::ends, std::move(ends));
    a.set(AttrKey::axes, std::move(axes));
    return c.op(Op::Slice, {t}, std::move(a));
  };
  auto pad = [&](TensorRef t, Ints pads) {
    bool any = false;
    for (int64_t v : pads) any |= v != 0;
    if (!any) return t;
    Attrs a;
    a.set(AttrKey::pads, std::move(pads)).set(AttrKey::value, 0.0);
    return c.op(Op::Pad, {t}, std::move(a));
  };

  // [N, C, block..., grid...]: one slice per block element.
  Ints unfolded = {p.batch, p.channels};
  unfolded.insert(unfolded.end(), p.block.begin(), p.block.end());
  unfolded.insert(unfolded.end(), p.grid.begin(), p.grid.end());
  const TensorRef columns = c.reshape(c.input(0), unfolded);

  bool strided = false;
  for (int64_t s : p.strides) strided |= s > 1;
  Ints spread_shape = {p.batch, p.channels};
  for (int d = 0; d < n; ++d) spread_shape.push_back(p.grid[d] * p.strides[d]);

  std::optional<TensorRef> sum;
  Ints element(n, 0);
  for (;;) {
    // The term of block element `element`: its extent along each spatial
    // axis once spread by the stride, and where it starts in the image.
    Ints starts, ends, axes, spread = {p.batch, p.channels};
    Ints spread_pads(2 * (2 + 2 * n), 0), crop_starts, crop_ends, crop_axes;
    Ints place(2 * (2 + n), 0);
    bool in_image = true;
    for (int d = 0; d < n; ++d) {
      if (p.block[d] > 1) {
        axes.push_back(2 + d);
        starts.push_back(element[d]);
        ends.push_back(element[d] + 1);
      }
      spread.insert(spread.end(), {p.grid[d], 1});
      spread_pads[2 + 2 * d + 1 + (2 + 2 * n)] = p.strides[d] - 1;
      const int64_t extent = p.grid[d] * p.strides[d];
      const int64_t begin = element[d] * p.dilations[d] - p.pads[d];
      const int64_t lo = std::max<int64_t>(-begin, 0);
      const int64_t hi = std::min<int64_t>(extent, p.image[d] - begin);
      if (hi <= lo) in_image = false;
      if (lo > 0 || hi < extent) {
        crop_axes.push_back(2 + d);
        crop_starts.push_back(lo);
        crop_ends.push_back(hi);
      }
      place[2 + d] = std::max<int64_t>(begin, 0);
      place[2 + d + (2 + n)] = p.image[d] - (begin + hi);
    }
    if (in_image) {
      TensorRef t = slice(columns, starts, ends, axes);
      if (strided) t = pad(c.reshape(t, spread), spread_pads);
      t = pad(slice(c.reshape(t, spread_shape), crop_starts, crop_ends, crop_axes), place);
      sum = sum ? c.op(Op::Add, {*sum, t}) : t;
    }
    int d = n - 1;
    for (; d >= 0; --d) {
      if (++element[d] < p.block[d]) break;
      element[d] = 0;
    }
    if (d < 0) break;
  }
  if (!sum) return opaque("blocks that lie wholly in the image padding");
  return c.result(*sum);
}

}  // namespace tso::onnx_frontend
