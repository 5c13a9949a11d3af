// 3x3 stride-1 convolutions on tso's own Winograd kernel (winograd.h) where
// a plan-time measurement says it beats oneDNN's direct kernel with the same
// fused post-ops. The group's post-ops become the kernel's epilogue; a group
// with a post-op the epilogue lacks stays on oneDNN.
#include <memory>
#include <vector>

#include "core/signature.h"
#include "runtime/cpu/own_conv.h"
#include "runtime/cpu/winograd.h"

namespace tso::cpu {

using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

OwnConv own_conv(std::shared_ptr<WinogradConv> conv) {
  return {conv->impl_info(), conv->weights_floats(), conv->scratch_bytes(),
          [conv](const float* w, float* out) { conv->transform_weights(w, out); },
          [conv](const float* src, const float* w, float* dst, std::byte* scratch,
                 std::span<const EpilogueOp> epilogue,
                 dnnl::stream& stream) { conv->run(src, w, dst, scratch, epilogue, stream); }};
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
