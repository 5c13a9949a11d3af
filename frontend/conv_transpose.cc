// The ConvTranspose mapping: the spread input, the padding or cropping, and
// the flipped, channel-exchanged kernel of the equivalent convolution.
#include "frontend/conv_transpose.h"

#include <algorithm>
#include <string>
#include <vector>

#include "frontend/node_chain.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

// A list attribute of a 1-D or 2-D operator as two values (a 1-D one gains a
// leading height axis holding `unit`), or `def` when absent; nullopt when
// it has another length.
std::optional<Ints> pair_attr(const onnx::NodeProto& n, std::string_view name, bool one_d,
                              int64_t unit, Ints def) {
  std::optional<Ints> v = attr_ints(n, name);
  if (!v) return def;
  if (one_d && v->size() == 1) return Ints{unit, (*v)[0]};
  if (!one_d && v->size() == 2) return v;
  return std::nullopt;
}

// pads as {begin_h, begin_w, end_h, end_w}.
std::optional<Ints> pads_attr(const onnx::NodeProto& n, bool one_d) {
  std::optional<Ints> v = attr_ints(n, "pads");
  if (!v) return Ints{0, 0, 0, 0};
  if (one_d && v->size() == 2) return Ints{0, (*v)[0], 0, (*v)[1]};
  if (!one_d && v->size() == 4) return v;
  return std::nullopt;
}

// The kernel of the equivalent convolution: W [C_in, C_out / g, kh, kw] to
// W' [C_out, C_in / g, kh, kw], W'[j * Co + o, i, y, x] =
// W[j * Ci + i, o, kh - 1 - y, kw - 1 - x] for group j.
HostTensor flipped_kernel(const HostTensor& w, int64_t groups) {
  const Shape& s = w.shape;
  const int64_t ci = s[0] / groups, co = s[1], kh = s[2], kw = s[3];
  HostTensor out = HostTensor::zeros(w.dtype, Shape{co * groups, ci, kh, kw});
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t o = 0; o < co; ++o)
      for (int64_t i = 0; i < ci; ++i)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            out.f[(((j * co + o) * ci + i) * kh + y) * kw + x] =
                w.f[(((j * ci + i) * co + o) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)];
  return out;
}

// The kernel of the sub-pixel form: W [C_in, C_out, kh, kw] to
// Wc [sh sw C_out, C_in, mh, mw], the block of phase (rh, rw) holding, flipped,
// the taps rh + sh m, rw + sw m (zero past the kernel).
HostTensor phase_kernel(const HostTensor& w, int64_t sh, int64_t sw, int64_t mh, int64_t mw) {
  const Shape& s = w.shape;
  const int64_t ci = s[0], co = s[1], kh = s[2], kw = s[3];
  HostTensor out = HostTensor::zeros(w.dtype, Shape{sh * sw * co, ci, mh, mw});
  for (int64_t rh = 0; rh < sh; ++rh)
    for (int64_t rw = 0; rw < sw; ++rw)
      for (int64_t o = 0; o < co; ++o)
        for (int64_t i = 0; i < ci; ++i)
          for (int64_t jh = 0; jh < mh; ++jh)
            for (int64_t jw = 0; jw < mw; ++jw) {
              const int64_t y = rh + sh * (mh - 1 - jh), x = rw + sw * (mw - 1 - jw);
              if (y >= kh || x >= kw) continue;
              out.f[((((rh * sw + rw) * co + o) * ci + i) * mh + jh) * mw + jw] =
                  w.f[((i * co + o) * kh + y) * kw + x];
            }
  return out;
}

