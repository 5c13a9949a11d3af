#include "runtime/cpu/elementwise_chain.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/quantized.h"
#include "runtime/cpu/dnnl_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/vector_kernels.h"

namespace tso::cpu {
namespace {

bool is_f32(const Graph& g, TensorRef r) { return g.type(r).dtype == DType::kF32; }

// Whether binary `n`, with the chain as argument `chain` of shape `shape`,
// is a step, and then the step.
bool binary_step(const Graph& g, int node, int chain, const Shape& shape, ChainStep* step) {
  const Node& n = g.node(node);
  const TensorRef other = n.args[1 - chain];
  const Shape& os = g.type(other).shape;
  if (!is_f32(g, other) || n.args[chain] == other || !(os == shape || os.numel() == 1))
    return false;
  *step = ChainStep{ChainStep::Kind::kBinary, node, -1, other, chain == 0};
  return true;
}

bool is_binary(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div; }

// Node `node` as the step after the chain's value `v`, if it is one.
bool next_step(const Graph& g, int node, TensorRef v, ChainStep* step) {
  const Node& n = g.node(node);
  const Shape& shape = g.type(v).shape;
  if (n.outs.size() != 1 || n.outs[0].dtype != DType::kF32 || !(n.outs[0].shape == shape))
    return false;
  if (is_binary(n.op) && n.args.size() == 2) {
    const int chain = n.args[0] == v ? 0 : 1;
    return n.args[chain] == v && binary_step(g, node, chain, shape, step);
  }
  if (n.op == Op::Erf) {
    *step = ChainStep{ChainStep::Kind::kErf, node, -1, {}, true};
    return true;
  }
  return false;
}

// Quantize_linear `q`, reading the chain's value, as a pair step.
bool pair_step(const Graph& g, const std::vector<int>& pairs,
               const std::vector<std::vector<int>>& readers, int q, ChainStep* step) {
  const Node& n = g.node(q);
  if (n.op != Op::QuantizeLinear || pairs[q] < 0 || keeps_levels(g, n)) return false;
  const int dq = pairs[q];
  if (g.node(dq).outs[0].dtype != DType::kF32 || g.type(n.args[1]).shape.numel() != 1) return false;
  // An int8 kernel reading the pair quantizes its input itself (Builder::
  // as_quantized): the pair's floats would be written for nothing.
  const std::vector<int>& r = readers[dq];
  const auto int8 = [&](int k) {
    return runs_int8(g, g.node(k)) && int8_kernel_exact(g, g.node(k));
  };
  if (!r.empty() && std::all_of(r.begin(), r.end(), int8)) return false;
  *step = ChainStep{ChainStep::Kind::kPair, dq, q, {}, true};
  return true;
}

}  // namespace

std::vector<int> chain_nodes(const ElementwiseChain& chain) {
  std::vector<int> nodes;
  for (const ChainStep& s : chain.steps) {
    if (s.quantize >= 0) nodes.push_back(s.quantize);
    nodes.push_back(s.node);
  }
  return nodes;
}

ElementwiseChains find_elementwise_chains(const Graph& g, const Fusion& fusion,
                                          const std::vector<int>& pairs, bool enabled) {
  ElementwiseChains c{{}, std::vector<int>(g.size(), -1)};
  if (!enabled) return c;
  const Consumers consumed = consumers(g);
  const std::vector<std::vector<int>>& readers = consumed.of;
  auto free = [&](int node) { return fusion.group_of[node] < 0 && c.chain_of[node] < 0; };

  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (!free(i) || n.outs.size() != 1) continue;
    ElementwiseChain chain;
    ChainStep first;
    const Shape& shape = n.outs[0].shape;
    const bool f32 = n.outs[0].dtype == DType::kF32;
    if (f32 && is_binary(n.op) && n.args.size() == 2) {
      // The chain reads the operand of the result's shape (the left one
      // where both are).
      const int k = g.type(n.args[0]).shape == shape ? 0 : 1;
      if (!(g.type(n.args[k]).shape == shape) || !is_f32(g, n.args[k]) ||
          !binary_step(g, i, k, shape, &first))
        continue;
      chain.input = n.args[k];
    } else if (f32 && n.op == Op::Erf) {
      first = ChainStep{ChainStep::Kind::kErf, i, -1, {}, true};
      chain.input = n.args[0];
    } else if (pair_step(g, pairs, readers, i, &first) && free(first.node)) {
      chain.input = n.args[0];
      if (!is_f32(g, chain.input)) continue;
    } else {
      continue;
    }
    chain.steps.push_back(first);
    while (true) {
      const int tail = chain.tail();
      if (consumed.is_output[tail] || readers[tail].size() != 1) break;
      const int next = readers[tail][0];
      ChainStep step;
      if (!free(next)) break;
      if (!next_step(g, next, {tail, 0}, &step) &&
          !(pair_step(g, pairs, readers, next, &step) && free(step.node)))
        break;
      chain.steps.push_back(step);
    }
    if (chain.steps.size() < 2) continue;
    const int id = static_cast<int>(c.chains.size());
    for (const ChainStep& s : chain.steps) {
      c.chain_of[s.node] = id;
      if (s.quantize >= 0) c.chain_of[s.quantize] = id;
    }
    c.chains.push_back(std::move(chain));
  }
  return c;
}

