#include "runtime/cpu/post_ops.h"

#include <cmath>

#include "core/quantized.h"
#include "runtime/common/quantize.h"

namespace tso::cpu {

using dnnl::algorithm;

bool eltwise_of_act(const Attrs& a, algorithm* alg, float* alpha, float* beta) {
  *alpha = 0, *beta = 0;
  switch (a.act(AttrKey::act)) {
    case Act::kRelu:
      *alg = algorithm::eltwise_relu;
      return true;
    case Act::kSigmoid:
      *alg = algorithm::eltwise_logistic;
      return true;
    case Act::kTanh:
      *alg = algorithm::eltwise_tanh;
      return true;
    case Act::kGelu:
      *alg = algorithm::eltwise_gelu_erf;
      return true;
    case Act::kClip:
      *alg = algorithm::eltwise_clip_v2;
      *alpha = static_cast<float>(a.f(AttrKey::min));
      *beta = static_cast<float>(a.f(AttrKey::max));
      return true;
    case Act::kNone:
      return false;
  }
  return false;
}

bool eltwise_of(const Node& n, algorithm* alg, float* alpha, float* beta) {
  *alpha = 0, *beta = 0;
  switch (n.op) {
    case Op::Relu:
      *alg = algorithm::eltwise_relu;
      return true;
    case Op::Sigmoid:
      *alg = algorithm::eltwise_logistic;
      return true;
    case Op::Tanh:
      *alg = algorithm::eltwise_tanh;
      return true;
    case Op::Gelu:
      *alg = algorithm::eltwise_gelu_erf;
      return true;
    case Op::Exp:
      *alg = algorithm::eltwise_exp;
      return true;
    case Op::Sqrt:
      *alg = algorithm::eltwise_sqrt;
      return true;
    case Op::Neg:
      *alg = algorithm::eltwise_linear, *alpha = -1;
      return true;
    case Op::LeakyRelu:
      *alg = algorithm::eltwise_relu, *alpha = static_cast<float>(n.attrs.f(AttrKey::alpha));
      return true;
    case Op::Softplus:  // oneDNN's soft_relu is log(1 + exp(alpha x)) / alpha
      *alg = algorithm::eltwise_soft_relu, *alpha = 1;
      return true;
    case Op::Log:
      *alg = algorithm::eltwise_log;
      return true;
    case Op::Abs:
      *alg = algorithm::eltwise_abs;
      return true;
    case Op::Clip:
      *alg = algorithm::eltwise_clip_v2;
      *alpha = static_cast<float>(n.attrs.f(AttrKey::min));
      *beta = static_cast<float>(n.attrs.f(AttrKey::max));
      return true;
    default:
      return false;
  }
}

void append_binary(Builder& b, algorithm alg, int other, const DstView& dst, PostOps* out) {
  const Shape shape = b.tensor(other).type.shape;
  const int index = out->ops.len();
  Arg arg{DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, -1};
  Dims dims(dst.dims.size(), 1);
  if (shape == dst.logical) {
    arg.tensor = b.as_layout(other, dst.layout);
    arg.md = dst.layout.get_dims() == dst.dims ? dst.layout : plain_desc(dst.dims);
  } else {
    arg.tensor = b.as_plain(other);
    if (shape.numel() > 1) {
      const int axis = dst.conv ? 1 : static_cast<int>(dims.size()) - 1;
      dims[axis] = shape.numel();
    }
    arg.md = plain_desc(dims);
  }
  out->ops.append_binary(alg, arg.md);
  out->args.push_back(arg);
  out->reads.push_back(arg.tensor);
}

namespace {

// A batchnorm after a convolution as a per-channel scale and shift:
// y = x * s + t with s = gamma / sqrt(var + eps), t = beta - mean * s.
void append_batchnorm(Builder& b, const Node& n, const DstView& dst, PostOps* out) {
  auto floats = [&](int arg) {
    const WeightData& w = *b.graph().node(n.args[arg].node).data;
    const float* p = reinterpret_cast<const float*>(w.bytes.data());
    return std::vector<float>(p, p + w.type.shape.numel());
  };
  const std::vector<float> gamma = floats(1), beta = floats(2), mean = floats(3), var = floats(4);
  const double eps = n.attrs.f(AttrKey::epsilon);
  std::vector<float> scale(gamma.size()), shift(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    scale[c] = static_cast<float>(gamma[c] / std::sqrt(double(var[c]) + eps));
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  const Shape shape{static_cast<int64_t>(scale.size())};
  append_binary(b, algorithm::binary_mul, b.host_floats(std::move(scale), shape), dst, out);
  append_binary(b, algorithm::binary_add, b.host_floats(std::move(shift), shape), dst, out);
}

// A quantize pair's fake quantization, exactly as quantize_linear and
// dequantize_linear compute it where no NaN arrives (fusion.h):
//   clip(nearbyint(x / s), lo - z, hi - z) * s
// or, for `levels`, quantize_linear's levels clip(...) + z.
// The division is oneDNN's binary div (a true division, as the reference
// divides), the rounding its round (half to even, as nearbyint); the clip,
// the product and the sum are exact on integers of 8 bits.
void append_fake_quantize(Builder& b, const Node& q, const DstView& dst, PostOps* out,
                          bool levels) {
  const Quantization f = *post_op_pair(b.graph(), q);
  const rt::QuantRange r = f.type == DType::kU8 ? rt::kU8Range : rt::kI8Range;
  append_binary(b, algorithm::binary_div, b.host_floats({f.scale}, Shape{1}), dst, out);
  out->ops.append_eltwise(algorithm::eltwise_round, 0, 0);
  out->ops.append_eltwise(algorithm::eltwise_clip_v2, static_cast<float>(r.lo - f.zero),
                          static_cast<float>(r.hi - f.zero));
  if (levels)
    out->ops.append_eltwise(algorithm::eltwise_linear, 1, static_cast<float>(f.zero));
  else
    out->ops.append_eltwise(algorithm::eltwise_linear, f.scale, 0);
}

algorithm binary_alg(Op op) {
  switch (op) {
    case Op::Add:
      return algorithm::binary_add;
    case Op::Sub:
      return algorithm::binary_sub;
    case Op::Div:
      return algorithm::binary_div;
    default:
      return algorithm::binary_mul;  // mul, smul
  }
}

}  // namespace

Status append_post_ops(Builder& b, const FusionGroup& group, const DstView& dst, PostOps* out,
                       bool levels) {
  const Graph& g = b.graph();
  algorithm alg;
  float alpha = 0, beta = 0;
  const Attrs& anchor = g.node(group.anchor).attrs;
  if (eltwise_of_act(anchor, &alg, &alpha, &beta)) {
    out->ops.append_eltwise(alg, alpha, beta);
    out->nodes += std::string(" + ") + act_name(anchor.act(AttrKey::act));
  }
  for (const PostOpNode& p : group.post) {
    const Node& n = g.node(p.node);
    if (p.kind == PostOpNode::Kind::kGelu) {
      out->nodes += " + gelu (5 nodes)";
      out->ops.append_eltwise(algorithm::eltwise_gelu_erf, 0, 0);
      continue;
    }
    if (p.kind == PostOpNode::Kind::kQuantizePair) {
      const bool last = &p == &group.post.back();
      out->nodes += levels && last ? " + quantize" : " + quantize pair";
      append_fake_quantize(b, g.node(p.inner[0]), dst, out, levels && last);
      continue;
    }
    out->nodes += " + " + std::string(op_name(n.op));
    if (eltwise_of(n, &alg, &alpha, &beta)) {
      out->ops.append_eltwise(alg, alpha, beta);
    } else if (n.op == Op::BatchNorm) {
      append_batchnorm(b, n, dst, out);
    } else {
      append_binary(b, binary_alg(n.op), b.value(p.other), dst, out);
    }
  }
  return {};
}

}  // namespace tso::cpu
