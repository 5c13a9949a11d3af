// IR -> ONNX, one operator at a time.
#include "frontend/export_ops.h"

#include <cmath>
#include <numbers>

#include "frontend/onnx_util.h"
#include "frontend/opaque.h"

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

std::string node_name(const Graph& g, int i) {
  const Node& n = g.node(i);
  return n.name.empty() ? std::string(op_name(n.op)) + "_" + std::to_string(i) : n.name;
}

std::vector<std::string> input_names(ExportContext& ctx, const Node& n) {
  std::vector<std::string> v;
  for (TensorRef r : n.args) v.push_back(ctx.name_of(r));
  return v;
}

// ONNX padding attributes of a 2-D window operator.
void set_padding(onnx::NodeProto* p, const Padding& pad) {
  if (pad.mode == Padding::kSame) set_attr(p, "auto_pad", std::string("SAME_UPPER"));
  else if (pad.mode == Padding::kExplicit) set_attr(p, "pads", Ints(pad.pads.begin(), pad.pads.end()));
}

HostTensor scalar(DType t, double v) {
  HostTensor h = HostTensor::zeros(t, Shape{});
  if (h.is_float()) h.f[0] = v;
  else h.i[0] = static_cast<int64_t>(v);
  return h;
}

// gelu(x) as `out`: ONNX Gelu, or in opsets without it the exact erf form
// x * 0.5 * (1 + erf(x / sqrt 2)).
void write_gelu(ExportContext& ctx, const std::string& x, const std::string& out, DType t,
                const std::string& name) {
  if (ctx.opset() >= 20) {
    ctx.add_node("Gelu", {x}, {out}, name);
    return;
  }
  std::string d = ctx.fresh(out + "/div"), e = ctx.fresh(out + "/erf"), a = ctx.fresh(out + "/add"),
              m = ctx.fresh(out + "/mul");
  ctx.add_node("Div", {x, ctx.constant(name + "/sqrt2", scalar(t, std::numbers::sqrt2))}, {d}, name + "/div");
  ctx.add_node("Erf", {d}, {e}, name + "/erf");
  ctx.add_node("Add", {e, ctx.constant(name + "/one", scalar(t, 1.0))}, {a}, name + "/add");
  ctx.add_node("Mul", {x, a}, {m}, name + "/mul");
  ctx.add_node("Mul", {m, ctx.constant(name + "/half", scalar(t, 0.5))}, {out}, name);
}

// clip(x; lo, hi) as `out`: ONNX Clip with its bounds as inputs, an
// infinite one left out.
void write_clip(ExportContext& ctx, const std::string& x, const std::string& out, DType t,
                double lo, double hi, const std::string& name) {
  std::vector<std::string> in{x};
  in.push_back(std::isinf(lo) && lo < 0 ? "" : ctx.constant(name + "/min", scalar(t, lo)));
  if (!(std::isinf(hi) && hi > 0)) in.push_back(ctx.constant(name + "/max", scalar(t, hi)));
  while (in.back().empty()) in.pop_back();
  ctx.add_node("Clip", in, {out}, name);
}

