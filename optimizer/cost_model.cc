#include "optimizer/cost_model.h"

#include <vector>

#include "core/post_ops.h"
#include "core/quantized.h"

namespace tso::opt {

std::optional<double> fused_activation_us(const CostModel& model, const Node& n,
                                          std::span<const TensorType> inputs) {
  if (!model.fuses()) return std::nullopt;
  std::optional<FusedActivation> f = split_fused_activation(n);
  if (!f) return std::nullopt;
  return model.node_us(f->anchor, inputs) + model.post_op_us(f->post_op, f->activation, n.outs);
}

double node_cost(const Graph& g, const GraphIndex& index, const CostModel& model, int i) {
  const Node& n = g.node(i);
  if (is_source(n.op) || index.constant[i]) return 0;
  TensorType buf[8];
  std::vector<TensorType> big;
  TensorType* in = buf;
  if (n.args.size() > 8) {
    big.resize(n.args.size());
    in = big.data();
  }
  for (size_t k = 0; k < n.args.size(); ++k) in[k] = g.type(n.args[k]);
  if (is_post_op_anchor(n.op)) to_run_types(g, n, {in, n.args.size()});
  // A pair (core/quantized.h): the quantize_linear costs its own step, the
  // dequantize_linear what it adds; nothing where the pair keeps the levels
  // its input holds, or where only int8 kernels read its result (each
  // quantizes the pair's input, in its own cost). A pair that runs as
  // post-ops of an int8 kernel (post_op.h) costs what it adds there, at its
  // dequantize_linear.
  auto no_step = [&](const Node& q, int dq) {
    return keeps_levels(g, q) ||
           (!index.is_output[dq] && read_as_integers(g, {dq, 0}, index.users[dq]));
  };
  if (n.op == Op::QuantizeLinear && index.users[i].size() == 1 && !index.is_output[i]) {
    const int dq = index.users[i][0];
    if (only_reader(g, index, {i, 0}, dq) && undoes(g, n, g.node(dq)) &&
        ((model.fuses() && pair_post_op(g, index, dq)) || no_step(n, dq)))
      return 0;
  }
  if (n.op == Op::DequantizeLinear && only_reader(g, index, n.args[0], i) &&
      undoes(g, g.node(n.args[0].node), n)) {
    if (std::optional<Op> anchor = model.fuses() ? pair_post_op(g, index, i) : std::nullopt)
      return model.post_op_us(PostOp{*anchor, 0}, n, {in, n.args.size()});
    if (no_step(g.node(n.args[0].node), i)) return 0;
    return model.post_op_us(PostOp{Op::QuantizeLinear, 0}, n, {in, n.args.size()});
  }
  // A transpose that its matmul writes, or that the matmuls reading it
  // read through strides (core/post_ops.h), runs no step of the CPU
  // runtime, whose plan a model that costs post-ops apart prices.
  if (n.op == Op::Transpose && model.fuses()) {
    const int p = n.args[0].node;
    const Node& m = g.node(p);
    if (m.op == Op::Matmul &&
        transpose_written_by_product(g, i, static_cast<int>(index.users[p].size()),
                                     index.is_output[p], index.constant[m.args[1].node]))
      return 0;
    if (transpose_read_by_products(g, i, index.users[i], index.is_output[i], index.constant))
      return 0;
  }
  // Only a model that costs post-ops apart needs to know (the walk up a
  // chain is wasted on the others).
  if (std::optional<PostOp> p = model.fuses() ? post_op(g, index, i) : std::nullopt)
    return model.post_op_us(*p, n, {in, n.args.size()});
  return model.node_us(n, {in, n.args.size()});
}

double graph_cost(const Graph& g, const GraphIndex& index, const CostModel& model) {
  double total = 0;
  for (int i = 0; i < g.size(); ++i) total += node_cost(g, index, model, i);
  return total;
}

}  // namespace tso::opt
