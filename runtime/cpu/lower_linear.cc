// Convolutions and matrix products, each with its fusion group's post-ops.

#include "core/post_ops.h"
#include "core/signature.h"
#include "runtime/common/geometry.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/measure.h"
#include "runtime/cpu/post_ops.h"

namespace tso::cpu {

using dnnl::algorithm;
using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

// A grouped convolution with fewer than 8 input channels per group has no
// fast oneDNN kernel on AVX2 (a GEMM fallback at a tenth of the speed).
// Merging f neighbouring groups into one with block-diagonal weights (zeros
// between the original groups) gives 8 channels per group: f times the
// arithmetic, on a kernel many times faster. Returns f, or 1 when oneDNN
// already has a direct kernel or merging does not apply. `impl` names the
// implementation oneDNN picks for `groups` merged by `f`.
template <class Impl>
int64_t group_widening(Builder& b, int64_t groups, const Shape& ws, Impl impl) {
  const int64_t cin = ws[1];
  if (groups == 1 || cin >= 8 || 8 % cin != 0) return 1;
  const int64_t f = 8 / cin;
  if (groups % f != 0) return 1;
  auto slow = [](const std::string& name) {
    return name.find("gemm") != std::string::npos || name.find("ref") != std::string::npos;
  };
  if (!slow(impl(groups, 1)) || slow(impl(groups / f, f))) return 1;
  return f;
}

// The [O, I, kh, kw] weights of `groups` groups as the weights of groups / f
// groups, each holding f original groups on its diagonal.
int widened_weights(Builder& b, int node, int w, int64_t groups, int64_t f) {
  const Shape ws = b.tensor(w).type.shape;
  const int64_t cout = ws[0] / groups, cin = ws[1], k = ws[2] * ws[3];
  const int64_t row = cin * f * k;  // one output channel of a merged group
  const TensorType type{DType::kF32, Shape{ws[0], cin * f, ws[2], ws[3]}};
  // Source [G/f, f, cout, cin, k] into destination positions
  // [g', j * cout + o, j * cin + c, s].
  return strided_copy_tensor(b, node, "widen groups", b.as_plain(w), type,
                             {groups / f, f, cout, cin, k},
                             {f * cout * cin * k, cout * cin * k, cin * k, k, 1},
                             {f * cout * row, cout * row + cin * k, row, k, 1});
}

// The source and destination layouts a convolution runs in: oneDNN's
// preferred ones, NHWC for both, or the input's own strided layout for both.
// Each candidate is charged the reorders it implies, measured: bringing the
// input to its source layout, and for a blocked destination (the 3-channel
// stem's nChw8c) the reorder to NHWC that the next convolutions read. `make`
// creates the convolution for a (source, destination) pair.
template <class Make>
std::pair<memory::desc, memory::desc> choose_layouts(Builder& b, int node, const memory::desc& in,
                                                     const memory::desc& src_any,
                                                     const memory::desc& dst_any, Make make) {
  const auto preferred = make(src_any, dst_any);
  std::vector<std::pair<memory::desc, memory::desc>> layouts = {
      {preferred.src_desc(), preferred.dst_desc()}};
  if (!b.options().measure || in.get_ndims() != 4) return layouts[0];
  const memory::desc nhwc_in(in.get_dims(), dt::f32, tag::nhwc);
  const memory::desc nhwc_out(dst_any.get_dims(), dt::f32, tag::nhwc);
  layouts.push_back({nhwc_in, nhwc_out});
  if (in.get_inner_nblks() == 0 && !is_plain(in) && in != nhwc_in)
    layouts.push_back({in, same_order(in, dst_any.get_dims())});
  auto reorder_ms = [&](const memory::desc& from, const memory::desc& to) {
    if (from == to) return 0.0;
    dnnl::reorder::primitive_desc pd(b.engine(), from, b.engine(), to);
    return time_primitive(b.engine(), dnnl::reorder(pd), pd, {});
  };
  std::vector<Candidate> costs;
  for (const auto& [src, dst] : layouts)
    costs.push_back([&, src = src, dst = dst](double bound) -> double {
      dnnl::convolution_forward::primitive_desc pd;
      try {
        pd = make(src, dst);
      } catch (const dnnl::error&) {
        return kNotTimed;
      }
      const std::string impl = pd.impl_info_str();
      if (impl.find("ref") != std::string::npos || impl.find("gemm") != std::string::npos)
        return kNotTimed;
      return time_primitive(b.engine(), dnnl::convolution_forward(pd), pd, {}, bound) +
             reorder_ms(in, src) + (dst.get_inner_nblks() ? reorder_ms(dst, nhwc_out) : 0.0);
    });
  if (layouts[0] == layouts[1]) return layouts[0];
  const std::string key =
      "conv layouts " + op_signature(b.graph(), node) + " " + std::to_string(in.get_size()) + " " +
      std::to_string(in.get_strides()[1]) + std::to_string(in.get_inner_nblks());
  return layouts[fastest(b.options().choices_file, key, costs)];
}

Status lower_conv(Builder& b, const FusionGroup& group) {
  Expected<bool> int8 = lower_int8_conv(b, group);
  if (!int8) return int8.error();
  if (*int8) return {};
  const Node& n = b.graph().node(group.anchor);
  const Shape& xs = b.graph().type(n.args[0]).shape;
  const Shape& ws = b.graph().type(n.args[1]).shape;
  const int64_t groups = n.attrs.i(AttrKey::groups);
  Expected<std::vector<rt::WindowAxis>> win = rt::resolve_window(xs, ws[2], ws[3], n.attrs, false);
  if (!win) return Error{b.describe(group.anchor) + ": " + win.error().message};
  const rt::WindowAxis &h = (*win)[0], &w = (*win)[1];
  const Shape& ys = n.outs[0].shape;

  const memory::desc src_any(dims_of(xs), dt::f32, tag::any);
  const int64_t widen = group_widening(b, groups, ws, [&](int64_t g, int64_t f) {
    const Dims wd{g, ws[0] / g, ws[1] * f, ws[2], ws[3]};
    return dnnl::convolution_forward::primitive_desc(
               b.engine(), prop_kind::forward_inference, algorithm::convolution_direct, src_any,
               memory::desc(wd, dt::f32, tag::any), memory::desc(dims_of(ys), dt::f32, tag::any),
               {h.stride, w.stride}, {h.dil - 1, w.dil - 1}, {h.pad_lo, w.pad_lo},
               {h.pad_hi, w.pad_hi}, b.attr())
        .impl_info_str();
  });
  const int64_t g2 = groups / widen;
  const Dims wdims =
      groups == 1 ? dims_of(ws) : Dims{g2, ws[0] / groups * widen, ws[1] * widen, ws[2], ws[3]};
  const memory::desc wei_any(wdims, dt::f32, tag::any);
  const memory::desc dst_any(dims_of(ys), dt::f32, tag::any);
  const bool has_bias = n.args.size() == 3;
  const memory::desc bias_md = has_bias ? plain_desc({ws[0]}) : memory::desc();

  auto conv_pd = [&](const memory::desc& src_md, const memory::desc& dst_md,
                     const dnnl::primitive_attr& attr) {
    return dnnl::convolution_forward::primitive_desc(
        b.engine(), prop_kind::forward_inference, algorithm::convolution_direct, src_md, wei_any,
        bias_md, dst_md, {h.stride, w.stride}, {h.dil - 1, w.dil - 1}, {h.pad_lo, w.pad_lo},
        {h.pad_hi, w.pad_hi}, attr);
  };
  // The layouts it reads and writes, chosen without post-ops (residual
  // operands are brought to the one it writes).
  const auto [src_md, layout] =
      choose_layouts(b, group.anchor, b.tensor(b.value(n.args[0])).md, src_any, dst_any,
                     [&](const memory::desc& src, const memory::desc& dst) {
                       return conv_pd(src, dst, b.attr());
                     });
  PostOps post;
  const DstView dst{dims_of(ys), group_type(b, group).shape, true, layout};
  TSO_RETURN_IF_ERROR(append_post_ops(b, group, dst, &post));
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(post.ops);
  const dnnl::convolution_forward::primitive_desc pd = conv_pd(src_md, layout, attr);
  if (b.options().winograd != ExecutorOptions::Choice::kOff) {
    Expected<bool> winograd = lower_winograd(b, group, pd, post.args);
    if (!winograd) return winograd.error();
    if (*winograd) return {};
  }
  if (b.options().grouped != ExecutorOptions::Choice::kOff) {
    Expected<bool> grouped = lower_grouped(b, group, pd, post.args);
    if (!grouped) return grouped.error();
    if (*grouped) return {};
  }
  if (lower_pointwise(b, group, pd, post.args)) return {};

  b.note_scratchpad(pd);

  const int x = b.as_layout(b.value(n.args[0]), pd.src_desc());
  int wt = b.value(n.args[1]);
  if (widen > 1) wt = widened_weights(b, group.anchor, wt, groups, widen);
  if (groups != 1)
    wt = b.view(b.as_plain(wt), {DType::kF32, Shape(std::span<const int64_t>(wdims))});
  wt = b.as_layout(wt, pd.weights_desc());
  std::vector<Arg> args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, wt}};
  std::vector<int> reads = {x, wt};
  if (has_bias) {
    const int bias = b.as_plain(b.value(n.args[2]));
    args.push_back({DNNL_ARG_BIAS, bias, bias_md});
    reads.push_back(bias);
  }
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(group_type(b, group), pd.dst_desc(), reads);
  args.push_back({DNNL_ARG_DST, y});
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive(impl_name("conv", pd), group_nodes(b, group, post), dnnl::convolution_forward(pd),
                  std::move(args));
  b.set_value({group.tail(), 0}, y);
  return {};
}

