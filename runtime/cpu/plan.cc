#include "runtime/cpu/plan.h"

#include <cstring>
#include <set>

#include "core/post_ops.h"
#include "core/quantized.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/elementwise_chain.h"
#include "runtime/cpu/plan_choices.h"
#include "runtime/cpu/profiler.h"

namespace tso::cpu {

Builder::Builder(const Graph& g, const ExecutorOptions& options, const dnnl::engine& engine)
    : g_(g),
      options_(options),
      engine_(engine),
      readers_(g.size()),
      is_output_(g.size(), 0),
      weight_only_(weight_only_nodes(g)) {
  value_.resize(g.size());
  for (int i = 0; i < g.size(); ++i) {
    value_[i].assign(g.node(i).outs.size(), -1);
    for (const TensorRef& a : g.node(i).args)
      if (readers_[a.node].empty() || readers_[a.node].back() != i) readers_[a.node].push_back(i);
  }
  for (const GraphOutput& o : g.outputs()) is_output_[o.ref.node] = 1;
}

int Builder::root(int t) const {
  while (plan_.tensors[t].storage == Storage::kView) t = plan_.tensors[t].parent;
  return t;
}

bool Builder::is_const(int t) const {
  const Storage s = plan_.tensors[root(t)].storage;
  return s == Storage::kHost || s == Storage::kStatic || s == Storage::kShared;
}

bool Builder::all_const(const std::vector<int>& ts) const {
  for (int t : ts)
    if (!is_const(t)) return false;
  return true;
}

namespace {

int64_t bytes_of(const TensorType& type, const memory::desc& md) {
  if (md.get_ndims() > 0) return static_cast<int64_t>(md.get_size());
  return byte_size(type);
}

PlanTensor plain_tensor(const TensorType& type, Storage storage) {
  PlanTensor t;
  t.type = type;
  if (dnnl_type(type.dtype) != memory::data_type::undef) t.md = plain_desc(type);
  t.bytes = bytes_of(type, t.md);
  t.storage = storage;
  return t;
}

}  // namespace

int Builder::output_tensor(const TensorType& type, const memory::desc& md,
                           const std::vector<int>& reads) {
  PlanTensor t;
  t.type = type;
  t.md = md;
  t.bytes = bytes_of(type, md);
  t.storage = all_const(reads) ? Storage::kStatic : Storage::kArena;
  plan_.tensors.push_back(std::move(t));
  return static_cast<int>(plan_.tensors.size()) - 1;
}

int Builder::input_tensor(const TensorType& type) {
  PlanTensor t = plain_tensor(type, Storage::kInput);
  plan_.tensors.push_back(std::move(t));
  return static_cast<int>(plan_.tensors.size()) - 1;
}

int Builder::host_tensor(const TensorType& type, std::shared_ptr<const void> keep,
                         const std::byte* bytes) {
  PlanTensor t = plain_tensor(type, Storage::kHost);
  t.host = std::move(keep);
  t.host_bytes = bytes;
  plan_.tensors.push_back(std::move(t));
  return static_cast<int>(plan_.tensors.size()) - 1;
}

int Builder::host_floats(std::vector<float> values, const Shape& shape) {
  auto keep = std::make_shared<std::vector<float>>(std::move(values));
  return host_tensor({DType::kF32, shape}, keep, reinterpret_cast<const std::byte*>(keep->data()));
}

int Builder::view(int parent, const TensorType& type, int64_t offset) {
  PlanTensor t = plain_tensor(type, Storage::kView);
  t.parent = parent;
  t.view_offset = offset;
  plan_.tensors.push_back(std::move(t));
  ++plan_.views;
  return static_cast<int>(plan_.tensors.size()) - 1;
}

int Builder::as_layout(int t, const memory::desc& want) {
  if (plan_.tensors[t].md == want) return t;
  for (const Reorder& r : reorders_)
    if (r.from == t && r.md == want) return r.to;
  const int to = output_tensor(plan_.tensors[t].type, want, {t});
  if (options_.constants && plan_.tensors[root(t)].storage == Storage::kHost) {
    plan_.tensors[to].storage = Storage::kShared;
    plan_.tensors[to].source = t;
  }
  const memory::desc from_md = plan_.tensors[t].md;
  dnnl::reorder::primitive_desc pd(engine_, from_md, engine_, want, attr());
  note_scratchpad(pd);
  if (!is_const(t)) ++plan_.reorders;
  add_primitive("reorder " + std::string(pd.impl_info_str()), "layout change", dnnl::reorder(pd),
                {{DNNL_ARG_FROM, t}, {DNNL_ARG_TO, to}});
  plan_.steps.back().operand_copy = true;
  reorders_.push_back({t, want, to});
  return to;
}

int Builder::value(TensorRef r) const {
  const int t = value_[r.node][r.output];
  TSO_CHECK(!levels_.count(t),
            describe(r.node) + " holds int8 levels, which only int8 kernels read");
  return t;
}

int Builder::quantized_value(TensorRef r, const memory::desc& want, float scale, int32_t zero) {
  const int t = value_[r.node][r.output];
  const auto it = levels_.find(t);
  if (it == levels_.end()) return as_quantized(t, want, scale, zero);
  TSO_CHECK(it->second.scale == scale && it->second.zero == zero &&
                plan_.tensors[t].md.get_data_type() == want.get_data_type(),
            describe(r.node) + "'s int8 levels are read with other parameters");
  return as_layout(t, want);
}

int Builder::as_quantized(int t, const memory::desc& want, float scale, int32_t zero) {
  for (const Quantized& q : quantized_)
    if (q.from == t && q.md == want && q.scale == scale && q.zero == zero) return q.to;
  if (auto it = pairs_.find(t); it != pairs_.end()) {
    if (const int to = quantize_pair_input(*this, it->second, want); to >= 0) {
      quantized_.push_back({t, want, scale, zero, to});
      return to;
    }
  }
  const int s = host_floats({scale}, Shape{1});
  auto zero_value = std::make_shared<int32_t>(zero);
  const int z = host_tensor({DType::kI32, Shape{1}}, zero_value,
                            reinterpret_cast<const std::byte*>(zero_value.get()));
  dnnl::primitive_attr a = attr();
  a.set_scales_mask(DNNL_ARG_DST, 0);
  a.set_zero_points_mask(DNNL_ARG_DST, 0);
  dnnl::reorder::primitive_desc pd(engine_, plan_.tensors[t].md, engine_, want, a);
  note_scratchpad(pd);
  const DType type = want.get_data_type() == memory::data_type::u8 ? DType::kU8 : DType::kI8;
  const int to = output_tensor({type, plan_.tensors[t].type.shape}, want, {t, s, z});
  add_primitive("quantize " + std::string(pd.impl_info_str()), "int8 input", dnnl::reorder(pd),
                {{DNNL_ARG_FROM, t},
                 {DNNL_ARG_TO, to},
                 {DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST, s},
                 {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, z}});
  plan_.steps.back().operand_copy = true;
  quantized_.push_back({t, want, scale, zero, to});
  return to;
}

void Builder::note_pair(int y, PairSource source) { pairs_[y] = source; }

void Builder::drop_unread_pairs() {
  std::set<int> read;
  for (const PlanStep& s : plan_.steps)
    for (int t : s.reads) read.insert(root(t));
  for (int t : plan_.outputs) read.insert(root(t));
  std::erase_if(plan_.steps, [&](const PlanStep& s) {
    return s.writes.size() == 1 && pairs_.count(s.writes[0]) && !read.count(s.writes[0]);
  });
}

int Builder::as_plain(int t) {
  const PlanTensor& p = plan_.tensors[t];
  if (p.md.get_ndims() == 0 || is_plain(p.md)) return t;
  return as_layout(t, plain_desc(p.md.get_dims(), p.md.get_data_type()));
}

dnnl::primitive_attr Builder::attr() const {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void Builder::note_scratchpad(const dnnl::primitive_desc_base& pd) {
  plan_.scratchpad_bytes = std::max<int64_t>(plan_.scratchpad_bytes,
                                             static_cast<int64_t>(pd.scratchpad_desc().get_size()));
}

void Builder::add_primitive(std::string what, std::string nodes, dnnl::primitive prim,
                            std::vector<Arg> args) {
  PlanStep s;
  s.what = std::move(what);
  s.nodes = std::move(nodes);
  for (const Arg& a : args) {
    const bool dst = a.key == DNNL_ARG_DST || a.key == DNNL_ARG_TO;
    (dst ? s.writes : s.reads).push_back(a.tensor);
  }
  s.bind = [prim, args](const Bindings& b) -> Run {
    std::unordered_map<int, memory> m;
    for (const Arg& a : args)
      m.emplace(a.key, a.md.get_ndims() ? b.mem(a.tensor, a.md) : b.mem(a.tensor));
    m.emplace(DNNL_ARG_SCRATCHPAD, b.scratchpad());
    dnnl::stream* stream = &b.stream();
    return [prim, m = std::move(m), stream] { prim.execute(*stream, m); };
  };
  add_step(std::move(s));
}

void Builder::add_kernel(std::string what, std::string nodes, std::vector<int> reads,
                         std::vector<int> writes, Bind bind) {
  PlanStep s;
  s.what = std::move(what);
  s.nodes = std::move(nodes);
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  s.bind = std::move(bind);
  add_step(std::move(s));
}

void Builder::add_step(PlanStep s) {
  s.prologue = all_const(s.reads);
  plan_.steps.push_back(std::move(s));
}

namespace {

// The values of a constant operator (core/ops.h), row-major.
std::vector<float> constant_values(const Node& n) {
  const Shape& s = n.outs[0].shape;
  std::vector<float> v(s.numel(), n.op == Op::ConstOnes || n.op == Op::ConstPool ? 1.f : 0.f);
  if (n.op == Op::ConstEye)
    for (int64_t i = 0; i < std::min(s[0], s[1]); ++i) v[i * s[1] + i] = 1;
  if (n.op == Op::ConstEyeConv)
    for (int64_t c = 0; c < std::min(s[0], s[1]); ++c)
      v[((c * s[1] + c) * s[2] + s[2] / 2) * s[3] + s[3] / 2] = 1;
  return v;
}

Status lower_source(Builder& b, int i) {
  const Node& n = b.graph().node(i);
  const TensorType& type = n.outs[0];
  if (n.op == Op::Input) {
    const int t = b.input_tensor(type);
    if (b.options().channels_last_inputs && type.dtype == DType::kF32 && type.shape.rank() == 4)
      b.plan().tensors[t].md =
          memory::desc(dims_of(type.shape), memory::data_type::f32, memory::format_tag::nhwc);
    b.plan().inputs[n.name] = t;
    b.set_value({i, 0}, t);
    return {};
  }
  if (n.op == Op::Weight) {
    if (!n.data)
      return Error{"weight '" + n.name +
                   "' has no stored values (give --random-weights SEED "
                   "for a graph-only model)"};
    if (!(n.data->type == type))
      return Error{"weight '" + n.name + "' stores " + to_string(n.data->type) +
                   " but is declared " + to_string(type)};
    b.set_value({i, 0}, b.host_tensor(type, n.data, n.data->bytes.data()));
    return {};
  }
  if (type.dtype != DType::kF32) return Error{b.describe(i) + ": constants are f32 only"};
  b.set_value({i, 0}, b.host_floats(constant_values(n), type.shape));
  return {};
}

Status lower_node(Builder& b, const Fusion& fusion, const ElementwiseChains& chains,
                  const std::vector<int>& pairs, int i) {
  const Node& n = b.graph().node(i);
  if (is_source(n.op)) return lower_source(b, i);
  // A node an earlier step computed: a transpose its product writes
  // (lower_linear.cc).
  if (!n.outs.empty() && b.stored_value({i, 0}) >= 0) return {};
  if (const int c = chains.chain_of[i]; c >= 0) {  // runs with its chain, at the chain's tail
    const ElementwiseChain& chain = chains.chains[c];
    if (chain.tail() != i) return {};
    b.plan().fused_nodes += static_cast<int>(chain_nodes(chain).size()) - 1;
    return lower_elementwise_chain(b, chain);
  }
  if (pairs[i] >= 0) {  // a quantize_linear runs with its dequantize_linear
    if (n.op == Op::QuantizeLinear) return {};
    ++b.plan().fused_nodes;
    const Node& q = b.graph().node(pairs[i]);
    if (keeps_levels(b.graph(), q)) {  // the identity: its input's values
      b.set_value({i, 0}, b.value(q.args[0]));
      return {};
    }
    return lower_quantize_pair(b, pairs[i], i);
  }
  if (n.op == Op::Opaque)
    return Error{b.describe(i) + " is the ONNX operator '" + n.attrs.str(AttrKey::op_type) +
                 "', which tso's CPU runtime cannot execute"};
  const int group = fusion.group_of[i];
  if (group >= 0) {
    const FusionGroup& fg = fusion.groups[group];
    if (fg.tail() != i) return {};  // runs with its group, at the group's last node
    for (const PostOpNode& p : fg.post)
      b.plan().fused_nodes += 1 + static_cast<int>(p.inner.size());
    TSO_RETURN_IF_ERROR(lower_linear(b, fg));
    if (fg.post.empty() || fg.post.back().kind != PostOpNode::Kind::kQuantizePair) return {};
    // An int8 kernel reading the group's levels quantizes them by the
    // pair's formula, which gives each level's integer back; or the group
    // wrote the levels themselves (lower_int8.cc).
    const Node& q = b.graph().node(fg.post.back().inner[0]);
    const int y = b.stored_value({i, 0});
    if (b.holds_levels(y)) return {};
    b.note_pair(y, {y, b.as_plain(b.value(q.args[1])), b.as_plain(b.value(q.args[2])),
                    q.outs[0].dtype});
    return {};
  }
  if (is_movement(b.graph(), i)) return lower_movement(b, i);
  if (is_logic(b.graph(), i)) return lower_logic_node(b, i);
  if (n.op == Op::QuantizeLinear || n.op == Op::DequantizeLinear) return lower_quantize(b, i);
  // where's condition is bool; every other computing operator reads f32.
  for (size_t k = n.op == Op::Where ? 1 : 0; k < n.args.size(); ++k)
    if (b.graph().type(n.args[k]).dtype != DType::kF32)
      return Error{b.describe(i) + " computes on " + to_string(b.graph().type(n.args[k])) +
                   "; the CPU runtime computes on f32 only"};
  return lower_compute(b, i);
}

// The nodes lowering node `i` computes: its fusion group at the group's
// tail, nothing at the group's other nodes, a quantize pair at its
// dequantize_linear, else `i` itself.
std::vector<int> computed_nodes(const Graph& g, const Fusion& fusion,
                                const ElementwiseChains& chains, const std::vector<int>& pairs,
                                int i) {
  if (const int c = chains.chain_of[i]; c >= 0)
    return chains.chains[c].tail() == i ? chain_nodes(chains.chains[c]) : std::vector<int>{};
  if (pairs[i] >= 0)
    return g.node(i).op == Op::QuantizeLinear ? std::vector<int>{} : std::vector<int>{pairs[i], i};
  const int group = fusion.group_of[i];
  if (group < 0) return {i};
  const FusionGroup& fg = fusion.groups[group];
  if (fg.tail() != i) return {};
  std::vector<int> nodes = {fg.anchor};
  for (const PostOpNode& p : fg.post) {
    nodes.insert(nodes.end(), p.inner.begin(), p.inner.end());
    nodes.push_back(p.node);
  }
  return nodes;
}

// Charges the FLOPs of `nodes` to the first run step from `first` on that
// is not an operand copy (PlanStep::flops).
void charge_flops(const Graph& g, const std::vector<int>& nodes, Plan& plan, size_t first) {
  for (size_t k = first; k < plan.steps.size(); ++k) {
    PlanStep& s = plan.steps[k];
    if (s.prologue || s.operand_copy) continue;
    for (int n : nodes) {
      s.flops += node_flops(g, n);
      s.product = s.product || is_post_op_anchor(g.node(n).op);
    }
    return;
  }
}

}  // namespace

Expected<Plan> build_plan(const Graph& g, const ExecutorOptions& options,
                          const dnnl::engine& engine) {
  if (options.measure && !options.choices_file.empty())
    TSO_RETURN_IF_ERROR(
        load_plan_choices(options.choices_file, device_description(options.threads)));
  Builder b(g, options, engine);
  const Fusion fusion = find_fusions(g, options.fuse);
  std::vector<int> pairs = options.fuse ? quantize_pairs(g) : std::vector<int>(g.size(), -1);
  for (int i = 0; i < g.size(); ++i)  // a pair in a fused group runs there
    if (fusion.group_of[i] >= 0) pairs[i] = -1;
  const ElementwiseChains chains = find_elementwise_chains(g, fusion, pairs, options.fuse);
  for (int i = 0; i < g.size(); ++i) {
    const size_t first = b.plan().steps.size();
    Status s;
    try {
      s = lower_node(b, fusion, chains, pairs, i);
    } catch (const dnnl::error& e) {
      s = Error{describe_node(g, i) + ": oneDNN " + e.what() + " (status " +
                std::to_string(int(e.status)) + ")"};
    }
    if (!s) return s.error();
    charge_flops(g, computed_nodes(g, fusion, chains, pairs, i), b.plan(), first);
  }
  for (const GraphOutput& o : g.outputs()) b.plan().outputs.push_back(b.as_plain(b.value(o.ref)));
  b.drop_unread_pairs();
  return std::move(b.plan());
}

}  // namespace tso::cpu
