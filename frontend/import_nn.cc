// ONNX -> IR for convolution, pooling, matrix products and normalizations.
#include <algorithm>
#include <string>

#include "frontend/conv3d.h"
#include "frontend/einsum.h"
#include "frontend/import_ops.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

Ints ints_or(const onnx::NodeProto& n, std::string_view name, Ints def) {
  auto v = attr_ints(n, name);
  return v ? *v : def;
}

// The IR padding of a 2-D window operator from ONNX auto_pad and pads, for
// input extents `in` and effective window extents `eff`.
Expected<std::optional<Padding>> padding(const onnx::NodeProto& n, const Shape& x,
                                         const Ints& eff, const Ints& stride) {
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  Padding p;
  if (auto_pad == "VALID") return std::optional<Padding>(p);
  if (auto_pad == "SAME_UPPER") {
    p.mode = Padding::kSame;
    return std::optional<Padding>(p);
  }
  if (auto_pad == "SAME_LOWER") {
    p.mode = Padding::kExplicit;
    for (int d = 0; d < 2; ++d) {
      int64_t out = (x[2 + d] + stride[d] - 1) / stride[d];
      int64_t total = std::max<int64_t>((out - 1) * stride[d] + eff[d] - x[2 + d], 0);
      p.pads[d] = total - total / 2;  // the extra element at the beginning
      p.pads[d + 2] = total / 2;
    }
    return std::optional<Padding>(p);
  }
  if (auto_pad != "NOTSET") return Error{"has an unknown auto_pad '" + auto_pad + "'"};
  Ints pads = ints_or(n, "pads", {0, 0, 0, 0});
  if (pads.size() != 4) return Error{"has " + std::to_string(pads.size()) + " pads for 2 spatial axes"};
  if (pads != Ints{0, 0, 0, 0}) {
    p.mode = Padding::kExplicit;
    for (int k = 0; k < 4; ++k) p.pads[k] = pads[k];
  }
  return std::optional<Padding>(p);
}

// A 1-D window operator (SqueezeBERT's projections, the feature extractors
// of audio encoders, their pooling) runs as a 2-D one over [N, C, 1, L]: its
// attributes gain a leading spatial axis of extent 1, unstrided, unpadded.
onnx::NodeProto as_2d(const onnx::NodeProto& n) {
  onnx::NodeProto m = n;
  m.clear_attribute();
  for (const onnx::AttributeProto& a : n.attribute()) {
    onnx::AttributeProto& b = *m.add_attribute() = a;
    const std::string& name = a.name();
    if (name != "strides" && name != "dilations" && name != "kernel_shape" && name != "pads")
      continue;
    b.clear_ints();
    if (name == "pads" && a.ints_size() == 2) {
      for (int64_t v : {int64_t{0}, a.ints(0), int64_t{0}, a.ints(1)}) b.add_ints(v);
    } else {
      b.add_ints(name == "pads" ? 0 : 1);
      for (int64_t v : a.ints()) b.add_ints(v);
    }
  }
  return m;
}

Shape with_unit_height(const Shape& s) { return Shape{s[0], s[1], 1, s[2]}; }

// `t` with an axis of extent 1 inserted (unsqueeze) or removed (squeeze)
// at 2, the height of a 1-D operator run as a 2-D one.
Expected<TensorRef> height_axis(NodeContext& ctx, Op op, TensorRef t) {
  Attrs a;
  a.set(AttrKey::axes, Ints{2});
  return ctx.builder().add1(op, {t}, std::move(a), ctx.node().name());
}

// Adds `op` over `args`, the first `lifted` of them given a unit height
// first when `one_d`, and the result's height removed.
Expected<Mapped> add_window_op(NodeContext& ctx, Op op, std::vector<TensorRef> args, Attrs a,
                               bool one_d, size_t lifted) {
  if (!one_d) return add_one(ctx, op, std::move(args), std::move(a));
  for (size_t k = 0; k < lifted; ++k) {
    Expected<TensorRef> t = height_axis(ctx, Op::Unsqueeze, args[k]);
    if (!t) return t.error();
    args[k] = *t;
  }
  Expected<TensorRef> r = ctx.builder().add1(op, std::move(args), std::move(a), ctx.node().name());
  if (!r) return r.error();
  Expected<TensorRef> out = height_axis(ctx, Op::Squeeze, *r);
  if (!out) return out.error();
  return Mapped{{*out}, {}};
}