// A product's operands as oneDNN sees them: dims and strides over the
// tensor's row-major bytes (a transposed operand swaps the last two strides).
struct Operand {
  int tensor = -1;
  memory::desc md;
};

Operand operand(Builder& b, int t, Dims dims, bool transposed) {
  // A transpose read in place (lower_movement.cc) is its strides.
  const memory::desc& md = b.tensor(t).md;
  if (!transposed && b.tensor(t).storage == Storage::kView && md.get_dims() == dims &&
      md.get_inner_nblks() == 0 && !is_plain(md))
    return {t, md};
  Operand o{b.as_plain(t), plain_desc(dims)};
  if (transposed) {
    const size_t r = dims.size();
    std::swap(dims[r - 1], dims[r - 2]);
    Dims st = plain_desc(dims).get_strides();
    std::swap(dims[r - 1], dims[r - 2]);
    std::swap(st[r - 1], st[r - 2]);
    o.md = memory::desc(dims, dt::f32, st);
  }
  return o;
}

// rows x K times a constant K x N matrix: oneDNN's inner product or matmul,
// or for one row tso's own kernel (row_product.h), whichever the measurement
// says, weights reordered once to its layout. One row reads each weight once
// per run, so its candidates are timed with their weights cold.
Status lower_weights_product(Builder& b, const FusionGroup& group, Operand a, int64_t rows,
                             int64_t k, int64_t n, int bt, bool b_transposed, PostOps& post) {
  const memory::desc src_md = plain_desc({rows, k});
  const memory::desc dst_md = plain_desc({rows, n});
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(post.ops);
  // Inner product weights are [N, K]; matmul weights [K, N].
  const memory::desc ip_src_w =
      b_transposed ? plain_desc({n, k}) : memory::desc({n, k}, dt::f32, Dims{1, n});
  const memory::desc mm_src_w =
      b_transposed ? memory::desc({k, n}, dt::f32, Dims{1, k}) : plain_desc({k, n});
  dnnl::inner_product_forward::primitive_desc ip(b.engine(), prop_kind::forward_inference, src_md,
                                                 memory::desc({n, k}, dt::f32, tag::any),
                                                 memory::desc(), dst_md, attr);
  dnnl::matmul::primitive_desc mm(b.engine(), src_md, memory::desc({k, n}, dt::f32, tag::any),
                                  dst_md, attr);
  using Choice = ExecutorOptions::Choice;
  const bool one_row = rows == 1 && b.options().row_product != Choice::kOff;
  enum { kInnerProduct, kMatmul, kRowProduct };
  int chosen = kInnerProduct;
  if (one_row && b.options().row_product == Choice::kAlways) {
    chosen = kRowProduct;
  } else if (b.options().measure) {
    const std::string key = "product " + std::to_string(rows) + "x" + std::to_string(k) + "x" +
                            std::to_string(n) + post.nodes + std::to_string(post.ops.len()) +
                            (one_row ? " or own" : "");
    std::vector<Candidate> candidates = {
        [&](double bound) {
          return time_primitive(b.engine(), dnnl::inner_product_forward(ip), ip, post.args, bound,
                                rows == 1);
        },
        [&](double bound) {
          return time_primitive(b.engine(), dnnl::matmul(mm), mm, post.args, bound, rows == 1);
        }};
    if (one_row) candidates.push_back([&](double) { return time_row_product(b, k, n, post); });
    chosen = fastest(b.options().choices_file, key, candidates, rows == 1 ? 3 : 1);
  }
  if (chosen == kRowProduct) {
    lower_row_product(b, group, a.tensor, k, n, bt, b_transposed, post);
    return {};
  }
  const bool use_ip = chosen == kInnerProduct;
  const dnnl::primitive_desc& pd = use_ip ? static_cast<const dnnl::primitive_desc&>(ip) : mm;
  b.note_scratchpad(pd);
  const int w_plain = b.as_plain(bt);
  const int w_view = b.view(w_plain, b.tensor(w_plain).type);
  b.plan().tensors[w_view].md = use_ip ? ip_src_w : mm_src_w;
  const int w = b.as_layout(w_view, pd.weights_desc());
  std::vector<int> reads = {a.tensor, w};
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(group_type(b, group), plain_desc(group_type(b, group)), reads);
  std::vector<Arg> args = {
      {DNNL_ARG_SRC, a.tensor, src_md}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y, dst_md}};
  args.insert(args.end(), post.args.begin(), post.args.end());
  const std::string nodes = group_nodes(b, group, post);
  if (use_ip)
    b.add_primitive(impl_name("inner_product", ip), nodes, dnnl::inner_product_forward(ip),
                    std::move(args));
  else
    b.add_primitive(impl_name("matmul", mm), nodes, dnnl::matmul(mm), std::move(args));
  b.set_value({group.tail(), 0}, y);
  return {};
}

