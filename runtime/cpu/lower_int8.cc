// The convolutions (grouped ones too) and matrix products by weights of a
// quantized (QDQ) model on oneDNN's int8 kernels: where core/quantized.h's
// int8_form holds, the product reads a dequantize_linear of its input (a
// pair step's or a lone DQ's output) and of stored i8 weights, and computes
//   sx * sw[o] * sum((xq - zx) * wq) + bias
// which oneDNN's int8 convolution computes from the u8 or i8 input and the
// stored i8 weights, summing in int32: exactly, where the f32 convolution of
// the dequantized values rounds each partial sum. The input, whose values
// are exactly sx * (xq - zx), is quantized back by a reorder (lossless: each
// value divides back to its integer); the post-ops are the f32 ones.
#include <memory>
#include <optional>

#include "core/quantized.h"
#include "core/signature.h"
#include "runtime/common/geometry.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/post_ops.h"

namespace tso::cpu {

using dnnl::algorithm;
using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

// An s32 tensor of one value, for a zero point argument.
int zero_point_tensor(Builder& b, int32_t zero) {
  auto value = std::make_shared<int32_t>(zero);
  return b.host_tensor({DType::kI32, Shape{1}}, value,
                       reinterpret_cast<const std::byte*>(value.get()));
}

// Scales and the input's zero point as attributes of an int8 product whose
// weights take per-output-channel scales along mask `channel_mask`.
dnnl::primitive_attr int8_attr(Builder& b, const Int8Form& q, int channel_mask,
                               const dnnl::post_ops& ops) {
  dnnl::primitive_attr attr = b.attr();
  attr.set_scales_mask(DNNL_ARG_SRC, 0);
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, q.per_channel ? channel_mask : 0);
  if (q.zx != 0) attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  attr.set_post_ops(ops);
  return attr;
}

// The scale and zero point arguments of such a product (reads included).
void int8_args(Builder& b, const Int8Form& q, int64_t channels, std::vector<Arg>* args,
               std::vector<int>* reads) {
  const int sx = b.host_floats({q.sx}, Shape{1});
  const int w_scale = b.as_plain(b.value(q.w_scale));
  args->push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, sx});
  args->push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, w_scale,
                   plain_desc({q.per_channel ? channels : 1})});
  reads->insert(reads->end(), {sx, w_scale});
  if (q.zx != 0) {
    const int zx = zero_point_tensor(b, q.zx);
    args->push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zx});
    reads->push_back(zx);
  }
}

bool slow(const std::string& impl) {
  return impl.find("ref") != std::string::npos || impl.find("gemm") != std::string::npos;
}

// The step of an int8 matmul `pd` of a group reading `args` (`reads`) and
// its post-ops, writing the group's row-major result seen as `dst_md`.
void add_int8_matmul(Builder& b, const FusionGroup& group, const dnnl::matmul::primitive_desc& pd,
                     const memory::desc& dst_md, const PostOps& post, std::vector<Arg> args,
                     std::vector<int> reads) {
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(group_type(b, group), plain_desc(group_type(b, group)), reads);
  args.push_back({DNNL_ARG_DST, y, dst_md});
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive("matmul int8 " + std::string(pd.impl_info_str()), group_nodes(b, group, post),
                  dnnl::matmul(pd), std::move(args));
  b.set_value({group.tail(), 0}, y);
}

}  // namespace