// layernorm as ONNX LayerNormalization, or below opset 17, which has none,
// in the nine nodes torch.onnx writes for it there: d = x - ReduceMean(x),
// d / Sqrt(ReduceMean(Pow(d, 2)) + epsilon) * scale + bias, over the axes
// from `axis` on. The importer reads that chain back as one layernorm
// (decomposed_layernorm.h), and ONNX Runtime fuses it as well.
void write_layernorm(ExportContext& ctx, int i) {
  const Node& n = ctx.graph().node(i);
  const std::string out = ctx.names()[i][0], name = node_name(ctx.graph(), i);
  const std::vector<std::string> in = input_names(ctx, n);
  const int64_t axis = n.attrs.i(AttrKey::axis);
  const float epsilon = static_cast<float>(n.attrs.f(AttrKey::epsilon));
  if (ctx.opset() >= 17) {
    onnx::NodeProto* p = ctx.add_node("LayerNormalization", in, {out}, name);
    set_attr(p, "axis", axis);
    set_attr(p, "epsilon", epsilon);
    return;
  }
  const int rank = n.outs[0].shape.rank();
  Ints axes;
  for (int64_t d = axis < 0 ? axis + rank : axis; d < rank; ++d) axes.push_back(d);
  const DType t = n.outs[0].dtype;
  auto mean = [&](const std::string& x, const std::string& tag) {
    const std::string m = ctx.fresh(out + "/" + tag);
    onnx::NodeProto* p = ctx.add_node("ReduceMean", {x}, {m}, name + "/" + tag);
    set_attr(p, "axes", axes);
    return m;
  };
  auto binary = [&](const char* op_type, const std::string& a, const std::string& b,
                    const std::string& tag) {
    const std::string r = ctx.fresh(out + "/" + tag);
    ctx.add_node(op_type, {a, b}, {r}, name + "/" + tag);
    return r;
  };
  const std::string d = binary("Sub", in[0], mean(in[0], "mean"), "centered");
  const std::string sq = binary("Pow", d, ctx.constant(name + "/two", scalar(t, 2.0)), "squared");
  const std::string var_eps =
      binary("Add", mean(sq, "variance"), ctx.constant(name + "/epsilon", scalar(t, epsilon)),
             "variance_eps");
  const std::string dev = ctx.fresh(out + "/deviation");
  ctx.add_node("Sqrt", {var_eps}, {dev}, name + "/deviation");
  const std::string scaled = binary("Mul", binary("Div", d, dev, "normalized"), in[1], "scaled");
  ctx.add_node("Add", {scaled, in[2]}, {out}, name);
}

// Writes `op_type` producing node i's output, followed by its fused
// activation when it has one.
onnx::NodeProto* with_act(ExportContext& ctx, int i, const std::string& op_type,
                          std::vector<std::string> inputs) {
  const Node& n = ctx.graph().node(i);
  const std::string out = ctx.names()[i][0], name = node_name(ctx.graph(), i);
  const Act act = n.attrs.act(AttrKey::act);
  if (act == Act::kNone) return ctx.add_node(op_type, std::move(inputs), {out}, name);
  const std::string mid = ctx.fresh(out + "/pre_act"), act_node = name + "/act";
  onnx::NodeProto* p = ctx.add_node(op_type, std::move(inputs), {mid}, name);
  const DType t = n.outs[0].dtype;
  switch (act) {
    case Act::kRelu:
      ctx.add_node("Relu", {mid}, {out}, act_node);
      break;
    case Act::kSigmoid:
      ctx.add_node("Sigmoid", {mid}, {out}, act_node);
      break;
    case Act::kTanh:
      ctx.add_node("Tanh", {mid}, {out}, act_node);
      break;
    case Act::kGelu:
      write_gelu(ctx, mid, out, t, act_node);
      break;
    case Act::kClip:
      write_clip(ctx, mid, out, t, n.attrs.f(AttrKey::min), n.attrs.f(AttrKey::max), act_node);
      break;
    case Act::kNone:
      break;
  }
  return p;
}

Status export_window(ExportContext& ctx, int i) {
  const Node& n = ctx.graph().node(i);
  const Attrs& a = n.attrs;
  onnx::NodeProto* p;
  if (n.op == Op::Conv2d) {
    p = with_act(ctx, i, "Conv", input_names(ctx, n));
    const TensorType& w = ctx.graph().type(n.args[1]);
    set_attr(p, "kernel_shape", Ints{w.shape[2], w.shape[3]});
    set_attr(p, "dilations", a.ints(AttrKey::dilation));
    set_attr(p, "group", a.i(AttrKey::groups));
  } else {
    const bool avg = n.op == Op::AvgPool;
    p = ctx.add_node(avg ? "AveragePool" : "MaxPool", input_names(ctx, n), {ctx.names()[i][0]},
                     node_name(ctx.graph(), i));
    set_attr(p, "kernel_shape", a.ints(AttrKey::kernel));
    set_attr(p, "ceil_mode", a.i(AttrKey::ceil_mode));
    if (avg) set_attr(p, "count_include_pad", a.i(AttrKey::count_include_pad));
  }
  set_attr(p, "strides", a.ints(AttrKey::stride));
  set_padding(p, a.pad(AttrKey::pad));
  return Status::Ok();
}

