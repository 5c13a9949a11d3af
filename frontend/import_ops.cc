// ONNX -> IR for elementwise operators and data movement, and the dispatch
// over every mapping.
#include "frontend/import_ops.h"
#include "frontend/attention.h"
#include "frontend/col2im.h"
#include "frontend/conv_transpose.h"
#include "frontend/depth_space.h"
#include "frontend/import_composite.h"
#include "frontend/import_repeat.h"
#include "frontend/lrn.h"
#include "frontend/node_chain.h"
#include "frontend/pad_modes.h"
#include "frontend/quantize.h"

#include <cmath>
#include <limits>
#include <string>

#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

struct Simple {
  std::string_view onnx;
  Op op;
  int inputs;
};
constexpr Simple kSimple[] = {
    {"Add", Op::Add, 2},         {"Sub", Op::Sub, 2},     {"Mul", Op::Mul, 2},
    {"Div", Op::Div, 2},         {"Pow", Op::Pow, 2},     {"Relu", Op::Relu, 1},
    {"Sigmoid", Op::Sigmoid, 1}, {"Tanh", Op::Tanh, 1},   {"Erf", Op::Erf, 1},
    {"Sqrt", Op::Sqrt, 1},       {"Neg", Op::Neg, 1},     {"Exp", Op::Exp, 1},
    {"IsNaN", Op::IsNaN, 1},     {"Where", Op::Where, 3},
    {"Equal", Op::Equal, 2},     {"Less", Op::Less, 2},   {"Greater", Op::Greater, 2},
    {"Not", Op::Not, 1},         {"And", Op::And, 2},     {"Or", Op::Or, 2},
    {"Softplus", Op::Softplus, 1}, {"Log", Op::Log, 1},   {"Abs", Op::Abs, 1},
    {"Sin", Op::Sin, 1},         {"Cos", Op::Cos, 1},
};

bool is_comparison(Op op) { return op == Op::Equal || op == Op::Less || op == Op::Greater; }

// Input k's constant value as integers; nullopt when it is not constant.
std::optional<Ints> const_ints(NodeContext& ctx, int k) {
  const HostTensor* t = ctx.constant(k);
  if (!t) return std::nullopt;
  return host_to_ints(*t);
}

Expected<std::vector<TensorRef>> tensors(NodeContext& ctx, int count) {
  std::vector<TensorRef> out;
  for (int k = 0; k < count; ++k) {
    Expected<TensorRef> t = ctx.tensor(k);
    if (!t) return t.error();
    out.push_back(*t);
  }
  return out;
}

Expected<Mapped> map_simple(NodeContext& ctx, const Simple& s) {
  if (s.op == Op::Pow && ctx.type(0).dtype != ctx.type(1).dtype)
    return opaque("an exponent of another element type");
  if (is_comparison(s.op) && ctx.type(0).dtype == DType::kBool)
    return opaque("a comparison of bool tensors");
  Expected<std::vector<TensorRef>> args = tensors(ctx, s.inputs);
  if (!args) return args.error();
  return add_one(ctx, s.op, std::move(*args));
}

// Axes from the attribute (before opset 13, or 18 for most reductions) or
// input 1.
std::optional<Ints> axes_of(NodeContext& ctx, bool from_input) {
  if (!from_input) return attr_ints(ctx.node(), "axes").value_or(Ints{});
  if (!ctx.has_input(1)) return Ints{};
  return const_ints(ctx, 1);
}

Expected<Mapped> map_clip(NodeContext& ctx) {
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  if (ctx.opset() < 11) {
    lo = attr_float(ctx.node(), "min", -std::numeric_limits<float>::infinity());
    hi = attr_float(ctx.node(), "max", std::numeric_limits<float>::infinity());
  } else {
    for (int k : {1, 2}) {
      if (!ctx.has_input(k)) continue;
      const HostTensor* t = ctx.constant(k);
      if (!t || t->numel() != 1) return opaque("Clip bounds that are not constant scalars");
      (k == 1 ? lo : hi) = t->get_f(0);
    }
  }
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::min, lo).set(AttrKey::max, hi);
  return add_one(ctx, Op::Clip, {*x}, std::move(a));
}

// ReduceMean, ReduceSum, ReduceMax and ReduceL2: their axes an input from
// opset 13 (ReduceSum) or 18 (the others), an attribute before.
template <Op kOp>
Expected<Mapped> map_reduce(NodeContext& ctx) {
  std::optional<Ints> axes = axes_of(ctx, reduce_axes_are_input(ctx.node().op_type(), ctx.opset()));
  if (!axes) return opaque("axes that are not constant");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  // No axes reduce none with noop_with_empty_axes, all of them without.
  if (axes->empty() && attr_int(ctx.node(), "noop_with_empty_axes", 0) != 0)
    return Mapped{{*x}, {}};
  Attrs a;
  a.set(AttrKey::axes, *axes).set(AttrKey::keepdims, attr_int(ctx.node(), "keepdims", 1));
  return add_one(ctx, kOp, {*x}, std::move(a));
}