Expected<bool> lower_int8_conv(Builder& b, const FusionGroup& group) {
  const Graph& g = b.graph();
  const Node& n = g.node(group.anchor);
  const std::optional<Int8Form> q = int8_form(g, n);
  if (!q) return false;
  const Shape& xs = g.type(n.args[0]).shape;
  const Shape& ws = g.type(n.args[1]).shape;
  const Shape& ys = n.outs[0].shape;
  // Grouped weights [O, I/g, KH, KW] are oneDNN's [g, O/g, I/g, KH, KW]
  // (the same bytes), their scales per output channel along both first
  // dimensions.
  const int64_t groups = n.attrs.i(AttrKey::groups);
  const Dims wdims =
      groups == 1 ? dims_of(ws) : Dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]};
  const int channel_mask = groups == 1 ? 1 : 3;
  Expected<std::vector<rt::WindowAxis>> win = rt::resolve_window(xs, ws[2], ws[3], n.attrs, false);
  if (!win) return Error{b.describe(group.anchor) + ": " + win.error().message};
  const rt::WindowAxis &h = (*win)[0], &w = (*win)[1];
  const dt x_dt = q->x_type == DType::kU8 ? dt::u8 : dt::s8;
  const memory::desc src_any(dims_of(xs), x_dt, tag::any);
  const memory::desc wei_any(wdims, dt::s8, tag::any);
  const memory::desc dst_any(dims_of(ys), dt::f32, tag::any);
  const bool has_bias = n.args.size() == 3;
  const memory::desc bias_md = has_bias ? plain_desc({ws[0]}) : memory::desc();
  auto conv_pd = [&](const memory::desc& dst_md, const dnnl::post_ops& ops) {
    return dnnl::convolution_forward::primitive_desc(
        b.engine(), prop_kind::forward_inference, algorithm::convolution_direct, src_any, wei_any,
        bias_md, dst_md, {h.stride, w.stride}, {h.dil - 1, w.dil - 1}, {h.pad_lo, w.pad_lo},
        {h.pad_hi, w.pad_hi}, int8_attr(b, *q, channel_mask, ops));
  };
  dnnl::convolution_forward::primitive_desc plain;
  try {
    plain = conv_pd(dst_any, dnnl::post_ops());
  } catch (const dnnl::error&) {
    return false;  // no int8 convolution of this shape: the f32 one
  }
  if (slow(plain.impl_info_str())) return false;
  PostOps post;
  const DstView dst{dims_of(ys), group_type(b, group).shape, true, plain.dst_desc()};
  TSO_RETURN_IF_ERROR(append_post_ops(b, group, dst, &post));
  const dnnl::convolution_forward::primitive_desc pd = conv_pd(plain.dst_desc(), post.ops);
  b.note_scratchpad(pd);
  // The input quantized back into the layout the convolution reads, once
  // for every convolution reading it so (SqueezeNet's expand pairs).
  const int xq = b.as_quantized(b.value(n.args[0]), pd.src_desc(), q->sx, q->zx);
  int w_plain = b.as_plain(b.value(q->wq));
  if (groups != 1) {
    w_plain = b.view(w_plain, b.tensor(w_plain).type);
    b.plan().tensors[w_plain].md = plain_desc(wdims, dt::s8);
  }
  const int wt = b.as_layout(w_plain, pd.weights_desc());
  std::vector<Arg> args = {{DNNL_ARG_SRC, xq}, {DNNL_ARG_WEIGHTS, wt}};
  std::vector<int> reads = {xq, wt};
  int8_args(b, *q, ws[0], &args, &reads);
  if (has_bias) {
    const int bias = b.as_plain(b.value(n.args[2]));
    args.push_back({DNNL_ARG_BIAS, bias, bias_md});
    reads.push_back(bias);
  }
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(group_type(b, group), pd.dst_desc(), reads);
  args.push_back({DNNL_ARG_DST, y});
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive("conv int8 " + std::string(pd.impl_info_str()), group_nodes(b, group, post),
                  dnnl::convolution_forward(pd), std::move(args));
  b.set_value({group.tail(), 0}, y);
  return true;
}