Expected<Mapped> map_conv(NodeContext& ctx) {
  TensorType x = ctx.type(0), w = ctx.type(1);
  const bool one_d = x.shape.rank() == 3 && w.shape.rank() == 3;
  if (x.shape.rank() == 5) return map_conv_3d(ctx);
  if (!one_d && (x.shape.rank() != 4 || w.shape.rank() != 4))
    return opaque("only 1-D, 2-D and 3-D convolutions map to conv2d");
  const onnx::NodeProto n = one_d ? as_2d(ctx.node()) : ctx.node();
  if (one_d) x.shape = with_unit_height(x.shape), w.shape = with_unit_height(w.shape);
  Ints stride = ints_or(n, "strides", {1, 1}), dil = ints_or(n, "dilations", {1, 1});
  if (stride.size() != 2 || dil.size() != 2) return Error{"has strides or dilations of the wrong length"};
  Ints eff = {(w.shape[2] - 1) * dil[0] + 1, (w.shape[3] - 1) * dil[1] + 1};
  Expected<std::optional<Padding>> pad = padding(n, x.shape, eff, stride);
  if (!pad) return pad.error();
  std::vector<TensorRef> args;
  for (int k = 0; k < 3; ++k) {
    if (k == 2 && !ctx.has_input(2)) break;
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    args.push_back(*t);
  }
  Attrs a;
  a.set(AttrKey::stride, stride).set(AttrKey::dilation, dil).set(AttrKey::pad, **pad);
  a.set(AttrKey::groups, attr_int(n, "group", 1));
  return add_window_op(ctx, Op::Conv2d, std::move(args), std::move(a), one_d, 2);
}

Expected<Mapped> map_pool(NodeContext& ctx) {
  const bool one_d = ctx.type(0).shape.rank() == 3;
  if (ctx.type(0).shape.rank() == 5) return map_pool_3d(ctx);
  if (!one_d && ctx.type(0).shape.rank() != 4)
    return opaque("only 1-D, 2-D and 3-D pooling map to the IR");
  const onnx::NodeProto n = one_d ? as_2d(ctx.node()) : ctx.node();
  const Shape x = one_d ? with_unit_height(ctx.type(0).shape) : ctx.type(0).shape;
  const bool avg = n.op_type() == "AveragePool";
  if (!avg && ctx.output_used(1)) return opaque("the IR's maxpool has no indices output");
  if (ints_or(n, "dilations", {1, 1}) != Ints{1, 1}) return opaque("dilated pooling");
  if (attr_int(n, "storage_order", 0) != 0) return opaque("column-major storage_order");
  Ints kernel = ints_or(n, "kernel_shape", {}), stride = ints_or(n, "strides", {1, 1});
  if (kernel.size() != 2 || stride.size() != 2)
    return Error{"needs a kernel_shape and strides of one value per spatial axis"};
  Expected<std::optional<Padding>> pad = padding(n, x, kernel, stride);
  if (!pad) return pad.error();
  Expected<TensorRef> in = ctx.tensor(0);
  if (!in) return in.error();
  Attrs a;
  a.set(AttrKey::kernel, kernel).set(AttrKey::stride, stride).set(AttrKey::pad, **pad);
  a.set(AttrKey::ceil_mode, attr_int(n, "ceil_mode", 0));
  if (avg) a.set(AttrKey::count_include_pad, attr_int(n, "count_include_pad", 0));
  return add_window_op(ctx, avg ? Op::AvgPool : Op::MaxPool, {*in}, std::move(a), one_d, 1);
}

Expected<Mapped> map_global_avgpool(NodeContext& ctx) {
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  return add_one(ctx, Op::GlobalAvgPool, {*x});
}

// GlobalMaxPool (timm's max and avg-max heads) is reduce_max over the
// spatial axes, kept.
Expected<Mapped> map_global_maxpool(NodeContext& ctx) {
  const int rank = ctx.type(0).shape.rank();
  if (rank < 3) return Error{"needs an input of rank 3 or more, got " + to_string(ctx.type(0))};
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  std::vector<int64_t> spatial;
  for (int d = 2; d < rank; ++d) spatial.push_back(d);
  Attrs a;
  a.set(AttrKey::axes, spatial).set(AttrKey::keepdims, int64_t{1});
  return add_one(ctx, Op::ReduceMax, {*x}, std::move(a));
}

