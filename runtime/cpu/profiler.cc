#include "runtime/cpu/profiler.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "core/post_ops.h"
#include "core/quantized.h"
#include "core/signature.h"
#include "core/signature_graph.h"
#include "core/stats.h"
#include "runtime/cpu/cache_residency.h"
#include "runtime/cpu/executor.h"
#include "runtime/cpu/fusion.h"
#include "runtime/cpu/interference.h"
#include "runtime/common/revision.h"
#include "runtime/cpu/widen_f16.h"

namespace tso::cpu {
namespace {

std::string read_cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (!name.empty()) return name;
  }
  return "unknown CPU";
}

// Read once: every plan with a choices file asks for the device string.
const std::string& cpu_model_name() {
  static const std::string name = read_cpu_model_name();
  return name;
}

// Times `g` (the one-node graph of `n`) planned with `eo`: the plan's own
// steps only. The reorders at the one-node graph's boundary (into the
// convolution's layout, back to row-major) are not part of the operator's
// cost in a model, where producers already write the layout their consumers
// read.
Expected<rt::CostEntry> time_plan(const Graph& g, const ExecutorOptions& eo,
                                  const ProfileOptions& options, int* steps_out = nullptr) {
  rt::CostEntry e;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, eo);
  if (!ex) return ex.error();
  Executor& x = **ex;
  if (steps_out) *steps_out = x.stats().steps;
  if (x.stats().steps == 0) {
    e.kernel = "view";
    return e;
  }
  for (int i : g.input_nodes()) {
    const Node& in = g.node(i);
    if (in.op != Op::Input) continue;
    std::vector<std::byte> bytes = random_tensor_bytes(in.outs[0], options.seed + 1000 + i);
    if (Status s = x.set_input(in.name, bytes); !s.ok()) return s.error();
  }
  Expected<std::vector<StepTime>> steps = x.profile_steps(1);
  if (!steps) return steps.error();
  for (const StepTime& s : *steps)
    if (s.nodes != "layout change") e.kernel += (e.kernel.empty() ? "" : " + ") + s.what;
  // Only the boundary's reorders (a flatten of an NHWC input): a view in a
  // model, where the reorder belongs to the layout its producer writes.
  if (e.kernel.empty()) {
    e.kernel = "view";
    return e;
  }
  double warm_ms = 0;
  for (int w = 0; w < options.warmup; ++w) {
    if (options.budget_ms > 0 && w > 0 && warm_ms > options.budget_ms) break;
    Expected<std::vector<double>> warm = x.time_runs(1, 0);
    if (!warm) return warm.error();
    warm_ms += warm->at(0);
  }
  // Each timed run reads its constants from memory (evict_constants): in a
  // model, the weights of the rest of the model pass through the caches
  // between two runs of this operator, and a 9 MB convolution whose weights
  // stay cached runs in 0.55 of the time it takes there (ResNet-50's last
  // stage, measured). In a model whose weights stay in the last-level cache,
  // they come from there (options.weights_cached). The flushes count against
  // the budget.
  //
  // A run during which other tasks took a core from one of the process's
  // threads for more than a trace of its time (interference.h) is not a
  // measurement of the operator: the preempted thread holds the others at
  // the next barrier for a time slice (4 ms here). Such runs are dropped
  // (their time counts against the budget), and a signature whose runs are
  // mostly disturbed is not measured at all, rather than cached at 100x its
  // cost.
  std::vector<double> t;
  int disturbed = 0;
  double spent_ms = 0;
  const int least = std::min(options.iters, 3);
  for (int it = 0; static_cast<int>(t.size()) < options.iters && it < 4 * options.iters; ++it) {
    if (options.budget_ms > 0 && spent_ms > options.budget_ms &&
        (static_cast<int>(t.size()) >= least || it >= 2 * least))
      break;
    const auto flush_start = std::chrono::steady_clock::now();
    if (options.weights_cached)
      evict_private_caches(options.threads);
    else
      x.evict_constants();
    spent_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          flush_start)
                    .count();
    const SchedulerTally before = scheduler_tally();
    Expected<std::vector<StepTime>> run = x.profile_steps(1);
    if (!run) return run.error();
    const SchedulerTally after = scheduler_tally();
    double ms = 0, run_ms = 0;
    for (const StepTime& s : *run) {
      run_ms += s.ms;
      if (s.nodes != "layout change") ms += s.ms;
    }
    spent_ms += run_ms;
    if (!undisturbed(before, after, run_ms)) {
      ++disturbed;
      continue;
    }
    t.push_back(ms);
  }
  if (static_cast<int>(t.size()) < std::max(1, std::min(options.iters / 2, least)))
    return Error{"the machine is busy: in " + std::to_string(disturbed) + " of " +
                 std::to_string(disturbed + static_cast<int>(t.size())) +
                 " timed runs other processes kept a thread waiting for a core; not measured "
                 "(measure on an idle machine)"};
  e.median_ms = median(t);
  e.min_ms = *std::min_element(t.begin(), t.end());
  e.samples = static_cast<int>(t.size());
  return e;
}