// ReduceSumSquare, ReduceL1, ReduceMin, ReduceLogSum and ReduceLogSumExp as
// the IR's reductions of transformed inputs: the sum of x * x, the sum of
// |x|, -max(-x), log(sum(x)), and max + log(sum(exp(x - max))) with the max
// kept along the axes (squeezed after when keepdims = 0). With
// noop_with_empty_axes and no axes, the elementwise part alone, as ONNX's
// reference computes it. Their axes are an input from opset 18.
Expected<Mapped> map_reduce_composite(NodeContext& ctx) {
  const std::string& type = ctx.node().op_type();
  std::optional<Ints> axes = axes_of(ctx, reduce_axes_are_input(type, ctx.opset()));
  if (!axes) return opaque("axes that are not constant");
  if (type != "ReduceSumSquare" && type != "ReduceL1" && !HostTensor::is_float(ctx.type(0).dtype))
    return opaque("a " + type + " of integers");
  const bool noop = axes->empty() && attr_int(ctx.node(), "noop_with_empty_axes", 0) != 0;
  const int64_t keepdims = attr_int(ctx.node(), "keepdims", 1);
  NodeChain c(ctx);
  const TensorRef x = c.input(0);
  auto reduce = [&](Op op, TensorRef in, int64_t keep) {
    Attrs a;
    a.set(AttrKey::axes, *axes).set(AttrKey::keepdims, keep);
    return c.op(op, {in}, std::move(a));
  };
  if (type == "ReduceSumSquare") {
    const TensorRef square = c.op(Op::Mul, {x, x});
    return c.result(noop ? square : reduce(Op::ReduceSum, square, keepdims));
  }
  if (type == "ReduceL1") {
    const TensorRef magnitude = c.op(Op::Abs, {x});
    return c.result(noop ? magnitude : reduce(Op::ReduceSum, magnitude, keepdims));
  }
  if (noop) return c.result(type == "ReduceLogSum" ? c.op(Op::Log, {x}) : x);
  if (type == "ReduceMin")
    return c.result(c.op(Op::Neg, {reduce(Op::ReduceMax, c.op(Op::Neg, {x}), keepdims)}));
  if (type == "ReduceLogSum") return c.result(c.op(Op::Log, {reduce(Op::ReduceSum, x, keepdims)}));
  const TensorRef top = reduce(Op::ReduceMax, x, 1);
  const TensorRef sum = reduce(Op::ReduceSum, c.op(Op::Exp, {c.op(Op::Sub, {x, top})}), 1);
  const TensorRef y = c.op(Op::Add, {top, c.op(Op::Log, {sum})});
  if (keepdims) return c.result(y);
  const int rank = ctx.type(0).shape.rank();
  Ints squeezed;
  for (int d = 0; d < rank; ++d) squeezed.push_back(d);
  if (!axes->empty()) {
    squeezed.clear();
    for (int64_t a : *axes) squeezed.push_back(a < 0 ? a + rank : a);
  }
  return c.result(c.op(Op::Squeeze, y, AttrKey::axes, squeezed));
}

Expected<Mapped> map_reshape(NodeContext& ctx) {
  std::optional<Ints> shape = const_ints(ctx, 1);
  if (!shape) return opaque("a shape that is not constant");
  if (attr_int(ctx.node(), "allowzero", 0) != 0)
    for (int64_t d : *shape)
      if (d == 0) return opaque("allowzero with a zero extent");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::shape, *shape);
  return add_one(ctx, Op::Reshape, {*x}, std::move(a));
}

Expected<Mapped> map_flatten(NodeContext& ctx) {
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axis, attr_int(ctx.node(), "axis", 1));
  return add_one(ctx, Op::Flatten, {*x}, std::move(a));
}

Expected<Mapped> map_squeeze(NodeContext& ctx) {
  const bool squeeze = ctx.node().op_type() == "Squeeze";
  std::optional<Ints> axes = axes_of(ctx, ctx.opset() >= 13);
  if (!axes) return opaque("axes that are not constant");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axes, *axes);
  return add_one(ctx, squeeze ? Op::Squeeze : Op::Unsqueeze, {*x}, std::move(a));
}

Expected<Mapped> map_slice(NodeContext& ctx) {
  Ints v[4];
  for (int k = 1; k <= 4; ++k) {
    if (!ctx.has_input(k)) continue;
    std::optional<Ints> c = const_ints(ctx, k);
    if (!c) return opaque("slice bounds that are not constant");
    v[k - 1] = *c;
  }
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::starts, v[0]).set(AttrKey::ends, v[1]).set(AttrKey::axes, v[2]);
  a.set(AttrKey::steps, v[3]);
  return add_one(ctx, Op::Slice, {*x}, std::move(a));
}

