#include "core/signature_graph.h"

#include <cstring>
#include <memory>

#include "core/post_ops.h"
#include "core/quantized.h"

namespace tso {
namespace {

// smul among them: its signature is mul's (core/signature.h), so its scalar
// is a weight as mul's is, and both share one entry of a cost cache (which
// keys a node with weights apart when they are cached).
bool binary_elementwise(Op op) {
  return op == Op::Add || op == Op::Mul || op == Op::ScalarMul || op == Op::Sub || op == Op::Div ||
         op == Op::Pow;
}

// The attributes of a quantize_linear or dequantize_linear with one scale.
Attrs per_tensor() {
  Attrs a;
  a.set(AttrKey::axis, int64_t{0});
  return a;
}

// A stored tensor of one value of type `t`.
TensorRef scalar(GraphBuilder& b, const std::string& name, DType t, float value) {
  const TensorType type{t, Shape{}};
  auto data = std::make_shared<WeightData>();
  data->type = type;
  data->bytes.resize(t == DType::kF32 ? 4 : 1);
  if (t == DType::kF32) std::memcpy(data->bytes.data(), &value, 4);
  return b.weight(name, type, std::move(data));
}

// `q` (stored i8 weights) through a dequantize_linear (one scale, zero
// point 0): what an int8 kernel's weights are in a quantized model.
Expected<TensorRef> dequantized(GraphBuilder& b, const std::string& name, TensorRef q) {
  const DType t = b.type(q).dtype;
  return b.add1(Op::DequantizeLinear, {q, scalar(b, name + ".scale", DType::kF32, 0.02f),
                                       scalar(b, name + ".zero", t, 0)},
                per_tensor());
}

// An f32 input named `name`, quantized to `quantized` (one scale, zero
// point 0) and dequantized at once: what an int8 kernel's input is in a
// quantized model, the pair step (core/quantized.h) after its producer.
Expected<TensorRef> quantized_input(GraphBuilder& b, const std::string& name,
                                    const TensorType& quantized) {
  const TensorRef scale = scalar(b, name + ".scale", DType::kF32, 0.02f);
  const TensorRef zero = scalar(b, name + ".zero", quantized.dtype, 0);
  Expected<TensorRef> q =
      b.add1(Op::QuantizeLinear,
             {b.input(name, TensorType{DType::kF32, quantized.shape}), scale, zero}, per_tensor());
  if (!q) return q.error();
  return b.add1(Op::DequantizeLinear, {*q, scale, zero}, per_tensor());
}

// Stored i8 weights of `type` for an int8 kernel's signature graph: every
// level 127, in the full range that ONNX Runtime's quantizer gives weights
// by default. A host whose int8 sums saturate runs a product by such weights
// in f32 (runtime/cpu's int8_kernel_exact, which takes only weights within
// [-64, 64] there), so it times the signature as such models run there.
std::vector<std::byte> full_range_levels(const TensorType& type) {
  return std::vector<std::byte>(static_cast<size_t>(type.shape.numel()), std::byte{127});
}

}  // namespace

std::vector<bool> weight_args(const Node& n, std::span<const TensorType> inputs) {
  std::vector<bool> w(inputs.size(), false);
  switch (n.op) {
    case Op::Conv2d:
    case Op::Gemm:
    case Op::BatchNorm:
    case Op::LayerNorm:
      for (size_t i = 1; i < w.size(); ++i) w[i] = true;
      break;
    case Op::Matmul:
      if (w.size() != 2 || inputs[1].shape.rank() != 2) break;
      // A matrix by one column is a layer applied to a column vector, the
      // transposed form of x·W that the search writes (W'·x'): the matrix
      // is the weight. Timed hot as an input, a 2 MB matrix cost a fifth
      // of what it costs read from memory in NasRNN.
      if (inputs[0].shape.rank() == 2 && inputs[1].shape[1] == 1 && inputs[0].shape[0] > 1)
        w[0] = true;
      else
        w[1] = true;
      break;
    default:
      if (binary_elementwise(n.op) && w.size() == 2 &&
          inputs[1].shape.numel() < inputs[0].shape.numel())
        w[1] = true;
      break;
  }
  return w;
}

std::vector<std::byte> random_tensor_bytes(const TensorType& type, uint64_t seed) {
  const int64_t n = type.shape.numel();
  std::vector<std::byte> bytes(static_cast<size_t>(byte_size(type)));
  // SplitMix64 (Steele, Lea and Flood, 2014), 24 or 53 bits of each draw:
  // a batch-16 activation has 50 M values, and mt19937_64 with
  // uniform_real_distribution drew them at 10 ns each, 14% of measuring a
  // batch-16 model's signatures.
  uint64_t state = seed;
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  if (type.dtype == DType::kF32) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
      std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    }
  } else if (type.dtype == DType::kF64) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(next() >> 11) * (2.0 / 9007199254740992.0) - 1.0;
      std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    }
  }
  return bytes;
}