namespace {

// Floats a block holds: 8 KiB, in the first-level cache while every step
// runs on it, and a multiple of every vector width, so that erf's vector
// kernel leaves the same elements to the scalar formula as erf's own step.
constexpr int64_t kBlock = 2048;

// A step with its operands' addresses.
struct BoundStep {
  ChainStep::Kind kind;
  BinaryFn fn = BinaryFn::kAdd;
  bool chain_left = true;
  const float* other = nullptr;  // kBinary
  bool scalar = false;           // kBinary: `other` has one element
  const float* scale = nullptr;  // kPair
  const std::byte* zero = nullptr;
  bool u8 = false;
};

template <class F>
void binary_block(float* v, const float* o, bool scalar, int64_t m, F f) {
  if (scalar) {
    const float c = *o;
    for (int64_t i = 0; i < m; ++i) v[i] = f(v[i], c);
  } else {
    for (int64_t i = 0; i < m; ++i) v[i] = f(v[i], o[i]);
  }
}

// Block v = [at, at + m) of the chain's value, in place.
void run_step(const BoundStep& s, float* v, int64_t at, int64_t m) {
  switch (s.kind) {
    case ChainStep::Kind::kErf:
      for (int64_t i = vector_kernels().erf(v, v, m); i < m; ++i) v[i] = std::erf(v[i]);
      return;
    case ChainStep::Kind::kPair: {
      const int z = s.u8 ? int{*reinterpret_cast<const uint8_t*>(s.zero)}
                         : int{*reinterpret_cast<const int8_t*>(s.zero)};
      fake_quantize(v, *s.scale, z, s.u8 ? rt::kU8Range : rt::kI8Range, v, m);
      return;
    }
    case ChainStep::Kind::kBinary:
      break;
  }
  const float* o = s.scalar ? s.other : s.other + at;
  const bool l = s.chain_left;
  switch (s.fn) {
    case BinaryFn::kAdd:
      return binary_block(v, o, s.scalar, m, [](float a, float b) { return a + b; });
    case BinaryFn::kMul:
      return binary_block(v, o, s.scalar, m, [](float a, float b) { return a * b; });
    case BinaryFn::kSub:
      return l ? binary_block(v, o, s.scalar, m, [](float a, float b) { return a - b; })
               : binary_block(v, o, s.scalar, m, [](float a, float b) { return b - a; });
    default:  // kDiv
      return l ? binary_block(v, o, s.scalar, m, [](float a, float b) { return a / b; })
               : binary_block(v, o, s.scalar, m, [](float a, float b) { return b / a; });
  }
}

}  // namespace