Expected<Mapped> map_pad(NodeContext& ctx) {
  const std::string mode = attr_string(ctx.node(), "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return Error{"has padding mode '" + mode + "' (constant, reflect, edge or wrap)"};
  const int rank = ctx.type(0).shape.rank();
  Ints pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = attr_ints(ctx.node(), "pads").value_or(Ints{});
    value = attr_float(ctx.node(), "value", 0.0f);
  } else {
    std::optional<Ints> p = const_ints(ctx, 1);
    if (!p) return opaque("pads that are not constant");
    pads = *p;
    if (ctx.has_input(2) && mode == "constant") {
      const HostTensor* c = ctx.constant(2);
      if (!c || c->numel() != 1) return opaque("a pad value that is not a constant scalar");
      value = c->get_f(0);
    }
    if (ctx.has_input(3)) {  // opset 18: pads only for the listed axes
      std::optional<Ints> axes = const_ints(ctx, 3);
      if (!axes || pads.size() != 2 * axes->size()) return opaque("pad axes that are not constant");
      Ints full(2 * rank, 0);
      for (size_t k = 0; k < axes->size(); ++k) {
        int64_t ax = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
        if (ax < 0 || ax >= rank) return Error{"has pad axis out of range"};
        full[ax] = pads[k], full[ax + rank] = pads[k + axes->size()];
      }
      pads = full;
    }
  }
  if (static_cast<int>(pads.size()) != 2 * rank)
    return Error{"has " + std::to_string(pads.size()) + " pads for rank " + std::to_string(rank)};
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  // Negative pads crop: a slice first, then the padding that remains.
  Ints starts, ends, axes;
  const Shape s = ctx.type(0).shape;
  for (int d = 0; d < rank; ++d) {
    if (pads[d] >= 0 && pads[d + rank] >= 0) continue;
    axes.push_back(d);
    starts.push_back(std::max<int64_t>(-pads[d], 0));
    ends.push_back(s[d] + std::min<int64_t>(pads[d + rank], 0));
    pads[d] = std::max<int64_t>(pads[d], 0), pads[d + rank] = std::max<int64_t>(pads[d + rank], 0);
  }
  if (!axes.empty()) {
    Attrs sa;
    sa.set(AttrKey::starts, starts).set(AttrKey::ends, ends).set(AttrKey::axes, axes);
    sa.set(AttrKey::steps, Ints(axes.size(), 1));
    Expected<TensorRef> cropped = ctx.builder().add1(Op::Slice, {*x}, sa, ctx.node().name());
    if (!cropped) return cropped.error();
    x = *cropped;
  }
  if (mode != "constant") return pad_by_gathers(ctx, *x, mode, pads);
  Attrs a;
  a.set(AttrKey::pads, pads).set(AttrKey::value, value);
  return add_one(ctx, Op::Pad, {*x}, std::move(a));
}

Expected<Mapped> map_concat(NodeContext& ctx) {
  Expected<std::vector<TensorRef>> args = tensors(ctx, ctx.node().input_size());
  if (!args) return args.error();
  Attrs a;
  a.set(AttrKey::axis, attr_int(ctx.node(), "axis", 0));
  return add_one(ctx, Op::Concat, std::move(*args), std::move(a));
}

Expected<Mapped> map_split(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const Shape s = ctx.type(0).shape;
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < -s.rank() || axis >= s.rank()) return Error{"has axis out of range"};
  if (axis < 0) axis += s.rank();
  Ints sizes;
  if (ctx.opset() < 13) {
    sizes = attr_ints(n, "split").value_or(Ints{});
  } else if (ctx.has_input(1)) {
    std::optional<Ints> c = const_ints(ctx, 1);
    if (!c) return opaque("split sizes that are not constant");
    sizes = *c;
  }
  if (sizes.empty()) {  // equal parts; opset 18 lets the last one be smaller
    const int64_t parts = n.output_size(), d = s[static_cast<int>(axis)];
    if (parts < 1) return Error{"has no outputs"};
    const int64_t each = (d + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, d - k * each));
  }
  if (static_cast<int>(sizes.size()) != n.output_size())
    return Error{"has " + std::to_string(sizes.size()) + " split sizes for " +
                 std::to_string(n.output_size()) + " outputs"};
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axis, axis).set(AttrKey::sizes, sizes);
  Expected<std::vector<TensorRef>> outs = ctx.builder().add(Op::Split, {*x}, a, n.name());
  if (!outs) return outs.error();
  return Mapped{*outs, {}};
}

