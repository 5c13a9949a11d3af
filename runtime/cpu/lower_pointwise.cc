// 1x1 stride-1 convolutions on NHWC tensors are matrix products: the image
// as [rows, C] (rows = N * H * W) by the weights as [C, K], written as
// [rows, K], the same bytes as the NHWC result. oneDNN's inner product is
// faster than its 1x1 convolution on some of these shapes (NASNet's, and
// ResNet's 56x56 ones) and slower on others, so each is measured with the
// group's post-ops and the faster runs.
#include "core/signature.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/measure.h"
#include "runtime/cpu/post_ops.h"

namespace tso::cpu {

using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;

bool lower_pointwise(Builder& b, const FusionGroup& group,
                     const dnnl::convolution_forward::primitive_desc& direct,
                     const std::vector<Arg>& direct_extra) {
  const Graph& g = b.graph();
  const Node& n = g.node(group.anchor);
  const Shape xs = g.type(n.args[0]).shape, ws = g.type(n.args[1]).shape, ys = n.outs[0].shape;
  const memory::desc nhwc_in(dims_of(xs), dt::f32, tag::nhwc);
  const memory::desc nhwc_out(dims_of(ys), dt::f32, tag::nhwc);
  const ExecutorOptions::Choice choice = b.options().pointwise_product;
  if (choice == ExecutorOptions::Choice::kOff ||
      (choice == ExecutorOptions::Choice::kMeasured && !b.options().measure) || ws[2] != 1 ||
      ws[3] != 1 || !(xs[2] == ys[2] && xs[3] == ys[3]) || n.attrs.i(AttrKey::groups) != 1 ||
      direct.src_desc() != nhwc_in || direct.dst_desc() != nhwc_out ||
      !b.is_const(b.value(n.args[1])))
    return false;
  const int64_t rows = xs[0] * xs[2] * xs[3], c = xs[1], k = ys[1];
  const memory::desc src_md = plain_desc({rows, c}), dst_md = plain_desc({rows, k});
  const bool has_bias = n.args.size() == 3;

  PostOps post;
  const DstView dst{{rows, k}, group_type(b, group).shape, false, nhwc_out};
  if (!append_post_ops(b, group, dst, &post)) return false;
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(post.ops);
  dnnl::inner_product_forward::primitive_desc ip(
      b.engine(), prop_kind::forward_inference, src_md, memory::desc({k, c}, dt::f32, tag::any),
      has_bias ? plain_desc({k}) : memory::desc(), dst_md, attr);
  const std::string key = "pointwise " + op_signature(g, group.anchor) + post.nodes;
  if (choice == ExecutorOptions::Choice::kMeasured &&
      fastest(b.options().choices_file, key,
              {[&](double bound) {
                 return time_primitive(b.engine(), dnnl::convolution_forward(direct), direct,
                                       direct_extra, bound);
               },
               [&](double bound) {
                 return time_primitive(b.engine(), dnnl::inner_product_forward(ip), ip,
                                       post.args, bound);
               }}) == 0)
    return false;

  b.note_scratchpad(ip);
  const int x = b.as_layout(b.value(n.args[0]), nhwc_in);
  const int w_view = b.view(b.as_plain(b.value(n.args[1])), {DType::kF32, Shape{k, c}});
  const int w = b.as_layout(w_view, ip.weights_desc());
  std::vector<Arg> args = {{DNNL_ARG_SRC, x, src_md}, {DNNL_ARG_WEIGHTS, w}};
  std::vector<int> reads = {x, w};
  if (has_bias) {
    const int bias = b.as_plain(b.value(n.args[2]));
    args.push_back({DNNL_ARG_BIAS, bias, plain_desc({k})});
    reads.push_back(bias);
  }
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(group_type(b, group), nhwc_out, reads);
  args.push_back({DNNL_ARG_DST, y, dst_md});
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive(impl_name("inner_product", ip), group_nodes(b, group, post),
                  dnnl::inner_product_forward(ip), std::move(args));
  b.set_value({group.tail(), 0}, y);
  return true;
}

}  // namespace tso::cpu