// The transpose that the product `group` writes (core/post_ops.h's
// transpose_written_by_product), or -1.
int written_transpose(const Builder& b, const FusionGroup& group, bool b_const) {
  const std::vector<int>& readers = b.readers(group.anchor);
  return group.post.empty() && readers.size() == 1 &&
                 transpose_written_by_product(b.graph(), readers[0], 1,
                                              b.is_output(group.anchor), b_const)
             ? readers[0]
             : -1;
}

// dims `dd` stored in the order of `perm`'s result: dimension perm[j] takes
// the stride of the result's dimension j.
memory::desc permuted_desc(const Dims& dd, const std::vector<int64_t>& perm) {
  Dims out(dd.size());
  for (size_t j = 0; j < perm.size(); ++j) out[j] = dd[perm[j]];
  const Dims out_st = plain_desc(out).get_strides();
  Dims st(dd.size());
  for (size_t j = 0; j < perm.size(); ++j) st[perm[j]] = out_st[j];
  return memory::desc(dd, dt::f32, st);
}

// The general product: oneDNN matmul on operands of equal rank (batch
// dimensions broadcast), a constant right operand reordered once. A
// transpose it writes (written_transpose) gets the product's result in its
// order, and runs no step.
Status lower_batched_product(Builder& b, const FusionGroup& group, const Operand& a,
                             const Operand& bo, bool b_const, PostOps& post) {
  const Dims ad = a.md.get_dims(), bd = bo.md.get_dims();
  Dims dd(ad.size());
  for (size_t i = 0; i + 2 < ad.size(); ++i) dd[i] = std::max(ad[i], bd[i]);
  dd[dd.size() - 2] = ad[ad.size() - 2];
  dd[dd.size() - 1] = bd[bd.size() - 1];
  memory::desc dst_md = plain_desc(dd);
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(post.ops);
  const memory::desc w_md = b_const ? memory::desc(bd, dt::f32, tag::any) : bo.md;
  dnnl::matmul::primitive_desc pd(b.engine(), a.md, w_md, dst_md, attr);
  const int transpose = written_transpose(b, group, b_const);
  if (transpose >= 0) {
    const std::vector<int64_t>& perm = b.graph().node(transpose).attrs.ints(AttrKey::perm);
    const memory::desc permuted = permuted_desc(dd, perm);
    dnnl::matmul::primitive_desc written(b.engine(), a.md, w_md, permuted, attr);
    if (std::string(written.impl_info_str()) == pd.impl_info_str()) {
      pd = written;
      dst_md = permuted;
    }
  }
  const bool writes_transpose = transpose >= 0 && dst_md != plain_desc(dd);
  b.note_scratchpad(pd);
  int w = bo.tensor;
  memory::desc w_arg = bo.md;
  if (b_const) {
    const int view = b.view(bo.tensor, b.tensor(bo.tensor).type);
    b.plan().tensors[view].md = bo.md;
    w = b.as_layout(view, pd.weights_desc());
    w_arg = {};
  }
  std::vector<int> reads = {a.tensor, w};
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const TensorType& type =
      writes_transpose ? b.graph().node(transpose).outs[0] : group_type(b, group);
  const int y = b.output_tensor(type, plain_desc(type), reads);
  std::vector<Arg> args = {
      {DNNL_ARG_SRC, a.tensor, a.md}, {DNNL_ARG_WEIGHTS, w, w_arg}, {DNNL_ARG_DST, y, dst_md}};
  args.insert(args.end(), post.args.begin(), post.args.end());
  std::string nodes = group_nodes(b, group, post);
  if (writes_transpose) nodes += ", written as " + b.describe(transpose);
  b.add_primitive(impl_name("matmul", pd), nodes, dnnl::matmul(pd), std::move(args));
  if (!writes_transpose) {
    b.set_value({group.tail(), 0}, y);
    return {};
  }
  // The product's own order is a view of the transpose's bytes; the
  // transpose, lowered later, finds its value set (plan.cc).
  const int view = b.view(y, group_type(b, group));
  b.plan().tensors[view].md = dst_md;
  b.set_value({group.tail(), 0}, view);
  b.set_value({transpose, 0}, y);
  return {};
}