Expected<Mapped> map_transpose(NodeContext& ctx) {
  const int rank = ctx.type(0).shape.rank();
  Ints perm;
  for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
  perm = attr_ints(ctx.node(), "perm").value_or(perm);
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::perm, perm);
  return add_one(ctx, Op::Transpose, {*x}, std::move(a));
}

// A Cast to the element type the tensor already has is the identity, any
// other to a type the IR has is cast (a transformers attention mask: i64 to
// f32, f32 to bool).
Expected<Mapped> map_cast(NodeContext& ctx) {
  const int32_t elem = static_cast<int32_t>(attr_int(ctx.node(), "to", 0));
  std::optional<DType> to = dtype_from_onnx(elem);
  if (!to) return opaque("a conversion to " + onnx_type_name(elem));
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  if (*to == ctx.type(0).dtype) return Mapped{{*x}, {}};
  Attrs a;
  a.set(AttrKey::to, std::string(dtype_name(*to)));
  return add_one(ctx, Op::Cast, {*x}, std::move(a));
}

// Expand of a computed tensor (the attention mask) by a constant shape;
// Expand of constants folds.
Expected<Mapped> map_expand(NodeContext& ctx) {
  std::optional<Ints> shape = const_ints(ctx, 1);
  if (!shape) return opaque("a shape that is not constant");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::shape, *shape);
  return add_one(ctx, Op::Expand, {*x}, std::move(a));
}

// Gather and GatherElements. Constant indices (ViT's class token, a position
// table's rows, DeBERTa's relative positions) are checked here, so a model
// whose lookup cannot succeed is refused at import; indices computed at run
// time (token ids) are checked by the runtimes.
Expected<Mapped> map_gather(NodeContext& ctx) {
  const Shape data = ctx.type(0).shape;
  int64_t axis = attr_int(ctx.node(), "axis", 0);
  if (axis < -data.rank() || axis >= data.rank())
    return Error{"has axis " + std::to_string(axis) + " out of range for " + to_string(data)};
  if (axis < 0) axis += data.rank();
  if (const HostTensor* c = ctx.constant(1); c && !c->is_float()) {
    const int64_t extent = data[static_cast<int>(axis)];
    for (int64_t k = 0; k < c->numel(); ++k)
      if (c->get_i(k) < -extent || c->get_i(k) >= extent)
        return Error{"has index " + std::to_string(c->get_i(k)) + " out of range for axis " +
                     std::to_string(axis) + " of " + to_string(data)};
  }
  Expected<std::vector<TensorRef>> args = tensors(ctx, 2);
  if (!args) return args.error();
  Attrs a;
  a.set(AttrKey::axis, axis);
  const bool elements = ctx.node().op_type() == "GatherElements";
  return add_one(ctx, elements ? Op::GatherElements : Op::Gather, std::move(*args), std::move(a));
}

// GatherND with constant indices and no batch dimensions (transformers'
// attention masks under torch.export, LeViT's attention biases): the first
// k axes of data, which each index tuple names, become one axis, each tuple
// its linear index there, and the lookup a gather along that axis.
// Computed indices (CLIP's pooling at the end-of-text token under
// torch.export, `x[arange(B), ids.argmax(-1)]`) are looked up one column at
// a time, so that the runtime checks each index against its own axis: the
// first column gathers along axis 0, each later one picks, per index tuple,
// one element of the next axis by gather_elements and drops it.
Expected<Mapped> map_gather_nd_computed(NodeContext& ctx) {
  const Shape data = ctx.type(0).shape, idx = ctx.type(1).shape;
  if (ctx.type(1).dtype != DType::kI64 && ctx.type(1).dtype != DType::kI32)
    return Error{"has indices of " + to_string(ctx.type(1)) + " (i64 or i32)"};
  if (idx.rank() < 1) return Error{"needs indices of rank 1 or more"};
  const int64_t k = idx.back();
  if (k < 1 || k > data.rank())
    return Error{"has index tuples of " + std::to_string(k) + " for data " + to_string(data)};
  const int64_t tuples = idx.numel() / k;
  Ints out(idx.begin(), idx.end() - 1), rest(data.begin() + k, data.end());
  out.insert(out.end(), rest.begin(), rest.end());
  NodeChain chain(ctx);
  const TensorRef ids = chain.reshape(chain.input(1), {tuples, k});
  auto column = [&](int64_t j, Ints shape) {
    Attrs a;
    a.set(AttrKey::starts, Ints{j}).set(AttrKey::ends, Ints{j + 1}).set(AttrKey::axes, Ints{1});
    a.set(AttrKey::steps, Ints{1});
    return chain.reshape(chain.op(Op::Slice, {ids}, std::move(a)), std::move(shape));
  };
  Attrs first;
  first.set(AttrKey::axis, int64_t{0});
  TensorRef x = chain.op(Op::Gather, {chain.input(0), column(0, {tuples})}, std::move(first));
  for (int64_t j = 1; j < k; ++j) {  // x: [tuples, data[j], rest of data...]
    Ints one = {tuples, 1}, spread = {tuples, 1};
    for (int64_t d = j + 1; d < data.rank(); ++d) one.push_back(1), spread.push_back(data[d]);
    Attrs e, pick;
    e.set(AttrKey::shape, spread);
    pick.set(AttrKey::axis, int64_t{1});
    const TensorRef at = chain.op(Op::Expand, {column(j, one)}, std::move(e));
    Ints picked = {tuples};
    for (int64_t d = j + 1; d < data.rank(); ++d) picked.push_back(data[d]);
    x = chain.reshape(chain.op(Op::GatherElements, {x, at}, std::move(pick)), std::move(picked));
  }
  return chain.result(chain.reshape(x, std::move(out)));
}