Expected<Mapped> map_matmul(NodeContext& ctx) {
  if (ctx.type(0).shape.rank() < 2 || ctx.type(1).shape.rank() < 2)
    return opaque("a 1-D MatMul operand");
  Expected<TensorRef> a = ctx.tensor(0), b = ctx.tensor(1);
  if (!a) return a.error();
  if (!b) return b.error();
  return add_one(ctx, Op::Matmul, {*a, *b});
}

Expected<Mapped> map_gemm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  std::vector<TensorRef> args;
  for (int k = 0; k < 3; ++k) {
    if (k == 2 && !ctx.has_input(2)) break;
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    args.push_back(*t);
  }
  Attrs a;
  a.set(AttrKey::alpha, double(attr_float(n, "alpha", 1.0f)));
  a.set(AttrKey::beta, double(attr_float(n, "beta", 1.0f)));
  a.set(AttrKey::trans_a, attr_int(n, "transA", 0)).set(AttrKey::trans_b, attr_int(n, "transB", 0));
  return add_one(ctx, Op::Gemm, std::move(args), std::move(a));
}

Expected<Mapped> map_batchnorm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (attr_int(n, "training_mode", 0) != 0) return opaque("training-mode batch normalization");
  for (int k = 1; k < 5; ++k)
    if (ctx.output_used(k)) return opaque("running statistics outputs are used");
  std::vector<TensorRef> args;
  for (int k = 0; k < 5; ++k) {
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    args.push_back(*t);
  }
  Attrs a;
  a.set(AttrKey::epsilon, double(attr_float(n, "epsilon", 1e-5f)));
  return add_one(ctx, Op::BatchNorm, std::move(args), std::move(a));
}

Expected<Mapped> map_layernorm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (ctx.output_used(1) || ctx.output_used(2)) return opaque("mean or inverse deviation outputs are used");
  if (attr_int(n, "stash_type", 1) != 1) return opaque("stash_type other than float");
  std::vector<TensorRef> args;
  for (int k = 0; k < 2; ++k) {
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    args.push_back(*t);
  }
  if (ctx.has_input(2)) {
    Expected<TensorRef> t = ctx.tensor(2);
    if (!t) return t.error();
    args.push_back(*t);
  } else {  // the IR's layernorm always takes a bias
    TensorType s = ctx.type(1);
    args.push_back(ctx.new_weight("bias", HostTensor::zeros(s.dtype, s.shape)));
  }
  Attrs a;
  a.set(AttrKey::axis, attr_int(n, "axis", -1));
  a.set(AttrKey::epsilon, double(attr_float(n, "epsilon", 1e-5f)));
  return add_one(ctx, Op::LayerNorm, std::move(args), std::move(a));
}

// True when input k is a constant whose every element equals `v`.
bool constant_equal_to(NodeContext& ctx, int k, double v) {
  const HostTensor* t = ctx.constant(k);
  if (!t) return false;
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->get_f(i) != v) return false;
  return true;
}