// ONNX has no update_slice: the exact decomposition. From the innermost axis
// out, along each axis the box does not cover whole, the part built so far
// (the patch, then the patch widened to the full extent of the inner axes)
// is concatenated between the slices of the base before and after the box;
// those slices are cut to the box along the outer axes. A box covering the
// base is the patch, an empty one the base (Identity).
Status export_update_slice(ExportContext& ctx, int i) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(i);
  const Shape& base = g.type(n.args[0]).shape;
  const Shape& patch = g.type(n.args[1]).shape;
  const Ints& starts = n.attrs.ints(AttrKey::starts);
  const std::string out = ctx.names()[i][0], name = node_name(g, i);
  std::vector<int> partial;  // axes the box does not cover whole, innermost first
  for (int d = base.rank() - 1; d >= 0; --d)
    if (patch[d] != base[d]) partial.push_back(d);
  if (partial.empty() || patch.numel() == 0) {
    ctx.add_node("Identity", {ctx.name_of(n.args[partial.empty() ? 1 : 0])}, {out}, name);
    return Status::Ok();
  }
  // base[box along axes < d, [lo, hi) along d, everything along axes > d].
  auto base_part = [&](int d, int64_t lo, int64_t hi, const std::string& tag) {
    Ints s, e, axes;
    for (int a = 0; a < d; ++a)
      s.push_back(starts[a]), e.push_back(starts[a] + patch[a]), axes.push_back(a);
    s.push_back(lo), e.push_back(hi), axes.push_back(d);
    const std::string part = ctx.fresh(out + "/" + tag);
    ctx.add_node("Slice",
                 {ctx.name_of(n.args[0]), ctx.constant(name + "/" + tag + "/starts", host_ints(s)),
                  ctx.constant(name + "/" + tag + "/ends", host_ints(e)),
                  ctx.constant(name + "/" + tag + "/axes", host_ints(axes))},
                 {part}, name + "/" + tag);
    return part;
  };
  std::string built = ctx.name_of(n.args[1]);
  for (size_t k = 0; k < partial.size(); ++k) {
    const int d = partial[k];
    const std::string axis = std::to_string(d);
    std::vector<std::string> pieces;
    if (starts[d] > 0) pieces.push_back(base_part(d, 0, starts[d], "before" + axis));
    pieces.push_back(built);
    if (starts[d] + patch[d] < base[d])
      pieces.push_back(base_part(d, starts[d] + patch[d], base[d], "after" + axis));
    const bool last = k + 1 == partial.size();
    built = last ? out : ctx.fresh(out + "/along" + axis);
    set_attr(ctx.add_node("Concat", pieces, {built}, last ? name : name + "/along" + axis), "axis",
             int64_t{d});
  }
  return Status::Ok();
}

// Operators whose extra parameters are ONNX inputs from opset 13 (Split,
// Squeeze, Unsqueeze, ReduceSum) or 18 (the other reductions) on, and
// attributes before.
void axes_input_or_attr(ExportContext& ctx, onnx::NodeProto* p, const std::string& attr,
                        const Ints& v, int64_t from_opset, bool skip_empty) {
  if (skip_empty && v.empty()) return;
  if (ctx.opset() >= from_opset) p->add_input(ctx.constant(p->name() + "/" + attr, host_ints(v)));
  else set_attr(p, attr, v);
}