Expected<Mapped> map_gather_nd(NodeContext& ctx) {
  if (attr_int(ctx.node(), "batch_dims", 0) != 0) return opaque("batch dimensions");
  const HostTensor* c = ctx.constant(1);
  if (!c) return map_gather_nd_computed(ctx);
  if (c->is_float()) return Error{"has floating-point indices"};
  const Shape data = ctx.type(0).shape, idx = c->shape;
  if (idx.rank() < 1) return Error{"needs indices of rank 1 or more"};
  const int64_t k = idx.back();
  if (k < 1 || k > data.rank())
    return Error{"has index tuples of " + std::to_string(k) + " for data " + to_string(data)};
  Ints flat = {1};
  for (int d = 0; d < data.rank(); ++d)
    if (d < k)
      flat[0] *= data[d];
    else
      flat.push_back(data[d]);
  HostTensor linear = HostTensor::zeros(DType::kI64, Shape(idx.dims().first(idx.rank() - 1)));
  for (int64_t t = 0; t < linear.numel(); ++t) {
    int64_t at = 0;
    for (int d = 0; d < k; ++d) {
      int64_t v = c->get_i(t * k + d);
      if (v < -data[d] || v >= data[d])
        return Error{"has index " + std::to_string(v) + " out of range for axis " +
                     std::to_string(d) + " of " + to_string(data)};
      at = at * data[d] + (v < 0 ? v + data[d] : v);
    }
    linear.i[t] = at;
  }
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  if (k > 1) {
    Attrs r;
    r.set(AttrKey::shape, flat);
    x = ctx.builder().add1(Op::Reshape, {*x}, std::move(r), ctx.node().name());
    if (!x) return x.error();
  }
  Attrs a;
  a.set(AttrKey::axis, int64_t{0});
  return add_one(ctx, Op::Gather, {*x, ctx.new_weight("indices", linear)}, std::move(a));
}

// LeakyRelu with its slope written out (ONNX's default 0.01).
Expected<Mapped> map_leaky_relu(NodeContext& ctx) {
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::alpha, static_cast<double>(attr_float(ctx.node(), "alpha", 0.01f)));
  return add_one(ctx, Op::LeakyRelu, {*x}, std::move(a));
}

// PRelu (the ResNets of face recognition, ENet): leaky_relu where the slope
// is one constant, else relu(x) - slope * relu(-x), which is x from 0 up and
// slope * x below it, infinities included (x - relu(x) would make inf - inf).
Expected<Mapped> map_prelu(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() != 2) return Error{"needs 2 inputs"};
  const TensorType xt = ctx.type(0), st = ctx.type(1);
  if (!HostTensor::is_float(xt.dtype)) return opaque("a PRelu of integers");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  const HostTensor* slope = ctx.constant(1);
  if (slope && slope->numel() == 1 && st.shape.rank() <= xt.shape.rank()) {
    Attrs a;
    a.set(AttrKey::alpha, slope->get_f(0));
    return add_one(ctx, Op::LeakyRelu, {*x}, std::move(a));
  }
  Expected<TensorRef> s = ctx.tensor(1);
  if (!s) return s.error();
  GraphBuilder& b = ctx.builder();
  Expected<TensorRef> pos = b.add1(Op::Relu, {*x}, {}, n.name());
  if (!pos) return pos.error();
  Expected<TensorRef> flipped = b.add1(Op::Neg, {*x}, {}, n.name());
  if (!flipped) return flipped.error();
  Expected<TensorRef> neg = b.add1(Op::Relu, {*flipped}, {}, n.name());
  if (!neg) return neg.error();
  Expected<TensorRef> scaled = b.add1(Op::Mul, {*s, *neg}, {}, n.name());
  if (!scaled) return scaled.error();
  return add_one(ctx, Op::Sub, {*pos, *scaled});
}