// InstanceNormalization normalizes each (sample, channel) over the axes after
// the channel: layernorm from axis 2, with unit scale and zero shift over
// those axes, then the per-channel scale and bias as a mul and an add of them
// reshaped to [C, 1, ...], left out when they are constant ones and zeros (as
// torch.onnx writes GroupNorm below opset 18: a reshape to [N, groups, -1],
// this, a reshape back, then the affine mul and add).
Expected<Mapped> map_instance_norm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() != 3) return Error{"needs 3 inputs"};
  const TensorType x = ctx.type(0);
  if (x.shape.rank() < 3) return Error{"needs an input of rank 3 or more, got " + to_string(x)};
  if (ctx.type(1).shape != Shape{x.shape[1]} || ctx.type(2).shape != Shape{x.shape[1]})
    return Error{"scale " + to_string(ctx.type(1)) + " and bias " + to_string(ctx.type(2)) +
                 " must have the " + std::to_string(x.shape[1]) + " channels of " + to_string(x)};
  Expected<TensorRef> input = ctx.tensor(0);
  if (!input) return input.error();
  const Shape inner(x.shape.dims().subspan(2));
  HostTensor ones = HostTensor::zeros(x.dtype, inner);
  std::fill(ones.f.begin(), ones.f.end(), 1.0);
  const TensorRef unit = ctx.new_weight("unit_scale", ones);
  const TensorRef zero = ctx.new_weight("zero_shift", HostTensor::zeros(x.dtype, inner));
  const std::vector<TensorRef> norm_args = {*input, unit, zero};
  Attrs a;
  a.set(AttrKey::axis, int64_t{2});
  a.set(AttrKey::epsilon, double(attr_float(n, "epsilon", 1e-5f)));
  if (constant_equal_to(ctx, 1, 1.0) && constant_equal_to(ctx, 2, 0.0))
    return add_one(ctx, Op::LayerNorm, norm_args, std::move(a));
  GraphBuilder& b = ctx.builder();
  Expected<TensorRef> norm = b.add1(Op::LayerNorm, norm_args, std::move(a), n.name());
  if (!norm) return norm.error();
  std::vector<int64_t> per_channel(x.shape.rank() - 1, 1);
  per_channel[0] = x.shape[1];
  Attrs to_channels;
  to_channels.set(AttrKey::shape, per_channel);
  TensorRef affine[2];
  for (int k : {1, 2}) {
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    Expected<TensorRef> r = b.add1(Op::Reshape, {*t}, to_channels, n.name());
    if (!r) return r.error();
    affine[k - 1] = *r;
  }
  Expected<TensorRef> scaled = b.add1(Op::Mul, {*norm, affine[0]}, {}, n.name());
  if (!scaled) return scaled.error();
  return add_one(ctx, Op::Add, {*scaled, affine[1]});
}

// GroupNormalization normalizes each group of num_groups' channels over its
// channels and spatial axes: a reshape to [N, groups, -1], layernorm from
// axis 2 with unit scale and zero shift, a reshape back, then the scale and
// bias per channel (they must be constant) as a mul and an add. Opset 18's
// scale and bias have one entry per group, repeated over its channels; from
// opset 21 they have one per channel.
Expected<Mapped> map_group_norm(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() != 3) return Error{"needs 3 inputs"};
  const TensorType x = ctx.type(0);
  const int64_t groups = attr_int(n, "num_groups", 0);
  if (x.shape.rank() < 3 || !HostTensor::is_float(x.dtype))
    return Error{"needs a float input of rank 3 or more, got " + to_string(x)};
  if (groups < 1 || x.shape[1] % groups != 0)
    return Error{"num_groups " + std::to_string(groups) + " does not divide the " +
                 std::to_string(x.shape[1]) + " channels of " + to_string(x)};
  const bool by_channel = ctx.opset() >= 21;
  const int64_t entries = by_channel ? x.shape[1] : groups;
  if (ctx.type(1).shape != Shape{entries} || ctx.type(2).shape != Shape{entries})
    return Error{"scale " + to_string(ctx.type(1)) + " and bias " + to_string(ctx.type(2)) +
                 " must have one entry per " + (by_channel ? "channel" : "group") + " (" +
                 std::to_string(entries) + ") at opset " + std::to_string(ctx.opset())};
  const HostTensor *scale = ctx.constant(1), *bias = ctx.constant(2);
  if (!scale || !bias) return opaque("a scale or bias that is not constant");
  Expected<TensorRef> input = ctx.tensor(0);
  if (!input) return input.error();
  GraphBuilder& b = ctx.builder();
  const std::string name = n.name();
  Attrs grouped;
  grouped.set(AttrKey::shape, Ints{x.shape[0], groups, -1});
  Expected<TensorRef> g = b.add1(Op::Reshape, {*input}, grouped, name);
  if (!g) return g.error();
  const Shape inner{x.shape.numel() / x.shape[0] / groups};
  HostTensor ones = HostTensor::zeros(x.dtype, inner);
  std::fill(ones.f.begin(), ones.f.end(), 1.0);
  Attrs a;
  a.set(AttrKey::axis, int64_t{2});
  a.set(AttrKey::epsilon, double(attr_float(n, "epsilon", 1e-5f)));
  Expected<TensorRef> norm =
      b.add1(Op::LayerNorm,
             {*g, ctx.new_weight("unit_scale", ones),
              ctx.new_weight("zero_shift", HostTensor::zeros(x.dtype, inner))},
             std::move(a), name);
  if (!norm) return norm.error();
  Attrs back;
  back.set(AttrKey::shape, Ints(x.shape.begin(), x.shape.end()));
  Expected<TensorRef> y = b.add1(Op::Reshape, {*norm}, back, name);
  if (!y) return y.error();
  std::vector<int64_t> per_channel(x.shape.rank() - 1, 1);
  per_channel[0] = x.shape[1];
  TensorRef affine[2];
  for (int k : {0, 1}) {
    HostTensor c = HostTensor::zeros(x.dtype, Shape(per_channel));
    for (int64_t ch = 0; ch < x.shape[1]; ++ch)
      c.f[ch] = (k == 0 ? scale : bias)->get_f(by_channel ? ch : ch / (x.shape[1] / groups));
    affine[k] = ctx.new_weight(k == 0 ? "scale" : "bias", c);
  }
  Expected<TensorRef> scaled = b.add1(Op::Mul, {*y, affine[0]}, {}, name);
  if (!scaled) return scaled.error();
  return add_one(ctx, Op::Add, {*scaled, affine[1]});
}