// The sub-pixel form of a transposed convolution without groups or
// dilation: along an axis, output element t - pb for t = s q + r sums
// x[q - m] w[r + s m] over m, so phase r is a convolution of the input with
// the taps r, r + s, ... One conv2d computes every phase as sh sw blocks of
// output channels (m taps per axis, zero-padded by m - 1, m enough for the
// output's reach), a depth-to-space interleaves them and a slice cuts
// [pb, pb + out). No product multiplies an inserted zero: at stride 2 a
// quarter of the spread form's.
Expected<Mapped> sub_pixel(NodeContext& ctx, const Shape& x, const HostTensor& kernel,
                           const HostTensor* bias, const Ints& stride, const Ints& pb,
                           const Ints& out, bool one_d) {
  const int64_t co = kernel.shape[1];
  Ints m(2);
  for (int d = 0; d < 2; ++d) {
    const int64_t s = stride[d], k = kernel.shape[2 + d];
    m[d] = std::max((k + s - 1) / s, (pb[d] + out[d] + s - 1) / s - x[2 + d] + 1);
  }
  const int64_t sh = stride[0], sw = stride[1], phases = sh * sw;
  NodeChain c(ctx);
  TensorRef t = c.input(0);
  if (one_d) t = c.reshape(t, {x[0], x[1], 1, x[3]});
  std::vector<TensorRef> args = {
      t, ctx.new_weight("phases", phase_kernel(kernel, sh, sw, m[0], m[1]))};
  if (bias) {
    HostTensor tiled = HostTensor::zeros(bias->dtype, Shape{phases * co});
    for (int64_t p = 0; p < phases; ++p)
      for (int64_t o = 0; o < co; ++o) tiled.f[p * co + o] = bias->f[o];
    args.push_back(ctx.new_weight("phase_bias", tiled));
  }
  Padding pad;
  pad.mode = Padding::kExplicit;
  pad.pads = {m[0] - 1, m[1] - 1, m[0] - 1, m[1] - 1};
  Attrs a;
  a.set(AttrKey::stride, Ints{1, 1}).set(AttrKey::dilation, Ints{1, 1}).set(AttrKey::pad, pad);
  a.set(AttrKey::groups, int64_t{1});
  t = c.op(Op::Conv2d, std::move(args), std::move(a));
  const int64_t qh = x[2] + m[0] - 1, qw = x[3] + m[1] - 1;
  t = c.reshape(t, {x[0], sh, sw, co, qh, qw});
  t = c.op(Op::Transpose, t, AttrKey::perm, {0, 3, 4, 1, 5, 2});
  t = c.reshape(t, {x[0], co, qh * sh, qw * sw});
  Attrs cut;
  cut.set(AttrKey::starts, Ints{pb[0], pb[1]})
      .set(AttrKey::ends, Ints{pb[0] + out[0], pb[1] + out[1]});
  cut.set(AttrKey::axes, Ints{2, 3}).set(AttrKey::steps, Ints{1, 1});
  t = c.op(Op::Slice, {t}, std::move(cut));
  if (one_d) t = c.reshape(t, {x[0], co, out[1]});
  return c.result(t);
}

}  // namespace