// LessOrEqual and GreaterOrEqual as or(less, equal) and or(greater, equal),
// which keep IEEE's answer for NaN (false), unlike not(greater).
Expected<Mapped> map_or_equal(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() != 2) return Error{"needs 2 inputs"};
  if (ctx.type(0).dtype == DType::kBool) return opaque("a comparison of bool tensors");
  Expected<std::vector<TensorRef>> args = tensors(ctx, 2);
  if (!args) return args.error();
  GraphBuilder& b = ctx.builder();
  const Op strict = n.op_type() == "LessOrEqual" ? Op::Less : Op::Greater;
  Expected<TensorRef> lt = b.add1(strict, *args, {}, n.name());
  if (!lt) return lt.error();
  Expected<TensorRef> eq = b.add1(Op::Equal, *args, {}, n.name());
  if (!eq) return eq.error();
  return add_one(ctx, Op::Or, {*lt, *eq});
}

// CumSum along a constant axis (RoBERTa's position ids sum the padding mask).
Expected<Mapped> map_cumsum(NodeContext& ctx) {
  std::optional<Ints> axis = const_ints(ctx, 1);
  if (!axis || axis->size() != 1) return opaque("an axis that is not one constant");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axis, (*axis)[0])
      .set(AttrKey::exclusive, attr_int(ctx.node(), "exclusive", 0))
      .set(AttrKey::reverse, attr_int(ctx.node(), "reverse", 0));
  return add_one(ctx, Op::CumSum, {*x}, std::move(a));
}

// ArgMax, and ArgMin as the ArgMax of an order-reversing map that keeps ties
// and NaN where they were: the negation of floats, -1 - x of integers (which,
// unlike -x, overflows nowhere: it maps [min, max] onto [min, max]).
Expected<Mapped> map_arg_max(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const bool min = n.op_type() == "ArgMin";
  const DType dtype = ctx.type(0).dtype;
  if (min && !HostTensor::is_float(dtype) && dtype != DType::kI64 && dtype != DType::kI32)
    return opaque("an ArgMin of " + std::string(dtype_name(dtype)));
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  if (min && HostTensor::is_float(dtype)) {
    x = ctx.builder().add1(Op::Neg, {*x}, {}, n.name());
  } else if (min) {
    HostTensor minus_one = HostTensor::zeros(dtype, Shape{});
    minus_one.i[0] = -1;
    x = ctx.builder().add1(Op::Sub, {ctx.new_weight("minus_one", minus_one), *x}, {}, n.name());
  }
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axis, attr_int(n, "axis", 0))
      .set(AttrKey::keepdims, attr_int(n, "keepdims", 1))
      .set(AttrKey::select_last_index, attr_int(n, "select_last_index", 0));
  return add_one(ctx, Op::ArgMax, {*x}, std::move(a));
}

// TopK of a constant k (of one element, 1 to the axis' extent) on floats:
// `top_k` (the region proposals of torchvision's R-CNNs). A k the graph
// computes gives shapes only the data knows (frontend/dynamic_part.h).
Expected<Mapped> map_top_k(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const TensorType x_type = ctx.type(0);
  const HostTensor* k = ctx.constant(1);
  if (!k || k->is_float() || k->numel() != 1) return opaque("k is not one constant integer");
  if (!HostTensor::is_float(x_type.dtype))
    return opaque("a TopK of " + std::string(dtype_name(x_type.dtype)));
  const int rank = x_type.shape.rank();
  int64_t axis = attr_int(n, "axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank) return Error{"axis " + std::to_string(axis) +
                                                              " is out of range for " +
                                                              to_string(x_type)};
  if (axis < 0) axis += rank;
  if (k->get_i(0) < 1 || k->get_i(0) > x_type.shape[static_cast<int>(axis)])
    return opaque("k " + std::to_string(k->get_i(0)) + " is not within the axis' extent");
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  Attrs a;
  a.set(AttrKey::axis, axis)
      .set(AttrKey::k, k->get_i(0))
      .set(AttrKey::largest, attr_int(n, "largest", 1))
      .set(AttrKey::sorted, attr_int(n, "sorted", 1));
  Expected<std::vector<TensorRef>> outs =
      ctx.builder().add(Op::TopK, {*x}, std::move(a), n.name());
  if (!outs) return outs.error();
  return Mapped{*outs, {}};
}

// Sum and Mean of any number of inputs: adds left to right, as ONNX's
// reference sums, and Mean that sum divided by the count.
Expected<Mapped> map_sum(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() < 1) return Error{"needs at least 1 input"};
  NodeChain c(ctx);
  TensorRef t = c.input(0);
  for (int k = 1; k < n.input_size(); ++k) t = c.op(Op::Add, {t, c.input(k)});
  if (n.op_type() == "Mean" && n.input_size() > 1)
    t = c.op(Op::Div, {t, c.scalar("count", n.input_size())});
  return c.result(t);
}