Expected<Graph> signature_graph(const Node& n, std::span<const TensorType> inputs,
                                const std::vector<bool>& weights, uint64_t seed) {
  GraphBuilder b("profile");
  Node copy = n;
  copy.args.clear();
  copy.data = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    const bool weight = i < weights.size() && weights[i];
    const bool int8 = is_post_op_anchor(n.op) && is_8bit(inputs[i].dtype);
    if (int8 && !weight) {
      Expected<TensorRef> x = quantized_input(b, name, inputs[i]);
      if (!x) return x.error();
      copy.args.push_back(*x);
      continue;
    }
    if (weight) {
      auto data = std::make_shared<WeightData>();
      data->type = inputs[i];
      data->bytes = int8 ? full_range_levels(inputs[i]) : random_tensor_bytes(inputs[i], seed + i);
      copy.args.push_back(b.weight(name, inputs[i], std::move(data)));
    } else {
      copy.args.push_back(b.input(name, inputs[i]));
    }
    if (int8) {
      Expected<TensorRef> w = dequantized(b, name, copy.args.back());
      if (!w) return w.error();
      copy.args.back() = *w;
    }
  }
  const TensorRef first = b.add_node(std::move(copy));
  for (int o = 0; o < static_cast<int>(n.outs.size()); ++o)
    b.output("out" + std::to_string(o), {first.node, o});
  return b.finish();
}

Expected<Graph> quantized_inputs_graph(std::span<const TensorType> inputs,
                                       const std::vector<bool>& weights) {
  GraphBuilder b("quantized inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if ((i < weights.size() && weights[i]) || !is_8bit(inputs[i].dtype)) continue;
    const std::string name = "in" + std::to_string(i);
    Expected<TensorRef> x = quantized_input(b, name, inputs[i]);
    if (!x) return x.error();
    b.output("out" + std::to_string(i), *x);
  }
  return b.finish();
}

Expected<Graph> int8_anchored_graph(Op anchor, const Shape& out, DType quantized, bool pair) {
  constexpr int64_t kDepth = 16;
  GraphBuilder b("int8 post-op");
  Shape xs = out, ws;
  if (anchor == Op::Conv2d && out.rank() == 4) {
    xs[1] = kDepth;
    ws = Shape({out[1], kDepth, 1, 1});
  } else if (anchor != Op::Conv2d && out.rank() >= 2) {
    xs[xs.rank() - 1] = kDepth;
    ws = Shape({kDepth, out[out.rank() - 1]});
  } else {
    return Error{"no int8 " + std::string(op_name(anchor)) + " computes f32" +
                 to_string(out)};
  }
  Expected<TensorRef> x = quantized_input(b, "x", TensorType{DType::kU8, xs});
  if (!x) return x.error();
  auto data = std::make_shared<WeightData>();
  data->type = TensorType{DType::kI8, ws};
  data->bytes = full_range_levels(data->type);
  Expected<TensorRef> w = dequantized(b, "w", b.weight("w", data->type, data));
  if (!w) return w.error();
  Expected<TensorRef> y = b.add1(anchor == Op::Conv2d ? Op::Conv2d : Op::Matmul, {*x, *w});
  if (!y) return y.error();
  if (pair) {
    const TensorRef scale = scalar(b, "out.scale", DType::kF32, 0.02f);
    const TensorRef zero = scalar(b, "out.zero", quantized, 0);
    Expected<TensorRef> q = b.add1(Op::QuantizeLinear, {*y, scale, zero}, per_tensor());
    if (!q) return q.error();
    y = b.add1(Op::DequantizeLinear, {*q, scale, zero}, per_tensor());
    if (!y) return y.error();
  }
  b.output("out", *y);
  return b.finish();
}

Expected<Graph> quantize_graph(const TensorType& quantized, bool pair) {
  if (pair) return quantized_inputs_graph({&quantized, 1}, {false});
  GraphBuilder b("quantize");
  Expected<TensorRef> q =
      b.add1(Op::QuantizeLinear,
             {b.input("x", TensorType{DType::kF32, quantized.shape}),
              scalar(b, "scale", DType::kF32, 0.02f), scalar(b, "zero", quantized.dtype, 0)},
             per_tensor());
  if (!q) return q.error();
  b.output("out", *q);
  return b.finish();
}

}  // namespace tso
