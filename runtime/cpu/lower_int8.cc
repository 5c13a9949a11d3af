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

// A conv2d of a quantized model as oneDNN's int8 convolution sees it.
struct Int8Conv {
  Int8Form q;
  int64_t groups = 1;
  Dims wdims;  // [O, I/g, KH, KW], or [g, O/g, I/g, KH, KW]: the same bytes
  memory::desc src_any, wei_any, bias_md;
  Dims ydims;
  rt::WindowAxis h, w;
  dnnl::convolution_forward::primitive_desc plain;  // no post-ops, layouts its choice

  dnnl::convolution_forward::primitive_desc with(Builder& b, const memory::desc& dst,
                                                 const dnnl::post_ops& ops) const {
    // Grouped weights take their scales per output channel along both
    // first dimensions.
    return dnnl::convolution_forward::primitive_desc(
        b.engine(), prop_kind::forward_inference, algorithm::convolution_direct, src_any, wei_any,
        bias_md, dst, {h.stride, w.stride}, {h.dil - 1, w.dil - 1}, {h.pad_lo, w.pad_lo},
        {h.pad_hi, w.pad_hi}, int8_attr(b, q, groups == 1 ? 1 : 3, ops));
  }
};

// Conv2d `node` on oneDNN's int8 kernels, or nothing where int8_form does
// not hold, this host's int8 kernels do not sum it exactly (int8_kernel_exact)
// or oneDNN has no int8 convolution of its shapes but a slow one (the f32
// one runs then).
Expected<std::optional<Int8Conv>> int8_conv(Builder& b, int node) {
  const Graph& g = b.graph();
  const Node& n = g.node(node);
  const std::optional<Int8Form> q = int8_form(g, n);
  if (!q || !int8_kernel_exact(g, n)) return std::optional<Int8Conv>();
  const Shape& xs = g.type(n.args[0]).shape;
  const Shape& ws = g.type(n.args[1]).shape;
  Expected<std::vector<rt::WindowAxis>> win = rt::resolve_window(xs, ws[2], ws[3], n.attrs, false);
  if (!win) return Error{b.describe(node) + ": " + win.error().message};
  Int8Conv c;
  c.q = *q;
  c.groups = n.attrs.i(AttrKey::groups);
  c.wdims = c.groups == 1 ? dims_of(ws) : Dims{c.groups, ws[0] / c.groups, ws[1], ws[2], ws[3]};
  c.src_any = memory::desc(dims_of(xs), q->x_type == DType::kU8 ? dt::u8 : dt::s8, tag::any);
  c.wei_any = memory::desc(c.wdims, dt::s8, tag::any);
  if (n.args.size() == 3) c.bias_md = plain_desc({ws[0]});
  c.ydims = dims_of(n.outs[0].shape);
  c.h = (*win)[0];
  c.w = (*win)[1];
  try {
    c.plain = c.with(b, memory::desc(c.ydims, dt::f32, tag::any), dnnl::post_ops());
  } catch (const dnnl::error&) {
    return std::optional<Int8Conv>();  // no int8 convolution of these shapes
  }
  if (slow(c.plain.impl_info_str())) return std::optional<Int8Conv>();
  return std::optional<Int8Conv>(std::move(c));
}