// The types a plan runs an operator on: f16 as f32 (widen_f16.h). Timed on
// f16 operands, an operator would carry the conversions a model does only at
// its boundary (SqueezeNet 1.1 in f16 was predicted at 24 ms, run in 5.6).
std::vector<TensorType> as_planned(std::span<const TensorType> inputs) {
  std::vector<TensorType> out;
  for (const TensorType& t : inputs) out.push_back(widened(t));
  return out;
}

}  // namespace

Expected<rt::CostEntry> profile_node(const Node& n, std::span<const TensorType> signature_inputs,
                                     const ProfileOptions& options) {
  const std::string signature = op_signature(n, signature_inputs);
  const std::vector<TensorType> inputs = as_planned(signature_inputs);
  const std::vector<bool> weights = weight_args(n, inputs);
  Expected<Graph> g = signature_graph(widened(n), inputs, weights, options.seed);
  if (!g) return Error{signature + ": " + g.error().message};
  // A rank-4 input arrives in the layout its producer writes: NHWC after a
  // convolution or a pooling, row-major after a matrix product or a
  // transpose (attention). A computing operator is timed in both and costs
  // the faster, the layout a plan that places it well gives it (a softmax
  // over NHWC runs oneDNN's reference kernel, 100x slower). A convolution
  // is timed on NHWC only: its plan brings either input to the layout its
  // kernel runs in (an uncounted reorder), so both layouts ran the same
  // kernel in the same time (ResNet-18 at batch 1: its 11 convolutions
  // within 6%) and the second plan doubled the cost of measuring a
  // convolution. Data movement on a rank-4 input (split, slice, pad,
  // concat) is timed on NHWC too: the rank-4 tensors of a model are a
  // convolution's or a pool's, and a channel split that is a view of a
  // row-major tensor is a copy out of theirs. Timed row-major, the split
  // after a merged convolution cost nothing, and the search merged NASNet's
  // 1x1 convolutions for 0.85 ms each that the model never saw (the two
  // halves copied out cost 0.2 ms, the merge saves 0.3).
  bool rank4 = false;
  for (size_t i = 0; i < inputs.size(); ++i) rank4 |= !weights[i] && inputs[i].shape.rank() == 4;
  std::vector<bool> layouts = {false};
  if (rank4 && (n.op == Op::Conv2d || op_info(n.op).kind == OpKind::Shape)) layouts = {true};
  else if (rank4) layouts = {true, false};
  // An int8 product's signature graph reads its input through a quantize
  // and dequantize pair, which the plan drops (the kernel quantizes the
  // pair's input itself): the product costs that quantization and its
  // kernel, as in a model, where the pair runs no step when int8 kernels
  // alone read it (optimizer/cost_model.cc).
  std::optional<rt::CostEntry> best;
  for (bool channels_last : layouts) {
    ExecutorOptions eo;
    eo.threads = options.threads;
    eo.channels_last_inputs = channels_last;
    eo.choices_file = options.choices_file;
    Expected<rt::CostEntry> e = time_plan(*g, eo, options);
    if (!e) return Error{signature + ": " + e.error().message};
    if (!best || rt::typical_ms(*e) < rt::typical_ms(*best)) best = std::move(*e);
  }
  best->signature = signature;
  best->op = std::string(op_name(n.op));
  best->occurrences = 1;
  return *best;
}