// Max and Min of any number of inputs: a chain of the binary operator, the
// input itself when alone.
Expected<Mapped> map_extremes(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (n.input_size() < 1) return Error{"needs at least 1 input"};
  const Op op = n.op_type() == "Max" ? Op::Max : Op::Min;
  NodeChain c(ctx);
  TensorRef t = c.input(0);
  for (int k = 1; k < n.input_size(); ++k) t = c.op(op, {t, c.input(k)});
  return c.result(t);
}

// Elu(x) = relu(x) + alpha (exp(min(x, 0)) - 1) and Selu(x) = gamma (relu(x)
// + alpha exp(min(x, 0)) - alpha), min(x, 0) being -relu(-x) (exact, exp of
// -0 is 1), as ONNX's reference computes them; Softsign(x) = x / (1 + |x|),
// |x| = relu(x) + relu(-x).
Expected<Mapped> map_exp_units(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (!HostTensor::is_float(ctx.type(0).dtype)) return opaque("a " + n.op_type() + " of integers");
  NodeChain c(ctx);
  const TensorRef x = c.input(0);
  const TensorRef pos = c.op(Op::Relu, {x});
  const TensorRef flipped = c.op(Op::Relu, {c.op(Op::Neg, {x})});
  if (n.op_type() == "Softsign") {
    const TensorRef abs = c.op(Op::Add, {pos, flipped});
    return c.result(c.op(Op::Div, {x, c.op(Op::Add, {c.scalar("one", 1.0), abs})}));
  }
  const bool selu = n.op_type() == "Selu";
  const double alpha = attr_float(n, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
  const TensorRef e = c.op(Op::Exp, {c.op(Op::Neg, {flipped})});
  if (!selu) {
    const TensorRef below = c.op(Op::Sub, {e, c.scalar("one", 1.0)});
    return c.result(c.op(Op::Add, {pos, c.op(Op::Mul, {below, c.scalar("alpha", alpha)})}));
  }
  const double gamma = attr_float(n, "gamma", 1.05070102214813232421875f);
  const TensorRef scaled = c.op(Op::Mul, {e, c.scalar("alpha", alpha)});
  const TensorRef below = c.op(Op::Sub, {scaled, c.scalar("alpha_", alpha)});
  return c.result(c.op(Op::Mul, {c.op(Op::Add, {pos, below}), c.scalar("gamma", gamma)}));
}

// HardSigmoid(x) = clip(alpha x + beta, 0, 1), and HardSwish(x) =
// x HardSigmoid(x) with alpha = 1/6 and beta = 1/2 (MobileNetV3's
// activations): mul, add and clip by scalar weights, which every runtime runs.
Expected<Mapped> map_hard_sigmoid(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const bool swish = n.op_type() == "HardSwish";
  HostTensor alpha = HostTensor::zeros(ctx.type(0).dtype, Shape{}), beta = alpha;
  if (!alpha.is_float()) return opaque("a " + n.op_type() + " of integers");
  alpha.f[0] = swish ? 1.0 / 6 : attr_float(n, "alpha", 0.2f);
  beta.f[0] = swish ? 0.5 : attr_float(n, "beta", 0.5f);
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  GraphBuilder& b = ctx.builder();
  Expected<TensorRef> scaled = b.add1(Op::Mul, {*x, ctx.new_weight("alpha", alpha)}, {}, n.name());
  if (!scaled) return scaled.error();
  Expected<TensorRef> shifted =
      b.add1(Op::Add, {*scaled, ctx.new_weight("beta", beta)}, {}, n.name());
  if (!shifted) return shifted.error();
  Attrs unit;
  unit.set(AttrKey::min, 0.0).set(AttrKey::max, 1.0);
  if (!swish) return add_one(ctx, Op::Clip, {*shifted}, std::move(unit));
  Expected<TensorRef> gate = b.add1(Op::Clip, {*shifted}, std::move(unit), n.name());
  if (!gate) return gate.error();
  return add_one(ctx, Op::Mul, {*x, *gate});
}

// Mish(x) = x tanh(softplus(x)) (opset 18; exporters below it write the
// three nodes: timm's CSPNet and DarkNet).
Expected<Mapped> map_mish(NodeContext& ctx) {
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  GraphBuilder& b = ctx.builder();
  Expected<TensorRef> soft = b.add1(Op::Softplus, {*x}, {}, ctx.node().name());
  if (!soft) return soft.error();
  Expected<TensorRef> gate = b.add1(Op::Tanh, {*soft}, {}, ctx.node().name());
  if (!gate) return gate.error();
  return add_one(ctx, Op::Mul, {*x, *gate});
}

// Reciprocal(x) = 1 / x, with the 1 held by a scalar weight.
Expected<Mapped> map_reciprocal(NodeContext& ctx) {
  Expected<TensorRef> x = ctx.tensor(0);
  if (!x) return x.error();
  HostTensor one = HostTensor::zeros(ctx.type(0).dtype, Shape{});
  if (!one.is_float()) return opaque("an integer reciprocal");
  one.f[0] = 1;
  return add_one(ctx, Op::Div, {ctx.new_weight("one", one), *x});
}

MapFn find_data_mapping(std::string_view t) {
  static const std::pair<std::string_view, MapFn> kMaps[] = {
      {"Clip", map_clip},         {"ReduceMean", map_reduce<Op::ReduceMean>},
      {"ReduceSum", map_reduce<Op::ReduceSum>},
      {"ReduceMax", map_reduce<Op::ReduceMax>},
      {"ReduceL2", map_reduce<Op::ReduceL2>},
      {"ReduceSumSquare", map_reduce_composite},
      {"ReduceL1", map_reduce_composite},
      {"ReduceMin", map_reduce_composite},
      {"ReduceLogSum", map_reduce_composite},
      {"ReduceLogSumExp", map_reduce_composite},
      {"Reshape", map_reshape},   {"Flatten", map_flatten},
      {"Squeeze", map_squeeze},   {"Unsqueeze", map_squeeze},
      {"Slice", map_slice},       {"Pad", map_pad},
      {"Concat", map_concat},     {"Split", map_split},
      {"Transpose", map_transpose}, {"Cast", map_cast},
      {"Reciprocal", map_reciprocal}, {"Gather", map_gather},
      {"GatherElements", map_gather}, {"GatherND", map_gather_nd},
      {"HardSigmoid", map_hard_sigmoid}, {"HardSwish", map_hard_sigmoid},
      {"Mish", map_mish},
      {"Expand", map_expand},     {"CumSum", map_cumsum},
      {"ArgMax", map_arg_max},    {"ArgMin", map_arg_max},    {"TopK", map_top_k},
      {"LessOrEqual", map_or_equal}, {"GreaterOrEqual", map_or_equal},
      {"LeakyRelu", map_leaky_relu},
      {"PRelu", map_prelu},
      {"Sum", map_sum},           {"Mean", map_sum},
      {"Max", map_extremes},      {"Min", map_extremes},
      {"Elu", map_exp_units},     {"Selu", map_exp_units},     {"Softsign", map_exp_units},
      {"Tile", map_tile},         {"Resize", map_resize},
      {"Col2Im", map_col2im},     {"Gelu", map_gelu},
      {"ConvTranspose", map_conv_transpose},
      {"Swish", map_swish},       {"RMSNormalization", map_rms_norm},
      {"Attention", map_attention},
      {"LRN", map_lrn},
      {"DepthToSpace", map_depth_space}, {"SpaceToDepth", map_depth_space},
      {"QuantizeLinear", map_quantize}, {"DequantizeLinear", map_quantize},
  };
  for (const auto& [name, fn] : kMaps)
    if (name == t) return fn;
  return nullptr;
}

}  // namespace