// GridSample of 4-D inputs in bilinear ("linear" from opset 20) or nearest
// mode; bicubic and N-D stay opaque.
Expected<Mapped> map_grid_sample(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (ctx.type(0).shape.rank() != 4) return opaque("a GridSample of other than 4-D inputs");
  std::string mode = attr_string(n, "mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode != "bilinear" && mode != "nearest") return opaque("mode '" + mode + "'");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Expected<TensorRef> grid = ctx.tensor(1);
  if (!grid) return grid.error();
  Attrs a;
  a.set(AttrKey::mode, mode).set(AttrKey::padding_mode, attr_string(n, "padding_mode", "zeros"));
  a.set(AttrKey::align_corners, attr_int(n, "align_corners", 0));
  return add_one(ctx, Op::GridSample, {*x, *grid}, std::move(a));
}

// Softmax and LogSoftmax before opset 13 normalize the input flattened to
// 2-D at `axis`.
Expected<Mapped> map_softmax(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const Op op = n.op_type() == "LogSoftmax" ? Op::LogSoftmax : Op::Softmax;
  const Shape s = ctx.type(0).shape;
  const bool legacy = ctx.opset() < 13;
  int64_t axis = attr_int(n, "axis", legacy ? 1 : -1);
  if (axis < -s.rank() || axis >= std::max(s.rank(), 1)) return Error{"has axis out of range"};
  if (axis < 0) axis += s.rank();
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  if (!legacy || axis == s.rank() - 1) {
    Attrs a;
    a.set(AttrKey::axis, axis);
    return add_one(ctx, op, {*x}, std::move(a));
  }
  GraphBuilder& b = ctx.builder();
  const std::string name = ctx.node().name();
  Attrs fa, sa, ra;
  fa.set(AttrKey::axis, axis);
  Expected<TensorRef> flat = b.add1(Op::Flatten, {*x}, fa, name);
  if (!flat) return flat.error();
  sa.set(AttrKey::axis, int64_t{1});
  Expected<TensorRef> sm = b.add1(op, {*flat}, sa, name);
  if (!sm) return sm.error();
  ra.set(AttrKey::shape, Ints(s.begin(), s.end()));
  Expected<TensorRef> out = b.add1(Op::Reshape, {*sm}, ra, name);
  if (!out) return out.error();
  return Mapped{{*out}, {}};
}

}  // namespace

MapFn find_nn_mapping(std::string_view t) {
  static const std::pair<std::string_view, MapFn> kMaps[] = {
      {"Conv", map_conv},
      {"AveragePool", map_pool},
      {"MaxPool", map_pool},
      {"GlobalAveragePool", map_global_avgpool},
      {"GlobalMaxPool", map_global_maxpool},
      {"MatMul", map_matmul},
      {"Gemm", map_gemm},
      {"Einsum", map_einsum},
      {"BatchNormalization", map_batchnorm},
      {"LayerNormalization", map_layernorm},
      {"GroupNormalization", map_group_norm},
      {"InstanceNormalization", map_instance_norm},
      {"Softmax", map_softmax}, {"LogSoftmax", map_softmax},
      {"GridSample", map_grid_sample},
  };
  for (const auto& [name, fn] : kMaps)
    if (name == t) return fn;
  return nullptr;
}

}  // namespace tso::onnx_frontend