Expected<Mapped> map_conv_transpose(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const TensorType xt = ctx.type(0), wt = ctx.type(1);
  const bool one_d = xt.shape.rank() == 3 && wt.shape.rank() == 3;
  if (!one_d && (xt.shape.rank() != 4 || wt.shape.rank() != 4))
    return opaque("only 1-D and 2-D transposed convolutions map to conv2d");
  const HostTensor* w = ctx.constant(1);
  if (!w) return opaque("weights that are not constant");
  if (!w->is_float()) return opaque("weights of " + std::string(dtype_name(w->dtype)));
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    return Error{"has an unknown auto_pad '" + auto_pad + "'"};

  const Shape x = one_d ? Shape{xt.shape[0], xt.shape[1], 1, xt.shape[2]} : xt.shape;
  HostTensor kernel = *w;
  if (one_d) kernel.shape = Shape{w->shape[0], w->shape[1], 1, w->shape[2]};
  const int64_t groups = attr_int(n, "group", 1);
  if (groups < 1 || x[1] != kernel.shape[0] || x[1] % groups != 0)
    return Error{"has weights " + to_string(wt) + " and group " + std::to_string(groups) +
                 " for input " + to_string(xt) +
                 ": the weights' first extent must be the input's channels, a multiple of the "
                 "group"};
  std::optional<Ints> stride = pair_attr(n, "strides", one_d, 1, {1, 1});
  std::optional<Ints> dil = pair_attr(n, "dilations", one_d, 1, {1, 1});
  std::optional<Ints> extra = pair_attr(n, "output_padding", one_d, 0, {0, 0});
  std::optional<Ints> pads = pads_attr(n, one_d);
  if (!stride || !dil || !extra || !pads)
    return Error{"has strides, dilations, output_padding or pads of the wrong length"};
  if (auto_pad == "VALID") pads = Ints{0, 0, 0, 0};
  Ints span(2), before(2), after(2);
  for (int d = 0; d < 2; ++d) {
    const int64_t k = kernel.shape[2 + d], s = (*stride)[d], dl = (*dil)[d], op = (*extra)[d];
    if (s < 1 || dl < 1 || op < 0 || op >= std::max(s, dl) || (*pads)[d] < 0 || (*pads)[d + 2] < 0)
      return Error{"has stride " + std::to_string(s) + ", dilation " + std::to_string(dl) +
                   ", output_padding " + std::to_string(op) +
                   " or a negative pad on a spatial axis: strides and dilations must be >= 1, "
                   "output_padding below the stride or the dilation, pads >= 0"};
    span[d] = (k - 1) * dl + 1;
    before[d] = span[d] - 1 - (*pads)[d];
    after[d] = span[d] - 1 - (*pads)[d + 2] + op;
  }
  // An output extent given by output_shape, or by SAME_* (the input's times
  // the stride): ONNX's total padding for it, split with its floor division
  // (the extra element at the end for SAME_UPPER, at the beginning
  // otherwise); a negative total, an output past the natural extent, extends
  // the end.
  std::optional<Ints> out_shape = attr_ints(n, "output_shape");
  if (same && !out_shape) out_shape = Ints{x[2] * (*stride)[0], x[3] * (*stride)[1]};
  if (out_shape) {
    const Ints out = one_d && out_shape->size() == 1 ? Ints{1, (*out_shape)[0]} : *out_shape;
    if (out.size() != 2) return Error{"has an output_shape of the wrong length"};
    for (int d = 0; d < 2; ++d) {
      const int64_t total = (*stride)[d] * (x[2 + d] - 1) + (*extra)[d] + span[d] - out[d];
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      const int64_t begin = auto_pad == "SAME_UPPER" ? half : total - half;
      before[d] = span[d] - 1 - begin;
      after[d] = span[d] - 1 - (total - begin) + (*extra)[d];
    }
  }

  const int64_t sh = (*stride)[0], sw = (*stride)[1];
  const Ints pb = {span[0] - 1 - before[0], span[1] - 1 - before[1]};
  const Ints out = {(x[2] - 1) * sh + before[0] + after[0] - span[0] + 2,
                    (x[3] - 1) * sw + before[1] + after[1] - span[1] + 2};
  const HostTensor* bias = ctx.has_input(2) ? ctx.constant(2) : nullptr;
  if (groups == 1 && *dil == Ints{1, 1} && (sh > 1 || sw > 1) && pb[0] >= 0 && pb[1] >= 0 &&
      (!ctx.has_input(2) || bias))
    return sub_pixel(ctx, x, kernel, bias, *stride, pb, out, one_d);

  // The spread form (groups, dilations, a bias computed in the graph, an
  // output reaching before the first input element):
  NodeChain c(ctx);
  TensorRef t = c.input(0);
  if (one_d) t = c.reshape(t, {x[0], x[1], 1, x[3]});
  // The spread: [N, C, H, 1, W, 1] padded to [N, C, H, sh, W, sw], merged.
  // Its extent per axis is in * s, s - 1 zeros past the last input element.
  if (sh > 1 || sw > 1) {
    t = c.reshape(t, {x[0], x[1], x[2], 1, x[3], 1});
    Attrs a;
    a.set(AttrKey::pads, Ints{0, 0, 0, 0, 0, 0, 0, 0, 0, sh - 1, 0, sw - 1})
        .set(AttrKey::value, 0.0);
    t = c.op(Op::Pad, {t}, std::move(a));
    t = c.reshape(t, {x[0], x[1], x[2] * sh, x[3] * sw});
  }
  Ints end = {after[0] - (sh - 1), after[1] - (sw - 1)};
  // A side to crop rather than pad.
  if (before[0] < 0 || before[1] < 0 || end[0] < 0 || end[1] < 0) {
    const Ints extent = {x[2] * sh, x[3] * sw};
    Attrs a;
    a.set(AttrKey::starts,
          Ints{std::max<int64_t>(0, -before[0]), std::max<int64_t>(0, -before[1])});
    a.set(AttrKey::ends, Ints{extent[0] - std::max<int64_t>(0, -end[0]),
                              extent[1] - std::max<int64_t>(0, -end[1])});
    a.set(AttrKey::axes, Ints{2, 3}).set(AttrKey::steps, Ints{1, 1});
    t = c.op(Op::Slice, {t}, std::move(a));
  }
  Padding pad;
  pad.mode = Padding::kExplicit;
  pad.pads = {std::max<int64_t>(0, before[0]), std::max<int64_t>(0, before[1]),
              std::max<int64_t>(0, end[0]), std::max<int64_t>(0, end[1])};
  std::vector<TensorRef> args = {t, ctx.new_weight("flipped", flipped_kernel(kernel, groups))};
  if (ctx.has_input(2)) args.push_back(c.input(2));
  Attrs a;
  a.set(AttrKey::stride, Ints{1, 1}).set(AttrKey::dilation, *dil).set(AttrKey::pad, pad);
  a.set(AttrKey::groups, groups);
  t = c.op(Op::Conv2d, std::move(args), std::move(a));
  if (one_d) {
    Attrs sq;
    sq.set(AttrKey::axes, Ints{2});
    t = c.op(Op::Squeeze, {t}, std::move(sq));
  }
  return c.result(t);
}

}  // namespace tso::onnx_frontend