Expected<bool> lower_int8_product(Builder& b, const FusionGroup& group, int64_t rows, int64_t k,
                                  int64_t n, bool b_transposed, const PostOps& post) {
  const Graph& g = b.graph();
  const Node& node = g.node(group.anchor);
  const std::optional<Int8Form> q = int8_form(g, node);
  if (!q) return false;
  const memory::desc src_md({rows, k}, q->x_type == DType::kU8 ? dt::u8 : dt::s8, tag::ab);
  const memory::desc dst_md = plain_desc({rows, n});
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(b.engine(), src_md, memory::desc({k, n}, dt::s8, tag::any),
                                      dst_md, int8_attr(b, *q, 2, post.ops));
  } catch (const dnnl::error&) {
    return false;
  }
  if (slow(pd.impl_info_str())) return false;
  b.note_scratchpad(pd);
  const int x = b.as_plain(b.value(node.args[0]));
  const int xq = b.as_quantized(x, plain_desc(b.tensor(x).md.get_dims(), src_md.get_data_type()),
                                q->sx, q->zx);
  // [K, N] weights, or [N, K] ones seen transposed.
  const int w_plain = b.as_plain(b.value(q->wq));
  const int w_view = b.view(w_plain, b.tensor(w_plain).type);
  b.plan().tensors[w_view].md =
      b_transposed ? memory::desc({k, n}, dt::s8, Dims{1, k}) : plain_desc({k, n}, dt::s8);
  const int wt = b.as_layout(w_view, pd.weights_desc());
  std::vector<Arg> args = {{DNNL_ARG_SRC, xq, src_md}, {DNNL_ARG_WEIGHTS, wt}};
  std::vector<int> reads = {xq, wt};
  int8_args(b, *q, n, &args, &reads);
  add_int8_matmul(b, group, pd, dst_md, post, std::move(args), std::move(reads));
  return true;
}

Expected<bool> lower_int8_activations(Builder& b, const FusionGroup& group, const Dims& ad,
                                      const Dims& bd, const PostOps& post) {
  const Node& node = b.graph().node(group.anchor);
  const auto ab = int8_activations(b.graph(), node);
  if (!ab) return false;
  const Quantization &qa = ab->first, &qb = ab->second;
  // oneDNN's int8 matmul takes s8 weights: u8 levels q are read as q - 128,
  // their zero point z as z - 128 (the same differences q - z).
  const int32_t zb = qb.type == DType::kU8 ? qb.zero - 128 : qb.zero;
  const dt a_dt = qa.type == DType::kU8 ? dt::u8 : dt::s8;
  Dims dd(ad.size());
  for (size_t i = 0; i + 2 < ad.size(); ++i) dd[i] = std::max(ad[i], bd[i]);
  dd[dd.size() - 2] = ad[ad.size() - 2];
  dd[dd.size() - 1] = bd[bd.size() - 1];
  const memory::desc a_md = plain_desc(ad, a_dt), b_md = plain_desc(bd, dt::s8);
  const memory::desc dst_md = plain_desc(dd);
  dnnl::primitive_attr attr = b.attr();
  attr.set_scales_mask(DNNL_ARG_SRC, 0);
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, 0);
  if (qa.zero != 0) attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  if (zb != 0) attr.set_zero_points_mask(DNNL_ARG_WEIGHTS, 0);
  attr.set_post_ops(post.ops);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(b.engine(), a_md, b_md, dst_md, attr);
  } catch (const dnnl::error&) {
    return false;  // no int8 matmul of these operands: the f32 one
  }
  if (slow(pd.impl_info_str())) return false;
  b.note_scratchpad(pd);
  auto quantized = [&](TensorRef r, dt type, const Quantization& q, int32_t zero) {
    const int t = b.as_plain(b.value(r));
    return b.as_quantized(t, plain_desc(b.tensor(t).md.get_dims(), type), q.scale, zero);
  };
  const int aq = quantized(node.args[0], a_dt, qa, qa.zero);
  const int bq = quantized(node.args[1], dt::s8, qb, zb);
  const int sa = b.host_floats({qa.scale}, Shape{1}), sb = b.host_floats({qb.scale}, Shape{1});
  std::vector<Arg> args = {{DNNL_ARG_SRC, aq, a_md},
                           {DNNL_ARG_WEIGHTS, bq, b_md},
                           {DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, sa},
                           {DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, sb}};
  std::vector<int> reads = {aq, bq, sa, sb};
  if (qa.zero != 0) {
    const int z = zero_point_tensor(b, qa.zero);
    args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, z});
    reads.push_back(z);
  }
  if (zb != 0) {
    const int z = zero_point_tensor(b, zb);
    args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, z});
    reads.push_back(z);
  }
  add_int8_matmul(b, group, pd, dst_md, post, std::move(args), std::move(reads));
  return true;
}

}  // namespace tso::cpu
