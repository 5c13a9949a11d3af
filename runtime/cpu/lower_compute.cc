// Operators that run as one oneDNN primitive each, in whatever layout their
// input has: unary functions, broadcasting binaries, batchnorm, layernorm,
// softmax, pooling, reductions and concat. Erf, pow and binaries whose
// broadcasting oneDNN cannot express run as own kernels (kernels.h).
#include "runtime/common/geometry.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/logic.h"
#include "runtime/cpu/post_ops.h"

namespace tso::cpu {

using dnnl::algorithm;
using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

const TensorType& out_type(Builder& b, int node) { return b.graph().node(node).outs[0]; }

// A descriptor of `t`'s bytes with `rank` dimensions (leading ones added);
// `t` must be row-major unless the rank already matches.
memory::desc ranked(Builder& b, int* t, int rank) {
  const memory::desc md = b.tensor(*t).md;
  if (md.get_ndims() == rank) return md;
  *t = b.as_plain(*t);
  Dims d = dims_of(b.tensor(*t).type.shape);
  if (b.tensor(*t).type.shape.rank() == 0) d.clear();
  d.insert(d.begin(), rank - d.size(), 1);
  return plain_desc(d);
}

// y = alg(x) as oneDNN's eltwise in x's layout, as node's output.
Status lower_eltwise(Builder& b, int node, int x, algorithm alg, float alpha, float beta) {
  const memory::desc md = b.tensor(x).md;
  dnnl::eltwise_forward::primitive_desc pd(b.engine(), prop_kind::forward_inference, alg, md, md,
                                           alpha, beta, b.attr());
  b.note_scratchpad(pd);
  const int y = b.output_tensor(out_type(b, node), md, {x});
  b.add_primitive(impl_name("eltwise", pd), b.describe(node), dnnl::eltwise_forward(pd),
                  {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, y);
  return {};
}

Status lower_eltwise(Builder& b, int node, algorithm alg, float alpha, float beta) {
  return lower_eltwise(b, node, b.value(b.graph().node(node).args[0]), alg, alpha, beta);
}

void own_binary(Builder& b, int node, BinaryFn fn, int x, int z) {
  x = b.as_plain(x), z = b.as_plain(z);
  const TensorType& type = out_type(b, node);
  const int y = b.output_tensor(type, plain_desc(type), {x, z});
  const Shape xs = b.tensor(x).type.shape, zs = b.tensor(z).type.shape, ys = type.shape;
  b.add_kernel("binary (own)", b.describe(node), {x, z}, {y}, [=](const Bindings& m) -> Run {
    const float* px = reinterpret_cast<const float*>(m.data(x));
    const float* pz = reinterpret_cast<const float*>(m.data(z));
    float* py = reinterpret_cast<float*>(m.data(y));
    return [=] { broadcast_binary(fn, px, xs, pz, zs, py, ys); };
  });
  b.set_value({node, 0}, y);
}

// The value of a constant one-element tensor, when it is one.
bool constant_scalar(Builder& b, int t, float* v) {
  const PlanTensor& p = b.tensor(t);
  if (p.storage != Storage::kHost || p.type.shape.numel() != 1 || p.type.dtype != DType::kF32)
    return false;
  *v = *reinterpret_cast<const float*>(p.host_bytes);
  return true;
}

Status lower_binary(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  int x = b.value(n.args[0]), z = b.value(n.args[1]);
  const Shape& ys = n.outs[0].shape;
  const BinaryFn fn = binary_fn(n.op);
  // oneDNN's binary_max and binary_min answer the other operand for a NaN
  // one (vmaxps); ONNX Runtime answers NaN.
  if (fn == BinaryFn::kMax || fn == BinaryFn::kMin) {
    own_binary(b, node, fn, x, z);
    return {};
  }
  if (fn == BinaryFn::kPow) {
    float e = 0;
    if (b.tensor(x).type.shape == ys && constant_scalar(b, z, &e))
      return lower_eltwise(b, node, algorithm::eltwise_pow, 1.f, e);
    own_binary(b, node, fn, x, z);
    return {};
  }
  const bool commutative = fn == BinaryFn::kAdd || fn == BinaryFn::kMul;
  if (!(b.tensor(x).type.shape == ys) && commutative && b.tensor(z).type.shape == ys)
    std::swap(x, z);
  // A constant scalar operand (HardSwish's 3 and 1/6, a residual's layer
  // scale) is oneDNN's linear eltwise, jit in every layout, where its binary
  // with a broadcast scalar may fall back to the reference kernel (2 to 8 ms
  // per step in MobileNetV3's and LeViT's HardSwish). Exact: a times 1 plus
  // c, or c times a plus 0.
  float c = 0;
  if (fn != BinaryFn::kDiv && b.tensor(x).type.shape == ys && constant_scalar(b, z, &c))
    return lower_eltwise(b, node, x, algorithm::eltwise_linear, fn == BinaryFn::kMul ? c : 1.f,
                         fn == BinaryFn::kMul   ? 0.f
                         : fn == BinaryFn::kSub ? -c
                                                : c);
  if (fn == BinaryFn::kSub && b.tensor(z).type.shape == ys && constant_scalar(b, x, &c))
    return lower_eltwise(b, node, z, algorithm::eltwise_linear, -1.f, c);
  if (!(b.tensor(x).type.shape == ys)) {
    own_binary(b, node, fn, x, z);  // the left operand is stretched: oneDNN stretches src1 only
    return {};
  }
  const algorithm alg = fn == BinaryFn::kSub   ? algorithm::binary_sub
                        : fn == BinaryFn::kMul ? algorithm::binary_mul
                        : fn == BinaryFn::kDiv ? algorithm::binary_div
                                               : algorithm::binary_add;
  const int rank = static_cast<int>(dims_of(ys).size());
  const memory::desc x_md = ranked(b, &x, rank);
  const memory::desc z_md = ranked(b, &z, rank);
  dnnl::binary::primitive_desc pd(b.engine(), alg, x_md, z_md, x_md, b.attr());
  // oneDNN's reference binary, which a broadcast its jit kernels lack picks
  // (Swin's attention mask, [1, windows, 1, N, N] added to [1, windows,
  // heads, N, N]: 16 ms), runs element by element: tso's broadcasting kernel
  // runs along contiguous rows instead.
  if (std::string(pd.impl_info_str()).starts_with("ref")) {
    own_binary(b, node, fn, x, z);
    return {};
  }
  b.note_scratchpad(pd);
  const int y = b.output_tensor(n.outs[0], x_md, {x, z});
  b.add_primitive(impl_name("binary", pd), b.describe(node), dnnl::binary(pd),
                  {{DNNL_ARG_SRC_0, x, x_md}, {DNNL_ARG_SRC_1, z, z_md}, {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, y);
  return {};
}

// erf, sin and cos, which oneDNN's eltwise lacks: own kernels over plain f32.
Status lower_own_unary(Builder& b, int node) {
  const Op op = b.graph().node(node).op;
  const int x = b.as_plain(b.value(b.graph().node(node).args[0]));
  const TensorType& type = out_type(b, node);
  const int y = b.output_tensor(type, plain_desc(type), {x});
  const int64_t count = type.shape.numel();
  void (*fn)(const float*, float*, int64_t) = op == Op::Sin ? sin : op == Op::Cos ? cos : erf;
  b.add_kernel(std::string(op_name(op)) + " (own)", b.describe(node), {x}, {y},
               [=](const Bindings& m) -> Run {
                 const float* px = reinterpret_cast<const float*>(m.data(x));
                 float* py = reinterpret_cast<float*>(m.data(y));
                 return [=] { fn(px, py, count); };
               });
  b.set_value({node, 0}, y);
  return {};
}

Status lower_isnan(Builder& b, int node) {
  const int x = b.as_plain(b.value(b.graph().node(node).args[0]));
  const TensorType& type = out_type(b, node);
  const int y = b.output_tensor(type, {}, {x});
  const int64_t count = type.shape.numel();
  b.add_kernel("isnan (own)", b.describe(node), {x}, {y}, [=](const Bindings& m) -> Run {
    const float* px = reinterpret_cast<const float*>(m.data(x));
    uint8_t* py = reinterpret_cast<uint8_t*>(m.data(y));
    return [=] { isnan(px, py, count); };
  });
  b.set_value({node, 0}, y);
  return {};
}

Status lower_where(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int c = b.as_plain(b.value(n.args[0]));
  const int x = b.as_plain(b.value(n.args[1])), z = b.as_plain(b.value(n.args[2]));
  const TensorType& type = n.outs[0];
  const int y = b.output_tensor(type, plain_desc(type), {c, x, z});
  const Shape cs = b.tensor(c).type.shape, xs = b.tensor(x).type.shape, zs = b.tensor(z).type.shape,
              ys = type.shape;
  b.add_kernel("where (own)", b.describe(node), {c, x, z}, {y}, [=](const Bindings& m) -> Run {
    const uint8_t* pc = reinterpret_cast<const uint8_t*>(m.data(c));
    const std::byte *px = m.data(x), *pz = m.data(z);
    std::byte* py = m.data(y);
    return [=] { where_bytes(4, pc, cs, px, xs, pz, zs, py, ys); };
  });
  b.set_value({node, 0}, y);
  return {};
}

// batchnorm of a channels-last tensor whose channels are no multiple of 8,
// as tso's own kernel: oneDNN runs those at SSE4.1 width, NASNet's 84
// channels at 83x83 in 1.6 ms, the own kernel in 0.05 to 0.3 ms (profiled in
// the same process, 2026-11-29). Multiples of 8 not of 16 (AVX2 in oneDNN)
// were no clear win: 0.02 to 0.25 ms against 0.15.
bool own_batchnorm(Builder& b, int node, int x, const int (&p)[4]) {
  const Node& n = b.graph().node(node);
  const memory::desc md = b.tensor(x).md;
  const Dims dims = md.get_dims();
  if (dims.size() != 4 || dims[1] % 8 == 0 || md != memory::desc(dims, dt::f32, tag::nhwc))
    return false;
  const ChannelsLastBatchNorm k{dims[0] * dims[2] * dims[3], dims[1],
                                static_cast<float>(n.attrs.f(AttrKey::epsilon))};
  const int y = b.output_tensor(n.outs[0], md, {x, p[0], p[1], p[2], p[3]});
  b.add_kernel("batchnorm (own)", b.describe(node), {x, p[0], p[1], p[2], p[3]}, {y},
               [=](const Bindings& m) -> Run {
                 auto f = [&](int t) { return reinterpret_cast<const float*>(m.data(t)); };
                 const float *px = f(x), *scale = f(p[0]), *shift = f(p[1]), *mean = f(p[2]),
                             *var = f(p[3]);
                 float* py = reinterpret_cast<float*>(m.data(y));
                 return [=] { batchnorm_channels_last(k, px, scale, shift, mean, var, py); };
               });
  b.set_value({node, 0}, y);
  return true;
}

Status lower_batchnorm(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  int p[4];
  for (int i = 0; i < 4; ++i) p[i] = b.as_plain(b.value(n.args[i + 1]));
  if (own_batchnorm(b, node, x, p)) return {};
  const memory::desc md = b.tensor(x).md;
  const auto flags = dnnl::normalization_flags::use_global_stats |
                     dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      b.engine(), prop_kind::forward_inference, md, md,
      static_cast<float>(n.attrs.f(AttrKey::epsilon)), flags, b.attr());
  b.note_scratchpad(pd);
  const memory::desc c_md = plain_desc({md.get_dims()[1]});
  const int y = b.output_tensor(n.outs[0], md, {x, p[0], p[1], p[2], p[3]});
  b.add_primitive(impl_name("batchnorm", pd), b.describe(node),
                  dnnl::batch_normalization_forward(pd),
                  {{DNNL_ARG_SRC, x},
                   {DNNL_ARG_SCALE, p[0], c_md},
                   {DNNL_ARG_SHIFT, p[1], c_md},
                   {DNNL_ARG_MEAN, p[2], c_md},
                   {DNNL_ARG_VARIANCE, p[3], c_md},
                   {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, y);
  return {};
}

Status lower_softmax(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const memory::desc md = b.tensor(x).md;
  int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  if (axis < 0) axis += md.get_ndims();
  const algorithm alg =
      n.op == Op::LogSoftmax ? algorithm::softmax_log : algorithm::softmax_accurate;
  dnnl::softmax_forward::primitive_desc pd(b.engine(), prop_kind::forward_inference, alg, md, md,
                                           axis, b.attr());
  b.note_scratchpad(pd);
  const int y = b.output_tensor(n.outs[0], md, {x});
  b.add_primitive(impl_name(n.op == Op::LogSoftmax ? "log_softmax" : "softmax", pd),
                  b.describe(node), dnnl::softmax_forward(pd),
                  {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, y);
  return {};
}

// layernorm over the dimensions from `axis` on, as oneDNN's normalization of
// the last dimension of a [rows, n] view; scale and bias of other shapes than
// the normalized one are applied by a binary after it.
Status lower_layernorm(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const Shape& xs = n.outs[0].shape;
  int64_t axis = n.attrs.i(AttrKey::axis);
  if (axis < 0) axis += xs.rank();
  int64_t cols = 1;
  for (int i = static_cast<int>(axis); i < xs.rank(); ++i) cols *= xs[i];
  const int64_t rows = cols == 0 ? 0 : xs.numel() / cols;
  const memory::desc md = plain_desc({rows, cols});
  int scale = b.value(n.args[1]), shift = b.value(n.args[2]);
  const bool fused =
      b.tensor(scale).type.shape.numel() == cols && b.tensor(shift).type.shape.numel() == cols;
  auto flags = dnnl::normalization_flags::none;
  if (fused) flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::primitive_desc pd(
      b.engine(), prop_kind::forward_inference, md, md,
      static_cast<float>(n.attrs.f(AttrKey::epsilon)), flags, b.attr());
  b.note_scratchpad(pd);
  std::vector<int> reads = {x};
  std::vector<Arg> args = {{DNNL_ARG_SRC, x, md}};
  if (fused) {
    scale = b.as_plain(scale), shift = b.as_plain(shift);
    reads.insert(reads.end(), {scale, shift});
    args.push_back({DNNL_ARG_SCALE, scale, plain_desc({cols})});
    args.push_back({DNNL_ARG_SHIFT, shift, plain_desc({cols})});
  }
  const int y = b.output_tensor(n.outs[0], plain_desc(n.outs[0]), reads);
  args.push_back({DNNL_ARG_DST, y, md});
  b.add_primitive(impl_name("layernorm", pd), b.describe(node),
                  dnnl::layer_normalization_forward(pd), std::move(args));
  b.set_value({node, 0}, y);
  if (fused) return {};
  own_binary(b, node, BinaryFn::kMul, y, scale);
  own_binary(b, node, BinaryFn::kAdd, b.value({node, 0}), shift);
  return {};
}

Status lower_pool(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const Shape xs = b.tensor(x).type.shape;
  const std::vector<int64_t>& k = n.attrs.ints(AttrKey::kernel);
  Expected<std::vector<rt::WindowAxis>> win =
      rt::resolve_window(xs, k[0], k[1], n.attrs, n.attrs.i(AttrKey::ceil_mode) != 0);
  if (!win) return Error{b.describe(node) + ": " + win.error().message};
  const rt::WindowAxis &h = (*win)[0], &w = (*win)[1];
  // Windows may reach past the declared padding in ceil mode.
  const int64_t reach_h = (h.out - 1) * h.stride + h.k - h.in - h.pad_lo;
  const int64_t reach_w = (w.out - 1) * w.stride + w.k - w.in - w.pad_lo;
  const bool include_pad = n.op == Op::AvgPool && n.attrs.i(AttrKey::count_include_pad);
  if (include_pad && (reach_h > h.pad_hi || reach_w > w.pad_hi)) {
    const int xp = b.as_plain(x);
    const TensorType& type = n.outs[0];
    const int y = b.output_tensor(type, plain_desc(type), {xp});
    const AvgPoolGeometry geo{xs[0] * xs[1], h.in,     w.in,     h.out,    w.out,    h.k,     w.k,
                              h.stride,      w.stride, h.pad_lo, w.pad_lo, h.pad_hi, w.pad_hi};
    b.add_kernel("avgpool (own)", b.describe(node), {xp}, {y}, [=](const Bindings& m) -> Run {
      const float* px = reinterpret_cast<const float*>(m.data(xp));
      float* py = reinterpret_cast<float*>(m.data(y));
      return [=] { avgpool_include_pad(geo, px, py); };
    });
    b.set_value({node, 0}, y);
    return {};
  }
  const algorithm alg = n.op == Op::MaxPool ? algorithm::pooling_max
                        : include_pad       ? algorithm::pooling_avg_include_padding
                                            : algorithm::pooling_avg_exclude_padding;
  const memory::desc dst_any(dims_of(n.outs[0].shape), dt::f32, tag::any);
  dnnl::pooling_forward::primitive_desc pd(
      b.engine(), prop_kind::forward_inference, alg, b.tensor(x).md, dst_any, {h.stride, w.stride},
      {h.k, w.k}, {0, 0}, {h.pad_lo, w.pad_lo},
      {std::max(reach_h, h.pad_hi), std::max(reach_w, w.pad_hi)}, b.attr());
  b.note_scratchpad(pd);
  const int y = b.output_tensor(n.outs[0], pd.dst_desc(), {x});
  b.add_primitive(impl_name("pool", pd), b.describe(node), dnnl::pooling_forward(pd),
                  {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, y);
  return {};
}

// global_avgpool and reduce_mean over the two spatial axes as a pooling over
// the whole plane (jit kernels for every layout); reduce_max as tso's own
// kernels, one per run of consecutive axes; other reductions as oneDNN's reduction into the
// layout it picks, with the reduced dimensions kept as 1 and dropped by a
// view when the result has fewer.
// oneDNN's reduction of `op` (reduce_l2 as the L2 norm, p = 2).
algorithm reduction_of(Op op) {
  switch (op) {
    case Op::ReduceSum:
      return algorithm::reduction_sum;
    case Op::ReduceL2:
      return algorithm::reduction_norm_lp_sum;
    default:
      return algorithm::reduction_mean;
  }
}

// A reduction as tso's own kernels over the plain tensor, one per run of
// consecutive reduced axes, last run first, where oneDNN would run its
// reference kernel (Swin-V2's L2 norm over the head's last axis: 2.4 ms a
// step; selective kernels' sum over their branches) or, for a max, get -inf
// wrong. `dd`: x's dims with the reduced ones 1. Runs after the first are
// taken only when `chain` (a max of maxes is the max; a sum of sums rounds
// otherwise); false, lowering nothing, when there is more than one run and
// chaining is off.
bool own_reduce(Builder& b, int node, int x, const Dims& dd, bool chain) {
  const Node& n = b.graph().node(node);
  Dims cur = b.tensor(x).md.get_dims();
  const int rank = static_cast<int>(cur.size());
  std::vector<std::pair<int, int>> runs;  // [first, last] of each run, in order
  for (int i = 0; i < rank; ++i) {
    if (dd[i] == cur[i]) continue;
    if (!runs.empty() && std::all_of(cur.begin() + runs.back().second + 1, cur.begin() + i,
                                     [](int64_t d) { return d == 1; }))
      runs.back().second = i;
    else
      runs.push_back({i, i});
  }
  if (runs.size() > 1 && !chain) return false;
  const RowReduction::Kind kind = n.op == Op::ReduceSum   ? RowReduction::kSum
                                  : n.op == Op::ReduceMax ? RowReduction::kMax
                                  : n.op == Op::ReduceL2  ? RowReduction::kL2
                                                          : RowReduction::kMean;
  x = b.as_plain(x);
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    RowReduction r{kind, 1, 1, 1};
    for (int i = 0; i < rank; ++i)
      (i < run->first ? r.outer : i <= run->second ? r.reduced : r.inner) *= cur[i];
    for (int i = run->first; i <= run->second; ++i) cur[i] = 1;
    const TensorType type =
        run + 1 == runs.rend() ? n.outs[0] : TensorType{DType::kF32, Shape(std::span(cur))};
    const int y = b.output_tensor(type, plain_desc(type), {x});
    b.add_kernel(std::string(op_name(n.op)) + " (own)", b.describe(node), {x}, {y},
                 [=](const Bindings& m) -> Run {
                   const float* px = reinterpret_cast<const float*>(m.data(x));
                   float* py = reinterpret_cast<float*>(m.data(y));
                   return [=] { reduce_rows(r, px, py); };
                 });
    x = y;
  }
  b.set_value({node, 0}, x);
  return true;
}

Status lower_reduce(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const Dims xd = b.tensor(x).md.get_dims();
  const TensorType& type = n.outs[0];
  Dims dd = xd;
  if (n.op == Op::GlobalAvgPool) {
    for (size_t i = 2; i < dd.size(); ++i) dd[i] = 1;
  } else {
    const std::vector<int64_t>& axes = n.attrs.ints(AttrKey::axes);
    for (size_t i = 0; i < dd.size(); ++i)
      if (axes.empty()) dd[i] = 1;
    for (int64_t a : axes) dd[a < 0 ? a + dd.size() : a] = 1;
  }
  if (dd == xd && n.op != Op::ReduceL2) {  // nothing reduced
    b.set_value({node, 0}, b.view(b.as_plain(x), type));
    return {};
  }
  if (dd == xd) {  // the L2 norm of one element is |x|; oneDNN reduces something
    const int xp = b.as_plain(x);
    const memory::desc md = b.tensor(xp).md;
    dnnl::eltwise_forward::primitive_desc pd(b.engine(), prop_kind::forward_inference,
                                             algorithm::eltwise_abs, md, md, 0.f, 0.f, b.attr());
    b.note_scratchpad(pd);
    const int y = b.output_tensor(b.tensor(xp).type, md, {xp});
    b.add_primitive(impl_name("eltwise", pd), b.describe(node), dnnl::eltwise_forward(pd),
                    {{DNNL_ARG_SRC, xp}, {DNNL_ARG_DST, y}});
    b.set_value({node, 0}, b.view(y, type));
    return {};
  }
  // A max is tso's own over any axes: oneDNN's max reduction and max pooling
  // start from -FLT_MAX, so a row wholly -inf (every key of an attention row
  // masked) comes out -FLT_MAX, not -inf.
  if (n.op == Op::ReduceMax) {
    own_reduce(b, node, x, dd, /*chain=*/true);
    return {};
  }
  // A mean over the plane is a pooling over the whole plane: oneDNN's
  // reductions over the spatial axes of a channels-last or blocked tensor fall
  // back to its reference kernel (a squeeze-excitation's x.mean((2, 3)), GC
  // ViT's stem: 15.8 ms against 0.10 ms pooled).
  if (xd.size() == 4 && (n.op == Op::ReduceMean || n.op == Op::GlobalAvgPool) &&
      dd == Dims{xd[0], xd[1], 1, 1}) {
    const memory::desc dst_any({xd[0], xd[1], 1, 1}, dt::f32, tag::any);
    const algorithm alg = algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_forward::primitive_desc pd(b.engine(), prop_kind::forward_inference, alg,
                                             b.tensor(x).md, dst_any, {1, 1}, {xd[2], xd[3]},
                                             {0, 0}, {0, 0}, {0, 0}, b.attr());
    b.note_scratchpad(pd);
    const TensorType pooled{DType::kF32, Shape{xd[0], xd[1], 1, 1}};
    const int y = b.output_tensor(pooled, pd.dst_desc(), {x});
    b.add_primitive(impl_name("pool", pd), b.describe(node), dnnl::pooling_forward(pd),
                    {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
    b.set_value({node, 0}, type.shape == pooled.shape ? y : b.view(b.as_plain(y), type));
    return {};
  }
  const float p = n.op == Op::ReduceL2 ? 2.f : 0.f;
  dnnl::reduction::primitive_desc pd(b.engine(), reduction_of(n.op), b.tensor(x).md,
                                     memory::desc(dd, dt::f32, tag::any), p, 0.f, b.attr());
  if (std::string(pd.impl_info_str()).starts_with("ref") &&
      own_reduce(b, node, x, dd, /*chain=*/false))
    return {};
  b.note_scratchpad(pd);
  const int y =
      b.output_tensor({DType::kF32, Shape(std::span<const int64_t>(dd))}, pd.dst_desc(), {x});
  b.add_primitive(impl_name(op_name(n.op).data(), pd), b.describe(node), dnnl::reduction(pd),
                  {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
  b.set_value({node, 0}, dims_of(type.shape) == dd ? y : b.view(b.as_plain(y), type));
  return {};
}

Status lower_concat(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  const TensorType& type = n.outs[0];
  if (axis < 0) axis += type.shape.rank();
  std::vector<memory::desc> mds;
  std::vector<int> reads;
  std::vector<Arg> args;
  for (const TensorRef& r : n.args) {
    const int t = b.value(r);
    if (b.tensor(t).type.shape.numel() == 0) continue;
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(mds.size()), t});
    mds.push_back(b.tensor(t).md);
    reads.push_back(t);
  }
  const memory::desc dst_any(dims_of(type.shape), dt::f32, tag::any);
  dnnl::concat::primitive_desc pd(b.engine(), dst_any, axis, mds, b.attr());
  b.note_scratchpad(pd);
  const int y = b.output_tensor(type, pd.dst_desc(), reads);
  args.push_back({DNNL_ARG_DST, y});
  b.add_primitive(impl_name("concat", pd), b.describe(node), dnnl::concat(pd), std::move(args));
  b.set_value({node, 0}, y);
  return {};
}

}  // namespace

Status lower_compute(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  algorithm alg;
  float alpha, beta;
  if (eltwise_of(n, &alg, &alpha, &beta)) return lower_eltwise(b, node, alg, alpha, beta);
  switch (n.op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::ScalarMul:
    case Op::Pow:
    case Op::Max:
    case Op::Min:
      return lower_binary(b, node);
    case Op::Erf:
    case Op::Sin:
    case Op::Cos:
      return lower_own_unary(b, node);
    case Op::BatchNorm:
      return lower_batchnorm(b, node);
    case Op::Softmax:
    case Op::LogSoftmax:
      return lower_softmax(b, node);
    case Op::LayerNorm:
      return lower_layernorm(b, node);
    case Op::AvgPool:
    case Op::MaxPool:
      return lower_pool(b, node);
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2:
    case Op::GlobalAvgPool:
      return lower_reduce(b, node);
    case Op::Concat:
      return lower_concat(b, node);
    case Op::IsNaN:
      return lower_isnan(b, node);
    case Op::GridSample:
      return lower_grid_sample(b, node);
    case Op::Where:
      return lower_where(b, node);
    default:
      return Error{b.describe(node) + ": no CPU lowering for operator '" +
                   std::string(op_name(n.op)) + "'"};
  }
}

}  // namespace tso::cpu
