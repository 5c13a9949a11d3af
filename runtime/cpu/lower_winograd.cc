// 3x3 stride-1 convolutions on tso's own Winograd kernel (winograd.h) where
// a plan-time measurement says it beats oneDNN's direct kernel with the same
// fused post-ops. The group's post-ops become the kernel's epilogue; a group
// with a post-op the epilogue lacks stays on oneDNN.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "core/signature.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/measure.h"
#include "runtime/cpu/winograd.h"

namespace tso::cpu {

using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

// An epilogue step with its operand as a plan tensor (bound at run time).
struct EpiloguePlan {
  EpilogueOp::Kind kind;
  int tensor = -1;
  float lo = 0, hi = 0;
};

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

// Scratch memory for timing a Winograd candidate.
struct Scratch {
  explicit Scratch(int64_t floats) : v(static_cast<size_t>(std::max<int64_t>(floats, 1)), 0.f) {}
  std::vector<float> v;
  float* data() { return v.data(); }
};

// An own convolution kernel as the plan sees it (its weights transform and
// its run), so that timing and step building do not depend on the kernel.
struct OwnConv {
  std::string what;  // for profiles
  int64_t weights_floats = 0, scratch_bytes = 0;
  std::function<void(const float* oihw, float* out)> transform_weights;
  std::function<void(const float* src, const float* weights, float* dst, std::byte* scratch,
                     std::span<const EpilogueOp> epilogue, dnnl::stream& stream)>
      run;
};

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

OwnConv own_conv(std::shared_ptr<WinogradConv> conv) {
  return {conv->impl_info(), conv->weights_floats(), conv->scratch_bytes(),
          [conv](const float* w, float* out) { conv->transform_weights(w, out); },
          [conv](const float* src, const float* w, float* dst, std::byte* scratch,
                 std::span<const EpilogueOp> epilogue,
                 dnnl::stream& stream) { conv->run(src, w, dst, scratch, epilogue, stream); }};
}

// Whether to use an own kernel: forced by `choice`, or measured against the
// direct convolution (candidate 0); the index of the winner.
int choose(Builder& b, ExecutorOptions::Choice choice, const std::string& key,
           const std::vector<Candidate>& candidates) {
  if (choice == ExecutorOptions::Choice::kOff) return 0;
  if (choice == ExecutorOptions::Choice::kAlways) return 1;
  return b.options().measure ? fastest(b.options().choices_file, key, candidates) : 0;
}

}  // namespace

Expected<bool> lower_winograd(Builder& b, const FusionGroup& group,
                              const dnnl::convolution_forward::primitive_desc& direct,
                              const std::vector<Arg>& direct_extra) {
  const Graph& g = b.graph();
  const Node& n = g.node(group.anchor);
  const Shape& xs = g.type(n.args[0]).shape;
  const Shape& ws = g.type(n.args[1]).shape;
  const Padding& pad = n.attrs.pad(AttrKey::pad);
  if (ws[2] != 3 || ws[3] != 3 || n.attrs.i(AttrKey::groups) != 1 ||
      n.attrs.ints(AttrKey::stride) != std::vector<int64_t>{1, 1} ||
      n.attrs.ints(AttrKey::dilation) != std::vector<int64_t>{1, 1} ||
      !b.is_const(b.value(n.args[1])))
    return false;
  std::array<int64_t, 4> p{};  // top, left, bottom, right
  if (pad.mode == Padding::kSame) p = {1, 1, 1, 1};
  if (pad.mode == Padding::kExplicit) p = pad.pads;
  const WinogradShape shape{xs[0], xs[1], xs[2], xs[3], ws[0], p[0], p[1], p[2], p[3]};
  if (!WinogradConv::supports(shape)) return false;
  const memory::desc nhwc_in(dims_of(xs), dt::f32, tag::nhwc);
  const memory::desc nhwc_out(dims_of(n.outs[0].shape), dt::f32, tag::nhwc);
  std::vector<EpiloguePlan> epilogue;
  if (!epilogue_of(b, group, nhwc_out, &epilogue)) return false;

  // Candidates: oneDNN's direct kernel, then Winograd with 4x4 and 2x2 tiles,
  // each in both schedules. Which schedule wins depends on the machine: on
  // AVX2 (AMD EPYC) the fused one with its own AVX2 GEMM kernel, on AVX-512
  // (Intel Xeon) the batched oneDNN matmul, whose AVX-512 GEMMs run twice as
  // wide (CSRNet's 512-channel 28x28 convolution: 8.4 ms fused, 4.0 ms
  // matmul, 10.7 ms direct; winograd_bench prints them all).
  std::vector<OwnConv> convs;
  for (int tile : {4, 2})
    for (WinogradSchedule schedule : {WinogradSchedule::kFused, WinogradSchedule::kBatchedMatmul})
      convs.push_back(own_conv(std::make_shared<WinogradConv>(shape, b.engine(), tile, schedule)));
  std::vector<Candidate> candidates = {[&](double bound) {
    return time_primitive(b.engine(), dnnl::convolution_forward(direct), direct, direct_extra,
                          bound);
  }};
  for (const OwnConv& conv : convs)
    candidates.push_back([&](double bound) {
      return time_own(b.engine(), conv, xs.numel(), n.outs[0].shape.numel(), ws[0], epilogue,
                      bound);
    });
  std::string key = "winograd " + op_signature(g, group.anchor);
  for (const EpiloguePlan& e : epilogue) key += " " + std::to_string(int(e.kind));
  const int choice = choose(b, b.options().winograd, key, candidates);
  if (choice == 0) return false;
  add_own_conv(b, group, convs[choice - 1], epilogue, nhwc_in, nhwc_out);
  return true;
}

}  // namespace tso::cpu
