#include "runtime/cpu/own_conv.h"

#include <cmath>

namespace tso::cpu {

// The group's bias, batchnorm, residual and activations as an epilogue;
// false when one of them has no epilogue form.
bool epilogue_of(Builder& b, const FusionGroup& group, const memory::desc& nhwc,
                 std::vector<EpiloguePlan>* out) {
  const Graph& g = b.graph();
  const Node& conv = g.node(group.anchor);
  const int64_t channels = conv.outs[0].shape[1];
  if (conv.args.size() == 3)
    out->push_back({EpilogueOp::kAddChannel, b.as_plain(b.value(conv.args[2]))});
  switch (conv.attrs.act(AttrKey::act)) {
    case Act::kNone:
      break;
    case Act::kRelu:
      out->push_back({EpilogueOp::kRelu});
      break;
    case Act::kClip:
      out->push_back({EpilogueOp::kClip, -1, static_cast<float>(conv.attrs.f(AttrKey::min)),
                      static_cast<float>(conv.attrs.f(AttrKey::max))});
      break;
    default:
      return false;
  }
  for (const PostOpNode& p : group.post) {
    const Node& n = g.node(p.node);
    if (p.kind != PostOpNode::Kind::kNode) return false;
    switch (n.op) {
      case Op::Relu:
        out->push_back({EpilogueOp::kRelu});
        continue;
      case Op::Clip:
        out->push_back({EpilogueOp::kClip, -1, static_cast<float>(n.attrs.f(AttrKey::min)),
                        static_cast<float>(n.attrs.f(AttrKey::max))});
        continue;
      case Op::BatchNorm: {
        auto floats = [&](int arg) {
          const WeightData& w = *g.node(n.args[arg].node).data;
          const float* v = reinterpret_cast<const float*>(w.bytes.data());
          return std::vector<float>(v, v + channels);
        };
        const std::vector<float> gamma = floats(1), beta = floats(2), mean = floats(3),
                                 var = floats(4);
        std::vector<float> scale(channels), shift(channels);
        for (int64_t c = 0; c < channels; ++c) {
          scale[c] = static_cast<float>(gamma[c] /
                                        std::sqrt(double(var[c]) + n.attrs.f(AttrKey::epsilon)));
          shift[c] = beta[c] - mean[c] * scale[c];
        }
        out->push_back({EpilogueOp::kMulChannel, b.host_floats(std::move(scale), Shape{channels})});
        out->push_back({EpilogueOp::kAddChannel, b.host_floats(std::move(shift), Shape{channels})});
        continue;
      }
      case Op::Add:
      case Op::Mul: {
        const int other = b.value(p.other);
        const Shape os = b.tensor(other).type.shape;
        if (os == conv.outs[0].shape && n.op == Op::Add) {
          out->push_back({EpilogueOp::kAddTensor, b.as_layout(other, nhwc)});
        } else if (os.numel() == channels && channels > 1) {
          out->push_back({n.op == Op::Add ? EpilogueOp::kAddChannel : EpilogueOp::kMulChannel,
                          b.as_plain(other)});
        } else {
          return false;
        }
        continue;
      }
      default:
        return false;
    }
  }
  return true;
}

namespace {

// Scratch memory for timing a Winograd candidate.
struct Scratch {
  explicit Scratch(int64_t floats) : v(static_cast<size_t>(std::max<int64_t>(floats, 1)), 0.f) {}
  std::vector<float> v;
  float* data() { return v.data(); }
};

}  // namespace

// The best time of `conv` on scratch buffers (inputs zero); `bound` as in best_ms.
double time_own(const dnnl::engine& engine, const OwnConv& conv, int64_t src_floats,
                int64_t dst_floats, int64_t channels, const std::vector<EpiloguePlan>& epilogue,
                double bound) {
  if (!can_time(4 * (src_floats + conv.weights_floats + 2 * dst_floats + channels) +
                conv.scratch_bytes))
    return kNotTimed;
  Scratch src(src_floats), w(conv.weights_floats), dst(dst_floats),
      work(conv.scratch_bytes / 4 + 16), tensor(dst_floats), channel(channels);
  std::vector<EpilogueOp> ops;
  for (const EpiloguePlan& e : epilogue)
    ops.push_back(
        {e.kind, e.kind == EpilogueOp::kAddTensor ? tensor.data() : channel.data(), e.lo, e.hi});
  dnnl::stream stream(engine);
  return best_ms(
      [&] {
        conv.run(src.data(), w.data(), dst.data(), reinterpret_cast<std::byte*>(work.data()), ops,
                 stream);
      },
      bound);
}

// The steps of `conv` for `group`: its weights transformed once (a prologue
// step), then one run step from the NHWC input to the NHWC output.
void add_own_conv(Builder& b, const FusionGroup& group, const OwnConv& conv,
                  const std::vector<EpiloguePlan>& epilogue, const memory::desc& nhwc_in,
                  const memory::desc& nhwc_out) {
  const Graph& g = b.graph();
  const Node& n = g.node(group.anchor);
  const int w_plain = b.as_plain(b.value(n.args[1]));
  const int u = b.output_tensor({DType::kF32, Shape{conv.weights_floats}}, {}, {w_plain});
  auto transform = conv.transform_weights;
  b.add_kernel("weights for " + conv.what, b.describe(group.anchor), {w_plain}, {u},
               [=](const Bindings& m) -> Run {
                 const float* src = reinterpret_cast<const float*>(m.data(w_plain));
                 float* dst = reinterpret_cast<float*>(m.data(u));
                 return [=] { transform(src, dst); };
               });
  const int x = b.as_layout(b.value(n.args[0]), nhwc_in);
  std::vector<int> reads = {x, u};
  for (const EpiloguePlan& e : epilogue)
    if (e.tensor >= 0) reads.push_back(e.tensor);
  const int y = b.output_tensor(g.node(group.tail()).outs[0], nhwc_out, reads);
  const int work = b.output_tensor({DType::kF32, Shape{conv.scratch_bytes / 4 + 16}}, {}, reads);
  std::string nodes = b.describe(group.anchor);
  for (const PostOpNode& q : group.post) nodes += " + " + std::string(op_name(g.node(q.node).op));
  auto run = conv.run;
  b.add_kernel(conv.what, nodes, reads, {y, work}, [=](const Bindings& m) -> Run {
    std::vector<EpilogueOp> ops;
    for (const EpiloguePlan& e : epilogue)
      ops.push_back({e.kind,
                     e.tensor >= 0 ? reinterpret_cast<const float*>(m.data(e.tensor)) : nullptr,
                     e.lo, e.hi});
    const float* src = reinterpret_cast<const float*>(m.data(x));
    const float* weights = reinterpret_cast<const float*>(m.data(u));
    float* dst = reinterpret_cast<float*>(m.data(y));
    std::byte* scratch = m.data(work);
    dnnl::stream* stream = &m.stream();
    return [=] { run(src, weights, dst, scratch, ops, *stream); };
  });
  b.set_value({group.tail(), 0}, y);
}

// Whether to use an own kernel: forced by `choice`, or measured against the
// direct convolution (candidate 0); the index of the winner.
int choose(Builder& b, ExecutorOptions::Choice choice, const std::string& key,
           const std::vector<Candidate>& candidates) {
  if (choice == ExecutorOptions::Choice::kOff) return 0;
  if (choice == ExecutorOptions::Choice::kAlways) return 1;
  return b.options().measure ? fastest(b.options().choices_file, key, candidates) : 0;
}

}  // namespace tso::cpu