Status export_data(ExportContext& ctx, int i) {
  const Node& n = ctx.graph().node(i);
  const Attrs& a = n.attrs;
  const std::string name = node_name(ctx.graph(), i);
  std::vector<std::string> in = input_names(ctx, n);
  const std::vector<std::string>& out = ctx.names()[i];
  auto add = [&](const std::string& op_type) { return ctx.add_node(op_type, in, out, name); };
  switch (n.op) {
    case Op::Concat: set_attr(add("Concat"), "axis", a.i(AttrKey::axis)); break;
    case Op::Gather: set_attr(add("Gather"), "axis", a.i(AttrKey::axis)); break;
    case Op::GatherElements: set_attr(add("GatherElements"), "axis", a.i(AttrKey::axis)); break;
    case Op::Expand:
      in.push_back(ctx.constant(name + "/shape", host_ints(a.ints(AttrKey::shape))));
      add("Expand");
      break;
    case Op::Cast:
      set_attr(add("Cast"), "to", int64_t{onnx_from_dtype(n.outs[0].dtype)});
      break;
    case Op::CumSum: {
      HostTensor axis = HostTensor::zeros(DType::kI64, Shape{});
      axis.i[0] = a.i(AttrKey::axis);
      in.push_back(ctx.constant(name + "/axis", axis));
      onnx::NodeProto* p = add("CumSum");
      if (a.i(AttrKey::exclusive)) set_attr(p, "exclusive", a.i(AttrKey::exclusive));
      if (a.i(AttrKey::reverse)) set_attr(p, "reverse", a.i(AttrKey::reverse));
      break;
    }
    case Op::TopK: {
      in.push_back(ctx.constant(name + "/k", host_ints({a.i(AttrKey::k)})));
      onnx::NodeProto* p = add("TopK");
      set_attr(p, "axis", a.i(AttrKey::axis));
      set_attr(p, "largest", a.i(AttrKey::largest));
      set_attr(p, "sorted", a.i(AttrKey::sorted));
      break;
    }
    case Op::ArgMax: {
      onnx::NodeProto* p = add("ArgMax");
      set_attr(p, "axis", a.i(AttrKey::axis));
      set_attr(p, "keepdims", a.i(AttrKey::keepdims));
      if (a.i(AttrKey::select_last_index))
        set_attr(p, "select_last_index", a.i(AttrKey::select_last_index));
      break;
    }
    case Op::Split: {
      onnx::NodeProto* p = add("Split");
      set_attr(p, "axis", a.i(AttrKey::axis));
      axes_input_or_attr(ctx, p, "split", a.ints(AttrKey::sizes), 13, false);
      break;
    }
    case Op::Transpose: set_attr(add("Transpose"), "perm", a.ints(AttrKey::perm)); break;
    case Op::Flatten: set_attr(add("Flatten"), "axis", a.i(AttrKey::axis)); break;
    case Op::Squeeze:
    case Op::Unsqueeze:
      axes_input_or_attr(ctx, add(n.op == Op::Squeeze ? "Squeeze" : "Unsqueeze"), "axes",
                         a.ints(AttrKey::axes), 13, false);
      break;
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2: {
      onnx::NodeProto* p = add(n.op == Op::ReduceMean  ? "ReduceMean"
                               : n.op == Op::ReduceSum ? "ReduceSum"
                               : n.op == Op::ReduceMax ? "ReduceMax"
                                                       : "ReduceL2");
      set_attr(p, "keepdims", a.i(AttrKey::keepdims));
      axes_input_or_attr(ctx, p, "axes", a.ints(AttrKey::axes), n.op == Op::ReduceSum ? 13 : 18,
                         false);
      break;
    }
    case Op::Reshape:
      in.push_back(ctx.constant(name + "/shape", host_ints(a.ints(AttrKey::shape))));
      add("Reshape");
      break;
    case Op::Slice:
      for (AttrKey k : {AttrKey::starts, AttrKey::ends, AttrKey::axes, AttrKey::steps})
        in.push_back(ctx.constant(name + "/" + std::string(attr_info(k).name), host_ints(a.ints(k))));
      add("Slice");
      break;
    case Op::Pad:
      in.push_back(ctx.constant(name + "/pads", host_ints(a.ints(AttrKey::pads))));
      in.push_back(ctx.constant(name + "/value", scalar(n.outs[0].dtype, a.f(AttrKey::value))));
      add("Pad");
      break;
    case Op::Enlarge: {
      const Shape& w = ctx.graph().type(n.args[0]).shape;
      const Ints& k = a.ints(AttrKey::kernel);
      int64_t ph = (k[0] - w[2]) / 2, pw = (k[1] - w[3]) / 2;
      in.push_back(ctx.constant(name + "/pads", host_ints({0, 0, ph, pw, 0, 0, ph, pw})));
      add("Pad");
      break;
    }
    case Op::Clip:
      write_clip(ctx, in[0], out[0], n.outs[0].dtype, a.f(AttrKey::min), a.f(AttrKey::max), name);
      break;
    default:
      TSO_CHECK(false, "not a data-movement operator");
  }
  return Status::Ok();
}

}  // namespace

