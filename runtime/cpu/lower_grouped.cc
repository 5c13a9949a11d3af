// Grouped 3x3 convolutions of 4, 8 or 16 channels a group (ResNeXt's) on
// tso's own AVX-512 kernel (grouped_conv.h) where a plan-time measurement
// says it beats oneDNN's direct kernel with the same fused post-ops. The
// group's post-ops become the kernel's epilogue; a group with a post-op the
// epilogue lacks stays on oneDNN.
#include "core/signature.h"
#include "runtime/common/geometry.h"
#include "runtime/cpu/grouped_conv.h"
#include "runtime/cpu/own_conv.h"
#include "runtime/cpu/vector_kernels.h"

namespace tso::cpu {

using tag = memory::format_tag;
using dt = memory::data_type;

Expected<bool> lower_grouped(Builder& b, const FusionGroup& group,
                             const dnnl::convolution_forward::primitive_desc& direct,
                             const std::vector<Arg>& direct_extra) {
#ifndef TSO_AVX512_KERNELS
  return false;
#else
  const Graph& g = b.graph();
  const Node& n = g.node(group.anchor);
  const Shape& xs = g.type(n.args[0]).shape;
  const Shape& ws = g.type(n.args[1]).shape;
  const Shape& ys = n.outs[0].shape;
  const int64_t groups = n.attrs.i(AttrKey::groups);
  const std::vector<int64_t> stride = n.attrs.ints(AttrKey::stride);
  if (!avx512_kernels_run() || groups == 1 || ws[2] != 3 || ws[3] != 3 || xs[1] != ws[0] ||
      ws[0] % 16 != 0 || ws[0] / groups != ws[1] || (ws[1] != 4 && ws[1] != 8 && ws[1] != 16) ||
      stride[0] != stride[1] || (stride[0] != 1 && stride[0] != 2) ||
      n.attrs.ints(AttrKey::dilation) != std::vector<int64_t>{1, 1} ||
      !b.is_const(b.value(n.args[1])))
    return false;
  Expected<std::vector<rt::WindowAxis>> win = rt::resolve_window(xs, 3, 3, n.attrs, false);
  if (!win) return Error{b.describe(group.anchor) + ": " + win.error().message};
  const rt::WindowAxis &h = (*win)[0], &w = (*win)[1];
  if (h.pad_lo > 1 || w.pad_lo > 1) return false;
  const GroupedShape shape{xs[0],     xs[1],    xs[2],    xs[3], ws[1],
                           stride[0], h.pad_lo, w.pad_lo, ys[2], ys[3]};
  const memory::desc nhwc_in(dims_of(xs), dt::f32, tag::nhwc);
  const memory::desc nhwc_out(dims_of(ys), dt::f32, tag::nhwc);
  std::vector<EpiloguePlan> epilogue;
  if (!epilogue_of(b, group, nhwc_out, &epilogue)) return false;
  const OwnConv conv{
      "grouped conv (own avx512)", 9 * ws[0] * ws[1], 0,
      [shape](const float* oihw, float* out) { grouped_conv_weights(shape, oihw, out); },
      [shape](const float* src, const float* weights, float* dst, std::byte*,
              std::span<const EpilogueOp> epilogue,
              dnnl::stream&) { grouped_conv(shape, src, weights, dst, epilogue); }};
  const std::vector<Candidate> candidates = {
      [&](double bound) {
        return time_primitive(b.engine(), dnnl::convolution_forward(direct), direct, direct_extra,
                              bound);
      },
      [&](double bound) {
        return time_own(b.engine(), conv, xs.numel(), ys.numel(), ws[0], epilogue, bound);
      }};
  std::string key = "grouped " + op_signature(g, group.anchor);
  for (const EpiloguePlan& e : epilogue) key += " " + std::to_string(int(e.kind));
  if (choose(b, b.options().grouped, key, candidates) == 0) return false;
  add_own_conv(b, group, conv, epilogue, nhwc_in, nhwc_out);
  return true;
#endif
}

}  // namespace tso::cpu
