#include "frontend/conv3d.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

constexpr int64_t kMaxTemporalTaps = 64;

// One axis of a window operator: its window, and the padding that gives
// `out` windows (ONNX's auto_pad or pads, ceil_mode's last window).
struct Axis {
  int64_t kernel = 1, stride = 1, dilation = 1, begin = 0, end = 0, out = 0;
  int64_t extent() const { return (kernel - 1) * dilation + 1; }
};

Expected<std::vector<Axis>> window_axes(const onnx::NodeProto& n, const Shape& x,
                                        const Ints& kernel, bool ceil_mode) {
  const Ints strides = attr_ints(n, "strides").value_or(Ints{1, 1, 1});
  const Ints dilations = attr_ints(n, "dilations").value_or(Ints{1, 1, 1});
  const Ints pads = attr_ints(n, "pads").value_or(Ints(6, 0));
  if (kernel.size() != 3 || strides.size() != 3 || dilations.size() != 3 || pads.size() != 6)
    return Error{"needs a kernel, strides and dilations of 3 values and 6 pads"};
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    return Error{"has an unknown auto_pad '" + auto_pad + "'"};
  std::vector<Axis> axes(3);
  for (int d = 0; d < 3; ++d) {
    Axis& a = axes[d];
    a.kernel = kernel[d], a.stride = strides[d], a.dilation = dilations[d];
    if (a.kernel < 1 || a.stride < 1 || a.dilation < 1)
      return Error{"has a kernel, stride or dilation below 1"};
    const int64_t in = x[2 + d];
    if (auto_pad == "NOTSET") {
      a.begin = pads[d], a.end = pads[d + 3];
      if (a.begin < 0 || a.end < 0) return Error{"has negative pads"};
    } else if (auto_pad != "VALID") {
      const int64_t out = (in + a.stride - 1) / a.stride;
      const int64_t total = std::max<int64_t>((out - 1) * a.stride + a.extent() - in, 0);
      a.begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.end = total - a.begin;
    }
    const int64_t span = in + a.begin + a.end - a.extent();
    if (span < 0)
      return Error{"has a window of " + std::to_string(a.extent()) + " past the padded extent " +
                   std::to_string(in + a.begin + a.end) + " of axis " + std::to_string(2 + d)};
    a.out = (ceil_mode ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
    if (ceil_mode && (a.out - 1) * a.stride >= in + a.begin) --a.out;  // starts in the end pad
  }
  return axes;
}

// `t` padded along `axis` by `begin` and `end` elements of `value`.
TensorRef pad_axis(NodeChain& c, TensorRef t, int rank, int axis, int64_t begin, int64_t end,
                   double value) {
  if (begin == 0 && end == 0) return t;
  Ints pads(2 * rank, 0);
  pads[axis] = begin, pads[axis + rank] = end;
  Attrs a;
  a.set(AttrKey::pads, pads).set(AttrKey::value, value);
  return c.op(Op::Pad, {t}, std::move(a));
}

// Elements first, first + step, ... (`count` of them) of `t` along `axis`.
TensorRef every(NodeChain& c, TensorRef t, int64_t extent, int axis, int64_t first, int64_t step,
                int64_t count) {
  if (first == 0 && step == 1 && count == extent) return t;
  Attrs a;
  a.set(AttrKey::starts, Ints{first}).set(AttrKey::ends, Ints{first + (count - 1) * step + 1});
  a.set(AttrKey::axes, Ints{axis}).set(AttrKey::steps, Ints{step});
  return c.op(Op::Slice, {t}, std::move(a));
}

Padding spatial_padding(const std::vector<Axis>& axes) {
  return Padding{Padding::kExplicit, {axes[1].begin, axes[2].begin, axes[1].end, axes[2].end}};
}

}  // namespace