// The quantization of the pair `group` ends in, when the group may write
// that pair's levels instead of their f32 values: every reader of its result
// is a convolution of it (its input, read once) that runs on an int8 kernel
// (int8_conv) and quantizes it with the pair's parameters, and no graph
// output is it. The readers then read the levels as they are, where each
// would quantize the floats back into a tensor of its own (a step of a fifth
// of the convolution's bytes).
std::optional<Quantization> levels_for_readers(Builder& b, const FusionGroup& group) {
  if (group.post.empty() || group.post.back().kind != PostOpNode::Kind::kQuantizePair)
    return std::nullopt;
  const Graph& g = b.graph();
  const int tail = group.tail();
  if (b.is_output(tail) || b.readers(tail).empty()) return std::nullopt;
  const std::optional<Quantization> f = post_op_pair(g, g.node(group.post.back().inner[0]));
  if (!f) return std::nullopt;
  for (int r : b.readers(tail)) {
    const Node& n = g.node(r);
    if (n.op != Op::Conv2d || n.args[0] != TensorRef{tail, 0}) return std::nullopt;
    for (size_t k = 1; k < n.args.size(); ++k)
      if (n.args[k].node == tail) return std::nullopt;
    Expected<std::optional<Int8Conv>> c = int8_conv(b, r);
    if (!c || !*c) return std::nullopt;
    const Int8Form& q = (*c)->q;
    if (q.sx != f->scale || q.zx != f->zero || q.x_type != f->type) return std::nullopt;
  }
  return f;
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
  Expected<std::optional<Int8Conv>> found = int8_conv(b, group.anchor);
  if (!found) return found.error();
  if (!*found) return false;
  const Int8Conv& c = **found;
  const Int8Form& q = c.q;
  const Shape& ws = g.type(n.args[1]).shape;
  const Shape& ys = n.outs[0].shape;
  const memory::desc dst_f32 = c.plain.dst_desc();
  const DstView dst{c.ydims, group_type(b, group).shape, true, dst_f32};
  // The levels are written in the layout the f32 result would take, where
  // its strides describe it (no blocks).
  std::optional<Quantization> levels = levels_for_readers(b, group);
  if (dst_f32.get_inner_nblks() != 0) levels.reset();
  PostOps post;
  dnnl::convolution_forward::primitive_desc pd;
  if (levels) {
    TSO_RETURN_IF_ERROR(append_post_ops(b, group, dst, &post, true));
    const memory::desc levels_md(c.ydims, levels->type == DType::kU8 ? dt::u8 : dt::s8,
                                 dst_f32.get_strides());
    try {
      pd = c.with(b, levels_md, post.ops);
    } catch (const dnnl::error&) {
      levels.reset();
    }
    if (levels && slow(pd.impl_info_str())) levels.reset();
  }
  if (!levels) {
    post = PostOps();
    TSO_RETURN_IF_ERROR(append_post_ops(b, group, dst, &post));
    pd = c.with(b, dst_f32, post.ops);
  }
  b.note_scratchpad(pd);
  // The input quantized back into the layout the convolution reads, once
  // for every convolution reading it so (SqueezeNet's expand pairs), or the
  // levels its producer wrote.
  const int xq = b.quantized_value(n.args[0], pd.src_desc(), q.sx, q.zx);
  int w_plain = b.as_plain(b.value(q.wq));
  if (c.groups != 1) {
    w_plain = b.view(w_plain, b.tensor(w_plain).type);
    b.plan().tensors[w_plain].md = plain_desc(c.wdims, dt::s8);
  }
  const int wt = b.as_layout(w_plain, pd.weights_desc());
  std::vector<Arg> args = {{DNNL_ARG_SRC, xq}, {DNNL_ARG_WEIGHTS, wt}};
  std::vector<int> reads = {xq, wt};
  int8_args(b, q, ws[0], &args, &reads);
  if (n.args.size() == 3) {
    const int bias = b.as_plain(b.value(n.args[2]));
    args.push_back({DNNL_ARG_BIAS, bias, c.bias_md});
    reads.push_back(bias);
  }
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const TensorType y_type = levels ? TensorType{levels->type, ys} : group_type(b, group);
  const int y = b.output_tensor(y_type, pd.dst_desc(), reads);
  args.push_back({DNNL_ARG_DST, y});
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive("conv int8 " + std::string(pd.impl_info_str()), group_nodes(b, group, post),
                  dnnl::convolution_forward(pd), std::move(args));
  b.set_value({group.tail(), 0}, y);
  if (levels) b.note_levels(y, {levels->scale, levels->zero});
  return true;
}

Expected<bool> lower_int8_product(Builder& b, const FusionGroup& group, int64_t rows, int64_t k,
                                  int64_t n, bool b_transposed, const PostOps& post) {
  const Graph& g = b.graph();
  const Node& node = g.node(group.anchor);
  const std::optional<Int8Form> q = int8_form(g, node);
  if (!q || !int8_kernel_exact(g, node)) return false;
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
  if (!ab || !int8_kernel_exact(b.graph(), node)) return false;
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