namespace {

// A graph computing `chain` with a small `anchor` kernel (16 input channels
// or a 16-deep product), followed, when `post` is given, by `post` reading
// the anchor's result as argument `chain_arg` (its other arguments as in
// signature_graph).
Expected<Graph> anchored_graph(Op anchor, const TensorType& chain, const Node* post,
                               std::span<const TensorType> inputs, int chain_arg, uint64_t seed) {
  constexpr int64_t kDepth = 16;
  const Shape& s = chain.shape;
  GraphBuilder b("post-op");
  Expected<TensorRef> a = Error{""};
  if (anchor == Op::Conv2d && s.rank() == 4) {
    const TensorType x{chain.dtype, Shape({s[0], kDepth, s[2], s[3]})};
    const TensorType w{chain.dtype, Shape({s[1], kDepth, 1, 1})};
    auto data = std::make_shared<WeightData>();
    data->type = w;
    data->bytes = random_tensor_bytes(w, seed);
    a = b.add1(Op::Conv2d, {b.input("x", x), b.weight("w", w, std::move(data))});
  } else if (s.rank() >= 2) {
    Shape xs = s;
    xs[xs.rank() - 1] = kDepth;
    const TensorType x{chain.dtype, xs};
    const TensorType w{chain.dtype, Shape({kDepth, s[s.rank() - 1]})};
    auto data = std::make_shared<WeightData>();
    data->type = w;
    data->bytes = random_tensor_bytes(w, seed);
    a = b.add1(Op::Matmul, {b.input("x", x), b.weight("w", w, std::move(data))});
  } else {
    return Error{"no " + std::string(op_name(anchor)) + " computes " + to_string(chain)};
  }
  if (!a) return a.error();
  if (!post) {
    b.output("out", *a);
    return b.finish();
  }
  const std::vector<bool> weights = weight_args(*post, inputs);
  Node copy = *post;
  copy.args.clear();
  copy.data = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (static_cast<int>(i) == chain_arg) {
      copy.args.push_back(*a);
    } else if (weights[i]) {
      auto data = std::make_shared<WeightData>();
      data->type = inputs[i];
      data->bytes = random_tensor_bytes(inputs[i], seed + 1 + i);
      copy.args.push_back(b.weight(name, inputs[i], std::move(data)));
    } else {
      copy.args.push_back(b.input(name, inputs[i]));
    }
  }
  b.output("out", b.add_node(std::move(copy)));
  return b.finish();
}

}  // namespace

Expected<rt::CostEntry> profile_post_op(Op anchor, const Node& n,
                                        std::span<const TensorType> signature_inputs, int chain,
                                        const ProfileOptions& options) {
  const std::string signature = post_op_signature(anchor, n, signature_inputs, chain);
  const std::vector<TensorType> inputs = as_planned(signature_inputs);
  const Node planned = widened(n);
  if (chain < 0 || chain >= static_cast<int>(inputs.size()))
    return Error{signature + ": no argument " + std::to_string(chain)};
  // A dequantize_linear in the step of the quantize_linear it undoes (a
  // pair, core/quantized.h), on the NHWC output of a convolution; after
  // another anchor, the pair as post-ops of an int8 kernel (fusion.h).
  const bool pair = anchor == Op::QuantizeLinear;
  if (pair && n.op != Op::DequantizeLinear)
    return Error{signature + ": only a dequantize_linear runs in a quantize_linear's step"};
  const bool int8_pair = !pair && n.op == Op::DequantizeLinear;
  auto graph = [&](bool with_post) {
    if (pair) return quantize_graph(inputs[chain], with_post);
    if (int8_pair)
      return int8_anchored_graph(anchor, inputs[chain].shape, inputs[chain].dtype, with_post);
    return anchored_graph(anchor, inputs[chain], with_post ? &planned : nullptr, inputs, chain,
                          options.seed);
  };
  Expected<Graph> alone = graph(false);
  if (!alone) return Error{signature + ": " + alone.error().message};
  Expected<Graph> fused = graph(true);
  if (!fused) return Error{signature + ": " + fused.error().message};
  ExecutorOptions eo;
  eo.threads = options.threads;
  eo.channels_last_inputs = anchor == Op::Conv2d || (pair && inputs[chain].shape.rank() == 4);
  eo.choices_file = options.choices_file;
  int alone_steps = 0, fused_steps = 0;
  Expected<rt::CostEntry> a = time_plan(*alone, eo, options, &alone_steps);
  if (!a) return Error{signature + ": " + a.error().message};
  Expected<rt::CostEntry> e = time_plan(*fused, eo, options, &fused_steps);
  if (!e) return Error{signature + ": " + e.error().message};
  // What the post-op adds to the anchor's kernel; a node the runtime does
  // not fuse there adds its own steps, and is timed so.
  e->median_ms = std::max(0.0, e->median_ms - a->median_ms);
  e->min_ms = std::max(0.0, e->min_ms - a->min_ms);
  if (fused_steps > alone_steps) e->kernel = "not fused: " + e->kernel;
  e->signature = signature;
  e->op = std::string(op_name(n.op));
  e->occurrences = 1;
  return e;
}