HostTensor constant_value(const Node& node) {
  const Ints& s = node.attrs.ints(AttrKey::shape);
  HostTensor h = HostTensor::zeros(node.outs[0].dtype, node.outs[0].shape);
  auto set = [&](int64_t k) {
    if (h.is_float()) h.f[k] = 1;
    else h.i[k] = 1;
  };
  switch (node.op) {
    case Op::ConstOnes:
    case Op::ConstPool:
      for (int64_t k = 0; k < h.numel(); ++k) set(k);
      break;
    case Op::ConstEye:
      for (int64_t k = 0; k < s[0] && k < s[1]; ++k) set(k * s[1] + k);
      break;
    case Op::ConstEyeConv:
      for (int64_t c = 0; c < s[0] && c < s[1]; ++c)
        set(((c * s[1] + c) * s[2] + s[2] / 2) * s[3] + s[3] / 2);
      break;
    default: TSO_CHECK(false, "not a constant operator");
  }
  return h;
}

Status export_node(ExportContext& ctx, int i) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(i);
  const std::string name = node_name(g, i);
  const std::vector<std::string>& out = ctx.names()[i];
  auto simple = [&](const char* op_type) {
    ctx.add_node(op_type, input_names(ctx, n), out, name);
    return Status::Ok();
  };
  switch (n.op) {
    case Op::Conv2d:
    case Op::AvgPool:
    case Op::MaxPool: return export_window(ctx, i);
    case Op::Matmul: with_act(ctx, i, "MatMul", input_names(ctx, n)); return Status::Ok();
    case Op::Gemm: {
      onnx::NodeProto* p = with_act(ctx, i, "Gemm", input_names(ctx, n));
      set_attr(p, "alpha", static_cast<float>(n.attrs.f(AttrKey::alpha)));
      set_attr(p, "beta", static_cast<float>(n.attrs.f(AttrKey::beta)));
      set_attr(p, "transA", n.attrs.i(AttrKey::trans_a));
      set_attr(p, "transB", n.attrs.i(AttrKey::trans_b));
      return Status::Ok();
    }
    case Op::Add: return simple("Add");
    case Op::Sub: return simple("Sub");
    case Op::Mul:
    case Op::ScalarMul: return simple("Mul");
    case Op::Div: return simple("Div");
    case Op::Pow: return simple("Pow");
    case Op::Relu: return simple("Relu");
    case Op::Sigmoid: return simple("Sigmoid");
    case Op::Tanh: return simple("Tanh");
    case Op::Erf: return simple("Erf");
    case Op::Sqrt: return simple("Sqrt");
    case Op::Neg: return simple("Neg");
    case Op::Exp: return simple("Exp");
    case Op::Softplus: return simple("Softplus");
    case Op::Log: return simple("Log");
    case Op::Abs: return simple("Abs");
    case Op::Sin: return simple("Sin");
    case Op::Cos: return simple("Cos");
    case Op::Max: return simple("Max");
    case Op::Min: return simple("Min");
    case Op::LeakyRelu: {
      onnx::NodeProto* p = ctx.add_node("LeakyRelu", input_names(ctx, n), out, name);
      set_attr(p, "alpha", static_cast<float>(n.attrs.f(AttrKey::alpha)));
      return Status::Ok();
    }
    case Op::GlobalAvgPool: return simple("GlobalAveragePool");
    case Op::IsNaN: return simple("IsNaN");
    case Op::Where: return simple("Where");
    case Op::Equal: return simple("Equal");
    case Op::Less: return simple("Less");
    case Op::Greater: return simple("Greater");
    case Op::Not: return simple("Not");
    case Op::And: return simple("And");
    case Op::Or: return simple("Or");
    case Op::UpdateSlice:
      return export_update_slice(ctx, i);
    case Op::Gelu:
      write_gelu(ctx, input_names(ctx, n)[0], out[0], n.outs[0].dtype, name);
      return Status::Ok();
    case Op::BatchNorm: {
      onnx::NodeProto* p = ctx.add_node("BatchNormalization", input_names(ctx, n), out, name);
      set_attr(p, "epsilon", static_cast<float>(n.attrs.f(AttrKey::epsilon)));
      return Status::Ok();
    }
    case Op::LayerNorm:
      write_layernorm(ctx, i);
      return Status::Ok();
    case Op::Softmax:
    case Op::LogSoftmax: {
      const int64_t axis = n.attrs.i(AttrKey::axis);
      if (ctx.opset() < 13 && axis != n.outs[0].shape.rank() - 1)
        return Error{describe_node(g, i) + ": " + std::string(op_name(n.op)) +
                     " over a non-last axis needs opset 13"};
      const char* type = n.op == Op::Softmax ? "Softmax" : "LogSoftmax";
      set_attr(ctx.add_node(type, input_names(ctx, n), out, name), "axis", axis);
      return Status::Ok();
    }
    case Op::GridSample: {
      if (ctx.opset() < 16)
        return Error{describe_node(g, i) + ": GridSample needs opset 16, the model has " +
                     std::to_string(ctx.opset())};
      onnx::NodeProto* p = ctx.add_node("GridSample", input_names(ctx, n), out, name);
      const std::string mode = n.attrs.str(AttrKey::mode);
      set_attr(p, "mode", ctx.opset() >= 20 && mode == "bilinear" ? std::string("linear") : mode);
      set_attr(p, "padding_mode", n.attrs.str(AttrKey::padding_mode));
      set_attr(p, "align_corners", n.attrs.i(AttrKey::align_corners));
      return Status::Ok();
    }
    case Op::QuantizeLinear:
    case Op::DequantizeLinear: {
      // Below opset 13 the operators have no axis: one scale for the tensor.
      const bool per_tensor = g.type(n.args[1]).shape.numel() == 1;
      if (ctx.opset() < 13 && !per_tensor)
        return Error{describe_node(g, i) + ": a scale per axis needs opset 13, the model has " +
                     std::to_string(ctx.opset())};
      const char* type = n.op == Op::QuantizeLinear ? "QuantizeLinear" : "DequantizeLinear";
      onnx::NodeProto* p = ctx.add_node(type, input_names(ctx, n), out, name);
      if (ctx.opset() >= 13) set_attr(p, "axis", n.attrs.i(AttrKey::axis));
      return Status::Ok();
    }
    case Op::Opaque: {
      Expected<onnx::NodeProto> p = opaque_node_proto(n, input_names(ctx, n), out);
      if (!p) return p.error();
      onnx::NodeProto* q = ctx.add_node(p->op_type(), {}, {}, name);
      *q = std::move(*p);
      return Status::Ok();
    }
    default: return export_data(ctx, i);
  }
}

}  // namespace tso::onnx_frontend