Expected<Mapped> map_conv_3d(NodeContext& ctx) {
  const Shape x = ctx.type(0).shape, w = ctx.type(1).shape;
  if (w.rank() != 5) return Error{"has weights of rank " + std::to_string(w.rank()) + " for 5"};
  const HostTensor* weights = ctx.constant(1);
  if (!weights) return opaque("3-D convolution weights computed in the graph");
  const int64_t groups = attr_int(ctx.node(), "group", 1);
  if (groups < 1 || x[1] % groups != 0 || w[0] % groups != 0 || w[1] * groups != x[1])
    return Error{"has " + std::to_string(groups) + " groups for input channels " +
                 std::to_string(x[1]) + " and weights " + to_string(w)};
  const Ints kernel{w[2], w[3], w[4]};
  if (attr_ints(ctx.node(), "kernel_shape").value_or(kernel) != kernel)
    return Error{"has a kernel_shape other than its weights' " + to_string(w)};
  Expected<std::vector<Axis>> axes = window_axes(ctx.node(), x, kernel, false);
  if (!axes) return axes.error();
  const Axis& t = (*axes)[0];
  const int64_t n = x[0], c_in = x[1], m = w[0], padded = x[2] + t.begin + t.end;

  NodeChain c(ctx);
  const Axis &h = (*axes)[1], &v = (*axes)[2];
  if (h.kernel == 1 && v.kernel == 1 && h.stride == 1 && v.stride == 1 &&
      h.begin + h.end + v.begin + v.end == 0) {
    // Pointwise in space (R(2+1)D's and S3D's temporal convolutions, 1x1x1
    // projections): one conv2d over [N, C, T, H W] with a (kt, 1) kernel.
    Attrs a;
    a.set(AttrKey::stride, Ints{t.stride, 1}).set(AttrKey::dilation, Ints{t.dilation, 1});
    a.set(AttrKey::pad, Padding{Padding::kExplicit, {t.begin, 0, t.end, 0}});
    a.set(AttrKey::groups, groups);
    HostTensor k2 = *weights;
    k2.shape = Shape{m, w[1], t.kernel, 1};
    std::vector<TensorRef> args{c.reshape(c.input(0), {n, c_in, x[2], x[3] * x[4]}),
                                ctx.new_weight("kernel", k2)};
    if (ctx.has_input(2)) args.push_back(c.input(2));
    const TensorRef y = c.op(Op::Conv2d, std::move(args), std::move(a));
    return c.result(c.reshape(y, {n, m, t.out, x[3], x[4]}));
  }
  // One conv2d per temporal tap: a kernel as long as a clip is not a video
  // classifier's (a hostile file's could ask for a million nodes).
  if (t.kernel > kMaxTemporalTaps)
    return opaque("a 3-D kernel of more than " + std::to_string(kMaxTemporalTaps) +
                  " temporal taps with a spatial extent");
  TensorRef frames = c.op(Op::Transpose, c.input(0), AttrKey::perm, {0, 2, 1, 3, 4});
  frames = pad_axis(c, frames, 5, 1, t.begin, t.end, 0.0);
  Attrs conv;
  conv.set(AttrKey::stride, Ints{(*axes)[1].stride, (*axes)[2].stride});
  conv.set(AttrKey::dilation, Ints{(*axes)[1].dilation, (*axes)[2].dilation});
  conv.set(AttrKey::pad, spatial_padding(*axes)).set(AttrKey::groups, groups);
  const int64_t plane = w[3] * w[4];
  std::optional<TensorRef> sum;
  for (int64_t k = 0; k < t.kernel; ++k) {
    TensorRef taps = every(c, frames, padded, 1, k * t.dilation, t.stride, t.out);
    taps = c.reshape(taps, {n * t.out, c_in, x[3], x[4]});
    HostTensor slice = HostTensor::zeros(weights->dtype, Shape{m, w[1], w[3], w[4]});
    for (int64_t r = 0; r < m * w[1]; ++r)
      for (int64_t e = 0; e < plane; ++e)
        slice.f[r * plane + e] = weights->get_f((r * t.kernel + k) * plane + e);
    std::vector<TensorRef> args{taps, ctx.new_weight("tap" + std::to_string(k), slice)};
    if (k == 0 && ctx.has_input(2)) args.push_back(c.input(2));
    const TensorRef term = c.op(Op::Conv2d, std::move(args), conv);
    sum = sum ? c.op(Op::Add, {term, *sum}) : term;
  }
  const Shape& y = ctx.builder().type(*sum).shape;  // [N T', M, H', W']
  const TensorRef out = c.reshape(*sum, {n, t.out, m, y[2], y[3]});
  return c.result(c.op(Op::Transpose, out, AttrKey::perm, {0, 2, 1, 3, 4}));
}

Expected<Mapped> map_pool_3d(NodeContext& ctx) {
  const onnx::NodeProto& node = ctx.node();
  const bool avg = node.op_type() == "AveragePool";
  if (!avg && ctx.output_used(1)) return opaque("the IR's maxpool has no indices output");
  if (attr_ints(node, "dilations").value_or(Ints{1, 1, 1}) != Ints{1, 1, 1})
    return opaque("dilated pooling");
  if (attr_int(node, "storage_order", 0) != 0) return opaque("column-major storage_order");
  const int64_t ceil_mode = attr_int(node, "ceil_mode", 0) != 0;
  const Shape x = ctx.type(0).shape;
  Expected<std::vector<Axis>> axes =
      window_axes(node, x, attr_ints(node, "kernel_shape").value_or(Ints{}), ceil_mode);
  if (!axes) return axes.error();
  const Axis &t = (*axes)[0], &h = (*axes)[1], &w = (*axes)[2];

  // Two 2-D poolings: every frame over its (H, W), then every position over
  // (T, 1). A box window's max is the max of its frames' maxima, and its
  // count (of the input, or of the padded input with count_include_pad) the
  // product of the two windows' counts.
  NodeChain c(ctx);
  auto pool = [&](TensorRef in, const Axis& a, const Axis& b) {
    Attrs p;
    p.set(AttrKey::kernel, Ints{a.kernel, b.kernel}).set(AttrKey::stride, Ints{a.stride, b.stride});
    p.set(AttrKey::pad, Padding{Padding::kExplicit, {a.begin, b.begin, a.end, b.end}});
    p.set(AttrKey::ceil_mode, ceil_mode);
    if (avg) p.set(AttrKey::count_include_pad, attr_int(node, "count_include_pad", 0));
    return c.op(avg ? Op::AvgPool : Op::MaxPool, {in}, std::move(p));
  };
  const Axis none;
  TensorRef y = c.input(0);
  if (!(h.kernel == 1 && w.kernel == 1 && h.stride == 1 && w.stride == 1 && h.begin + h.end == 0 &&
        w.begin + w.end == 0))
    y = pool(c.reshape(y, {x[0], x[1] * x[2], x[3], x[4]}), h, w);
  const int64_t out_h = h.out, out_w = w.out;
  if (!(t.kernel == 1 && t.stride == 1 && t.begin + t.end == 0))
    y = pool(c.reshape(y, {x[0], x[1], x[2], out_h * out_w}), t, none);
  return c.result(c.reshape(y, {x[0], x[1], t.out, out_h, out_w}));
}

}  // namespace tso::onnx_frontend