Expected<rt::CostTable> profile_model(const Graph& g, const std::string& model_name,
                                      const ProfileOptions& options) {
  // Every node alone (an int8 product on its integer types), every node the
  // plan fuses into a convolution or product as that post-op (the five-node
  // GELU excepted: the optimizer costs its nodes alone; a pair as its
  // dequantize_linear), and every dequantize_linear that runs in its
  // quantize_linear's step, as the optimizer's cost model asks for them
  // (optimizer/cost_model.h).
  struct Use {
    int node = -1;
    std::vector<TensorType> in;
    Op anchor = Op::Input;  // Input: the node alone
    int chain = 0;
    int occurrences = 0;
  };
  std::map<std::string, Use> uses;
  auto types = [&](int i) {
    std::vector<TensorType> in;
    for (TensorRef a : g.node(i).args) in.push_back(g.type(a));
    return in;
  };
  auto count = [&](const std::string& sig, Use use) {
    ++uses.try_emplace(sig, std::move(use)).first->second.occurrences;
  };
  const Fusion fusion = find_fusions(g, true);
  const std::vector<int> pairs = quantize_pairs(g);
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (is_source(n.op)) continue;
    if (pairs[i] >= 0 && fusion.group_of[i] >= 0) continue;  // a post-op, below
    std::vector<TensorType> in = types(i);
    if (pairs[i] >= 0 && keeps_levels(g, g.node(n.op == Op::QuantizeLinear ? i : pairs[i])))
      continue;  // the identity
    if (pairs[i] >= 0 && n.op == Op::DequantizeLinear) {
      count(post_op_signature(Op::QuantizeLinear, n, in, 0), {i, in, Op::QuantizeLinear, 0});
      continue;
    }
    if (is_post_op_anchor(n.op)) to_run_types(g, n, in);
    count(op_signature(n, in), {i, in});
  }
  for (const FusionGroup& group : fusion.groups) {
    for (const PostOpNode& p : group.post) {
      if (p.kind == PostOpNode::Kind::kGelu) continue;
      const std::vector<TensorRef>& args = g.node(p.node).args;
      const int chain = p.other.node >= 0 && args.size() > 1 && args[0] == p.other ? 1 : 0;
      const Op anchor = g.node(group.anchor).op;
      std::vector<TensorType> in = types(p.node);
      count(post_op_signature(anchor, g.node(p.node), in, chain), {p.node, in, anchor, chain});
    }
  }
  rt::CostTable table;
  table.device = device_description(options.threads);
  table.tf32 = false;
  table.model = model_name;
  int done = 0;
  for (const auto& [sig, u] : uses) {
    const Node& n = g.node(u.node);
    Expected<rt::CostEntry> e = u.anchor == Op::Input
                                    ? profile_node(n, u.in, options)
                                    : profile_post_op(u.anchor, n, u.in, u.chain, options);
    if (!e) return Error{describe_node(g, u.node) + ": " + e.error().message};
    e->occurrences = u.occurrences;
    table.entries.push_back(std::move(*e));
    if (options.progress) options.progress(++done, static_cast<int>(uses.size()), sig);
  }
  return table;
}

std::string device_description(int threads) {
  const int t = threads > 0 ? threads : omp_get_num_procs();
  return "cpu: " + cpu_model_name() + ", " + std::to_string(t) + " thread" + (t == 1 ? "" : "s") +
         ", " + Executor::library_info() + ", constants cold, runtime " + runtime_revision();
}

}  // namespace tso::cpu