Expected<Mapped> add_one(NodeContext& ctx, Op op, std::vector<TensorRef> args, Attrs attrs) {
  Expected<TensorRef> r =
      ctx.builder().add1(op, std::move(args), std::move(attrs), ctx.node().name());
  if (!r) return r.error();
  return Mapped{{*r}, {}};
}

// Whether the IR computes `op_type` on 8-bit integers: quantization, casts
// and the reshapes and transposes that move them; everything else on them
// (a QOperator model's QLinearConv, a MaxPool of u8) stays opaque.
bool reads_bytes(std::string_view op_type) {
  for (std::string_view t : {"QuantizeLinear", "DequantizeLinear", "Cast", "Reshape", "Flatten",
                             "Squeeze", "Unsqueeze", "Transpose"})
    if (op_type == t) return true;
  return false;
}

Expected<Mapped> map_node(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return opaque("not in the IR");
  for (int k = 0; k < n.input_size() && !reads_bytes(n.op_type()); ++k) {
    if (!ctx.has_input(k)) continue;
    const DType t = ctx.type(k).dtype;
    if (t == DType::kU8 || t == DType::kI8)
      return opaque("a " + n.op_type() + " of " + dtype_name(t) + " tensors");
  }
  for (const Simple& s : kSimple)
    if (s.onnx == n.op_type()) {
      if (n.input_size() != s.inputs) return Error{"needs " + std::to_string(s.inputs) + " inputs"};
      return map_simple(ctx, s);
    }
  MapFn f = find_nn_mapping(n.op_type());
  if (!f) f = find_data_mapping(n.op_type());
  if (!f) return opaque("not in the IR");
  return f(ctx);
}

}  // namespace tso::onnx_frontend