Status lower_elementwise_chain(Builder& b, const ElementwiseChain& chain) {
  const Graph& g = b.graph();
  const Shape& shape = g.type(chain.input).shape;
  // The layout of the chain's input when every operand of its shape has it
  // and it is dense; else all row-major.
  int x = b.value(chain.input);
  std::vector<int> full = {x};
  for (const ChainStep& s : chain.steps)
    if (s.kind == ChainStep::Kind::kBinary && g.type(s.other).shape == shape)
      full.push_back(b.value(s.other));
  const memory::desc x_md = b.tensor(x).md;
  const bool dense =
      x_md.get_inner_nblks() == 0 && static_cast<int64_t>(x_md.get_size()) == shape.numel() * 4 &&
      std::all_of(full.begin(), full.end(), [&](int t) { return b.tensor(t).md == x_md; });
  auto operand = [&](int t) { return dense ? t : b.as_plain(t); };
  x = operand(x);
  std::vector<int> reads = {x};
  std::vector<int> others(chain.steps.size(), -1), scales(others), zeros(others);
  std::string nodes =
      b.describe(chain.steps[0].quantize >= 0 ? chain.steps[0].quantize : chain.steps[0].node);
  for (size_t k = 0; k < chain.steps.size(); ++k) {
    const ChainStep& s = chain.steps[k];
    if (k > 0)
      nodes += s.kind == ChainStep::Kind::kPair ? " + quantize pair"
                                                : " + " + std::string(op_name(g.node(s.node).op));
    if (s.kind == ChainStep::Kind::kBinary) {
      const int t = b.value(s.other);
      others[k] = g.type(s.other).shape == shape ? operand(t) : b.as_plain(t);
      reads.push_back(others[k]);
    } else if (s.kind == ChainStep::Kind::kPair) {
      const Node& q = g.node(s.quantize);
      scales[k] = b.as_plain(b.value(q.args[1]));
      zeros[k] = b.as_plain(b.value(q.args[2]));
      reads.push_back(scales[k]);
      reads.push_back(zeros[k]);
    }
  }
  const memory::desc y_md = dense ? x_md : plain_desc(g.node(chain.tail()).outs[0]);
  const int y = b.output_tensor(g.node(chain.tail()).outs[0], y_md, reads);
  const int64_t count = shape.numel();
  std::vector<BoundStep> proto;
  for (const ChainStep& s : chain.steps) {
    BoundStep p{s.kind};
    if (s.kind == ChainStep::Kind::kBinary) {
      p.fn = binary_fn(g.node(s.node).op);
      p.chain_left = s.chain_left;
      p.scalar = g.type(s.other).shape.numel() == 1 && !(g.type(s.other).shape == shape);
    } else if (s.kind == ChainStep::Kind::kPair) {
      p.u8 = g.node(s.quantize).outs[0].dtype == DType::kU8;
    }
    proto.push_back(p);
  }
  b.add_kernel("elementwise chain (own)", nodes, reads, {y}, [=](const Bindings& m) -> Run {
    std::vector<BoundStep> steps = proto;
    for (size_t k = 0; k < steps.size(); ++k) {
      if (others[k] >= 0) steps[k].other = reinterpret_cast<const float*>(m.data(others[k]));
      if (scales[k] >= 0) {
        steps[k].scale = reinterpret_cast<const float*>(m.data(scales[k]));
        steps[k].zero = m.data(zeros[k]);
      }
    }
    const float* px = reinterpret_cast<const float*>(m.data(x));
    float* py = reinterpret_cast<float*>(m.data(y));
    return [=] {
#pragma omp parallel for schedule(static) if (count > 16384)
      for (int64_t at = 0; at < count; at += kBlock) {
        const int64_t n = std::min(kBlock, count - at);
        std::memcpy(py + at, px + at, n * sizeof(float));
        for (const BoundStep& s : steps) run_step(s, py + at, at, n);
      }
    };
  });
  b.set_value({chain.tail(), 0}, y);
  return {};
}

}  // namespace tso::cpu