// gemm's alpha * A B + beta * C as post-ops placed before the group's own:
// linear(alpha / beta), add C, linear(beta) (beta 0 or 1 need fewer).
void append_gemm_terms(Builder& b, int node, int c, const DstView& dst, PostOps* post) {
  const Node& n = b.graph().node(node);
  const float alpha = static_cast<float>(n.attrs.f(AttrKey::alpha));
  const float beta = c >= 0 ? static_cast<float>(n.attrs.f(AttrKey::beta)) : 0.f;
  const float pre = beta != 0 && beta != 1 ? alpha / beta : alpha;
  if (pre != 1) post->ops.append_eltwise(algorithm::eltwise_linear, pre, 0);
  if (beta == 0) return;
  // C per row (or any shape a post-op does not broadcast) is stretched first.
  const Shape cs = b.tensor(c).type.shape;
  const bool per_column =
      cs.rank() >= 1 && cs.numel() == cs.back() && cs.back() == dst.logical.back();
  if (!(cs.numel() == 1 || cs == dst.logical || per_column))
    c = broadcast_to(b, node, c, dst.logical);
  append_binary(b, algorithm::binary_add, c, dst, post);
  if (beta != 1) post->ops.append_eltwise(algorithm::eltwise_linear, beta, 0);
}

// matmul and gemm: shapes as dims of equal rank >= 2 (rank-1 operands gain
// a dimension of 1, as numpy does), then the constant-weights path or the
// general one.
Status lower_product(Builder& b, const FusionGroup& group) {
  const Node& n = b.graph().node(group.anchor);
  const bool gemm = n.op == Op::Gemm;
  const bool ta = gemm && n.attrs.i(AttrKey::trans_a), tb = gemm && n.attrs.i(AttrKey::trans_b);
  Shape as = b.graph().type(n.args[0]).shape, bs = b.graph().type(n.args[1]).shape;
  if (as.rank() == 1) as = Shape{1, as[0]};
  if (bs.rank() == 1) bs = Shape{bs[0], 1};
  Dims ad = dims_of(as), bd = dims_of(bs);
  const size_t rank = std::max(ad.size(), bd.size());
  ad.insert(ad.begin(), rank - ad.size(), 1);
  bd.insert(bd.begin(), rank - bd.size(), 1);
  const int64_t m = ta ? ad[rank - 1] : ad[rank - 2], k = ta ? ad[rank - 2] : ad[rank - 1];
  const int64_t nn = tb ? bd[rank - 2] : bd[rank - 1];
  const int bt = b.value(n.args[1]);
  bool b_batched = false;
  for (size_t i = 0; i + 2 < rank; ++i) b_batched = b_batched || bd[i] != 1;
  const bool weights_path = b.is_const(bt) && !b_batched && !ta;

  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= ad[i];
  Dims dd = ad;
  if (weights_path)
    dd = {rows, nn};
  else
    dd[rank - 2] = m, dd[rank - 1] = nn;
  for (size_t i = 0; i + 2 < rank && !weights_path; ++i) dd[i] = std::max(ad[i], bd[i]);

  PostOps post;
  const DstView dst{dd, group_type(b, group).shape, false, plain_desc(group_type(b, group))};
  if (gemm)
    append_gemm_terms(b, group.anchor, n.args.size() == 3 ? b.value(n.args[2]) : -1, dst, &post);
  TSO_RETURN_IF_ERROR(append_post_ops(b, group, dst, &post));
  if (weights_path) {
    Expected<bool> int8 = lower_int8_product(b, group, rows, k, nn, tb, post);
    if (!int8) return int8.error();
    if (*int8) return {};
    Operand a{b.as_plain(b.value(n.args[0])), {}};
    return lower_weights_product(b, group, a, rows, k, nn, bt, tb, post);
  }
  if (!ta && !tb) {
    Expected<bool> int8 = lower_int8_activations(b, group, ad, bd, post);
    if (!int8) return int8.error();
    if (*int8) return {};
  }
  Dims bdims = bd;
  if (tb) std::swap(bdims[rank - 1], bdims[rank - 2]);
  Dims adims = ad;
  if (ta) std::swap(adims[rank - 1], adims[rank - 2]);
  const Operand a = operand(b, b.value(n.args[0]), adims, ta);
  const Operand bo = operand(b, bt, bdims, tb);
  return lower_batched_product(b, group, a, bo, b.is_const(bt), post);
}

}  // namespace

Status lower_linear(Builder& b, const FusionGroup& group) {
  const Node& n = b.graph().node(group.anchor);
  for (const TensorRef& a : n.args)
    if (b.graph().type(a).dtype != DType::kF32)
      return Error{b.describe(group.anchor) + " computes on " + to_string(b.graph().type(a)) +
                   "; the CPU runtime computes on f32 only"};
  return n.op == Op::Conv2d ? lower_conv(b, group) : lower_product(b, group);
}

}  // namespace tso::cpu
