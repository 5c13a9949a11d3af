// Operator dispatch (one switch over Op, no default, so a new operator in
// core/ops.def fails to compile here until it is implemented), weight
// conversion, and whole-graph evaluation.
#include "runtime/reference/executor.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/half.h"
#include "runtime/common/memory.h"
#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

namespace {

static_assert(std::endian::native == std::endian::little,
              "weight bytes are little-endian and read with memcpy");

template <class S>
using Outputs = Expected<std::vector<Tensor<S>>>;

template <class S>
Outputs<S> one(Expected<Tensor<S>> t) {
  if (!t) return t.error();
  std::vector<Tensor<S>> v;
  v.push_back(std::move(*t));
  return v;
}

template <class S>
Outputs<S> one(Tensor<S> t) {
  std::vector<Tensor<S>> v;
  v.push_back(std::move(t));
  return v;
}

std::string describe(const Node& n) {
  std::string op(op_name(n.op));
  return n.name.empty() ? "node (" + op + ")" : "node '" + n.name + "' (" + op + ")";
}

// Runs one operator; errors carry the operator but not the node, which the
// callers add in the form they know best.
template <class S>
Outputs<S> run(const Node& n, Args<S> in) {
  const OpInfo& info = op_info(n.op);
  const int count = static_cast<int>(in.size());
  if (count < info.min_inputs || (info.max_inputs != kVariadic && count > info.max_inputs))
    return Error{std::string(info.name) + ": got " + std::to_string(count) + " inputs"};
  for (const Tensor<S>* t : in)
    if (t == nullptr) return Error{std::string(info.name) + ": missing argument"};
  using E = Elementwise<S>;
  const Attrs& a = n.attrs;
  static const Tensor<S> kNone;  // both branches lvalues: no copy of in[0]
  const Tensor<S>& x = count > 0 ? *in[0] : kNone;
  switch (n.op) {
    case Op::Input:
      return Error{"input '" + n.name + "' has no value; feed it to evaluate"};
    case Op::Weight:
      if (!n.data) return Error{"weight '" + n.name + "' has no stored data and no feed"};
      return one(weight_value<S>(*n.data));
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool: return one(ShapeOps<S>::constant(n.op, a));
    case Op::Conv2d: return one(ConvPool<S>::conv2d(x, *in[1], count > 2 ? in[2] : nullptr, a));
    case Op::Matmul: return one(Linalg<S>::matmul(x, *in[1], a));
    case Op::Add: return one(E::binary(Bin::kAdd, x, *in[1]));
    case Op::Mul: return one(E::binary(Bin::kMul, x, *in[1]));
    case Op::ScalarMul: return one(E::smul(x, *in[1]));
    case Op::Relu: return one(E::unary(Fn::kRelu, x));
    case Op::Sigmoid: return one(E::unary(Fn::kSigmoid, x));
    case Op::Tanh: return one(E::unary(Fn::kTanh, x));
    case Op::Concat: return one(ShapeOps<S>::concat(in, a));
    case Op::Split: return ShapeOps<S>::split(x, a);
    case Op::Transpose: return one(ShapeOps<S>::transpose(x, a));
    case Op::AvgPool: return one(ConvPool<S>::avgpool(x, a));
    case Op::MaxPool: return one(ConvPool<S>::maxpool(x, a));
    case Op::Enlarge: return one(ShapeOps<S>::enlarge(x, a));
    case Op::BatchNorm: return one(Norm<S>::batchnorm(in, a));
    case Op::Gemm: return one(Linalg<S>::gemm(in, a));
    case Op::Softmax: return one(Norm<S>::softmax(x, a));
    case Op::LayerNorm: return one(Norm<S>::layernorm(in, a));
    case Op::Erf: return one(E::unary(Fn::kErf, x));
    case Op::Gelu: return one(E::unary(Fn::kGelu, x));
    case Op::Clip: return one(E::clip(x, a));
    case Op::Sub: return one(E::binary(Bin::kSub, x, *in[1]));
    case Op::Div: {  // integer quotients truncate toward zero, as ONNX Runtime's do
      Expected<Tensor<S>> q = E::binary(Bin::kDiv, x, *in[1]);
      const bool integer =
          !n.outs.empty() && (n.outs[0].dtype == DType::kI64 || n.outs[0].dtype == DType::kI32);
      if (q && integer) return one(ShapeOps<S>::cast(std::move(*q), n.outs[0].dtype));
      return one(std::move(q));
    }
    case Op::Pow: return one(E::binary(Bin::kPow, x, *in[1]));
    case Op::Sqrt: return one(E::unary(Fn::kSqrt, x));
    case Op::Neg: return one(E::unary(Fn::kNeg, x));
    case Op::Exp: return one(E::unary(Fn::kExp, x));
    case Op::LeakyRelu: return one(E::leaky_relu(x, a));
    case Op::Softplus: return one(E::softplus(x));
    case Op::Log: return one(E::log(x));
    case Op::Abs: return one(E::abs(x));
    case Op::Sin:
    case Op::Cos: return one(E::sinusoid(n.op, x));
    case Op::Max:
    case Op::Min: return one(E::extremum(n.op, x, *in[1]));
    case Op::LogSoftmax: return one(Norm<S>::log_softmax(x, a));
    case Op::GridSample: return one(ConvPool<S>::grid_sample(x, *in[1], a));
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2: return one(Norm<S>::reduce(n.op, x, a));
    case Op::Reshape: return one(ShapeOps<S>::reshape(x, a));
    case Op::Flatten: return one(ShapeOps<S>::flatten(x, a));
    case Op::Squeeze: return one(ShapeOps<S>::squeeze(x, a));
    case Op::Unsqueeze: return one(ShapeOps<S>::unsqueeze(x, a));
    case Op::Slice: return one(ShapeOps<S>::slice(x, a));
    case Op::Pad: return one(ShapeOps<S>::pad(x, a));
    case Op::GlobalAvgPool: return one(ConvPool<S>::global_avgpool(x));
    case Op::IsNaN: return one(E::isnan(x));
    case Op::Where: return one(E::where(x, *in[1], *in[2]));
    case Op::UpdateSlice:
      return one(ShapeOps<S>::update_slice(x, *in[1], a));
    case Op::Gather: return one(ShapeOps<S>::gather(x, *in[1], a));
    case Op::GatherElements: return one(ShapeOps<S>::gather_elements(x, *in[1], a));
    case Op::Expand: return one(ShapeOps<S>::expand(x, a));
    case Op::Cast: {
      DType to;
      if (!parse_dtype(a.str(AttrKey::to), &to))
        return Error{"cast: unknown element type '" + a.str(AttrKey::to) + "'"};
      return one(ShapeOps<S>::cast(x, to));
    }
    case Op::Equal: return one(E::compare(Cmp::kEqual, x, *in[1]));
    case Op::Less: return one(E::compare(Cmp::kLess, x, *in[1]));
    case Op::Greater: return one(E::compare(Cmp::kGreater, x, *in[1]));
    case Op::Not: return one(E::logical_not(x));
    case Op::And: return one(E::logical(Logic::kAnd, x, *in[1]));
    case Op::Or: return one(E::logical(Logic::kOr, x, *in[1]));
    case Op::CumSum: return one(Norm<S>::cumsum(x, a));
    case Op::ArgMax: return one(Norm<S>::arg_max(x, a));
    case Op::TopK: return Norm<S>::top_k(x, a);
    case Op::QuantizeLinear:
      return one(Quantize<S>::quantize(x, *in[1], *in[2], a.i(AttrKey::axis), n.outs[0].dtype));
    case Op::DequantizeLinear:
      return one(Quantize<S>::dequantize(x, *in[1], *in[2], a.i(AttrKey::axis)));
    case Op::Opaque: {
      const AttrValue* type = a.find(AttrKey::op_type);
      const std::string* name = type ? std::get_if<std::string>(type) : nullptr;
      return Error{"opaque operator '" + (name ? *name : std::string("?")) +
                   "' cannot be executed"};
    }
  }
  TSO_CHECK(false, "unknown operator " + std::to_string(static_cast<int>(n.op)));
}

Error at(const std::string& where, const Error& e) {
  return Error{where + ": " + e.message};
}

template <class S>
S from_int(int64_t x) {
  if constexpr (fn::Real<S>)
    return static_cast<S>(x);
  else
    return Mod::from_signed(x);  // exact, even beyond 2^53
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

template <class S>
Expected<Tensor<S>> weight_value(const WeightData& data) {
  const int64_t n = data.type.shape.numel(), width = dtype_bytes(data.type.dtype);
  if (static_cast<int64_t>(data.bytes.size()) != n * width)
    return Error{"weight data of type " + to_string(data.type) + " holds " +
                 std::to_string(data.bytes.size()) + " bytes, expected " +
                 std::to_string(n * width)};
  Tensor<S> t(data.type.shape);
  const std::byte* p = data.bytes.data();
  for (int64_t i = 0; i < n; ++i, p += width) {
    double real = 0;
    switch (data.type.dtype) {
      case DType::kF32: real = load<float>(p); break;
      case DType::kF16: real = half_to_float(load<uint16_t>(p)); break;
      case DType::kF64: real = load<double>(p); break;
      case DType::kI64: t.data[i] = from_int<S>(load<int64_t>(p)); continue;
      case DType::kI32: t.data[i] = from_int<S>(load<int32_t>(p)); continue;
      case DType::kBool: t.data[i] = from_int<S>(load<uint8_t>(p) != 0); continue;
      case DType::kU8: t.data[i] = from_int<S>(load<uint8_t>(p)); continue;
      case DType::kI8: t.data[i] = from_int<S>(load<int8_t>(p)); continue;
    }
    if (!fn::Real<S> && !std::isfinite(real))
      return Error{"weight data holds a non-finite value, which has no Mod image"};
    t.data[i] = fn::constant<S>(real);
  }
  return t;
}

template <class S>
Expected<std::vector<Tensor<S>>> eval_node(const Node& node,
                                           std::span<const Tensor<S>* const> args) {
  Outputs<S> r = run<S>(node, args);
  if (!r) return at(describe(node), r.error());
  return r;
}

namespace {

// Below this, evaluate does not ask the machine for its memory: reading
// /proc/meminfo would cost more than the generator's and the verifier's
// small evaluations themselves, and any machine has this much.
constexpr int64_t kUncheckedBytes = int64_t{256} << 20;

// The most bytes evaluate holds at once: every source's value (a feed's copy
// or a converted weight) and each operator's outputs from its step to their
// last use, all as S. Kernel temporaries (im2col) come on top.
template <class S>
Count peak_bytes(const Graph& g, const std::vector<int>& last_use) {
  auto bytes = [&](int i) {
    Count n = 0;
    for (const TensorType& t : g.node(i).outs) n = n + Count(t.shape.numel()) * sizeof(S);
    return n;
  };
  Count live = 0, peak = 0;
  std::vector<std::vector<int>> dies(g.size());
  for (int i = 0; i < g.size(); ++i)
    if (last_use[i] >= 0 && last_use[i] < g.size()) dies[last_use[i]].push_back(i);
  for (int i = 0; i < g.size(); ++i) {
    live = live + bytes(i);
    if (!live.fits()) return live;
    peak = std::max(*peak.value(), *live.value());
    for (int d : dies[i]) live = Count(*live.value() - *bytes(d).value());
  }
  return peak;
}

}  // namespace

template <class S>
Expected<std::vector<Tensor<S>>> evaluate(const Graph& g,
                                          const std::map<std::string, Tensor<S>>& feeds) {
  // A node's values are dropped once its last consumer has run; outputs stay.
  std::vector<int> last_use(g.size(), -1);
  for (int i = 0; i < g.size(); ++i)
    for (const TensorRef& r : g.node(i).args) last_use[r.node] = i;
  for (const GraphOutput& o : g.outputs()) last_use[o.ref.node] = INT_MAX;
  std::optional<int64_t> peak = peak_bytes<S>(g, last_use).value();
  if (!peak)
    return Error{"graph " + g.name() + ": the reference executor's tensors exceed 2^63 bytes"};
  if (*peak > kUncheckedBytes)
    TSO_RETURN_IF_ERROR(rt::check_allocation(*peak, "the reference executor's tensors"));

  std::vector<std::vector<Tensor<S>>> values(g.size());
  std::vector<const Tensor<S>*> args;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (n.op == Op::Input || n.op == Op::Weight) {
      auto it = feeds.find(n.name);
      if (it != feeds.end()) {
        if (!n.outs.empty() && !(it->second.shape == n.outs[0].shape))
          return Error{describe_node(g, i) + ": feed has shape " + to_string(it->second.shape) +
                       ", expected " + to_string(n.outs[0].shape)};
        values[i].push_back(it->second);
        continue;
      }
      if (n.op == Op::Input || !n.data)
        return Error{describe_node(g, i) + ": no feed for " +
                     (n.op == Op::Input ? "input '" : "weight '") + n.name + "'"};
      if (!n.outs.empty() && !(n.data->type.shape == n.outs[0].shape))
        return Error{describe_node(g, i) + ": stored data is " + to_string(n.data->type) +
                     ", expected shape " + to_string(n.outs[0].shape)};
    }
    args.clear();
    for (const TensorRef& r : n.args) {
      TSO_CHECK(r.node < i && r.output < static_cast<int>(values[r.node].size()),
                describe_node(g, i) + " reads a value that is not there");
      args.push_back(&values[r.node][r.output]);
    }
    Outputs<S> out = run<S>(n, args);
    if (!out) return at(describe_node(g, i), out.error());
    if (out->size() != n.outs.size() && n.op != Op::Weight)
      return Error{describe_node(g, i) + ": computed " + std::to_string(out->size()) +
                   " outputs, the graph records " + std::to_string(n.outs.size())};
    for (size_t k = 0; k < n.outs.size() && k < out->size(); ++k)
      if (!((*out)[k].shape == n.outs[k].shape))
        return Error{describe_node(g, i) + ": the executor computed shape " +
                     to_string((*out)[k].shape) + ", the graph records " +
                     to_string(n.outs[k].shape)};
    values[i] = std::move(*out);
    for (const TensorRef& r : n.args)
      if (last_use[r.node] == i) values[r.node].clear();
  }
  std::vector<Tensor<S>> result;
  for (const GraphOutput& o : g.outputs()) result.push_back(values[o.ref.node][o.ref.output]);
  return result;
}

#define TSO_REF_INSTANTIATE(S)                                                             \
  template Expected<Tensor<S>> weight_value<S>(const WeightData&);                         \
  template Expected<std::vector<Tensor<S>>> eval_node<S>(const Node&,                      \
                                                         std::span<const Tensor<S>* const>); \
  template Expected<std::vector<Tensor<S>>> evaluate<S>(const Graph&,                      \
                                                        const std::map<std::string, Tensor<S>>&);
TSO_REF_INSTANTIATE(float)
TSO_REF_INSTANTIATE(double)
TSO_REF_INSTANTIATE(Mod)
#undef TSO_REF_INSTANTIATE

}  // namespace tso::ref
