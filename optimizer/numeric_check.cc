#include "optimizer/numeric_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "runtime/reference/executor.h"

namespace tso::opt {

namespace {

// SplitMix64: the same stream on every platform.
uint64_t next(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) for floats; any value of the type for 8-bit integers
// (a quantized image); small non-negative integers otherwise (index inputs
// stay in range of any axis of extent >= 2). The same values in f32 and f64
// (24 random bits).
template <class S>
ref::Tensor<S> random_tensor(const TensorType& t, uint64_t* state) {
  ref::Tensor<S> x(t.shape);
  bool integer = t.dtype == DType::kI64 || t.dtype == DType::kI32 || t.dtype == DType::kBool;
  for (S& v : x.data) {
    uint64_t r = next(state);
    if (t.dtype == DType::kU8 || t.dtype == DType::kI8)
      v = static_cast<S>(static_cast<int>(r % 256) - (t.dtype == DType::kI8 ? 128 : 0));
    else
      v = integer ? static_cast<S>(r % 2) : static_cast<S>((r >> 40) * 0x1.0p-23 - 1.0);
  }
  return x;
}

// `g` cut at its opaque nodes: each opaque output becomes an input named
// after the node ("opaque:NAME:K"), and each opaque argument an extra output
// ("opaque-arg:NAME:J", by node name order) after the graph's own outputs.
// `signatures` gets each opaque node's name -> (attributes, argument count).
Expected<Graph> cut_at_opaque(const Graph& g, std::map<std::string, std::string>* signatures) {
  GraphBuilder b(g.name());
  std::vector<std::vector<TensorRef>> refs(g.size());
  std::map<std::string, std::vector<TensorRef>> opaque_args;
  for (int i = 0; i < g.size(); ++i) {
    Node n = g.node(i);
    for (TensorRef& a : n.args) a = refs[a.node][a.output];
    if (n.op != Op::Opaque) {
      TensorRef r = b.add_node(n);
      for (int k = 0; k < static_cast<int>(n.outs.size()); ++k) refs[i].push_back({r.node, k});
      continue;
    }
    if (n.name.empty() || opaque_args.count(n.name))
      return Error{describe_node(g, i) + ": opaque nodes need unique names for the check"};
    opaque_args[n.name] = n.args;
    (*signatures)[n.name] = std::to_string(hash_of(n.attrs)) + "/" +
                            std::to_string(n.args.size());
    for (size_t k = 0; k < n.outs.size(); ++k)
      refs[i].push_back(b.input("opaque:" + n.name + ":" + std::to_string(k), n.outs[k]));
  }
  for (const GraphOutput& o : g.outputs()) b.output(o.name, refs[o.ref.node][o.ref.output]);
  for (const auto& [name, args] : opaque_args)
    for (size_t j = 0; j < args.size(); ++j)
      b.output("opaque-arg:" + name + ":" + std::to_string(j), args[j]);
  return b.finish();
}

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kF64; }

bool is_comparison(const Graph& g, TensorRef r) {
  const Node& n = g.node(r.node);
  return (n.op == Op::Greater || n.op == Op::Less || n.op == Op::Equal) &&
         is_float(g.type(n.args[0]).dtype) && is_float(g.type(n.args[1]).dtype);
}

// The outputs that compare floats in both graphs (by index), same operator.
std::vector<size_t> comparison_outputs(const Graph& a, const Graph& b) {
  std::vector<size_t> out;
  for (size_t k = 0; k < a.outputs().size(); ++k) {
    const TensorRef x = a.outputs()[k].ref, y = b.outputs()[k].ref;
    if (is_comparison(a, x) && is_comparison(b, y) && a.node(x.node).op == b.node(y.node).op)
      out.push_back(k);
  }
  return out;
}

// `g` with the two operands of each of its outputs `compared` as extra
// outputs ("compared-arg:K:J"), after its own.
Expected<Graph> with_operands(const Graph& g, const std::vector<size_t>& compared) {
  GraphBuilder b(g.name());
  for (int i = 0; i < g.size(); ++i) b.add_node(g.node(i));
  for (const GraphOutput& o : g.outputs()) b.output(o.name, o.ref);
  for (size_t k : compared)
    for (int j = 0; j < 2; ++j)
      b.output("compared-arg:" + std::to_string(k) + ":" + std::to_string(j),
               g.node(g.outputs()[k].ref.node).args[j]);
  return b.finish();
}

// The flat index into `operand` (broadcast to `out`, numpy's rules) of
// element `i` of `out`.
int64_t broadcast_index(const Shape& out, const Shape& operand, int64_t i) {
  int64_t index = 0, stride = 1;
  for (int d = out.rank() - 1, e = operand.rank() - 1; d >= 0; --d, --e) {
    const int64_t at = i % out[d];
    i /= out[d];
    if (e < 0) continue;
    if (operand[e] != 1) index += at * stride;
    stride *= operand[e];
  }
  return index;
}

template <class S>
double max_magnitude(const std::vector<S>& x) {
  double m = 0;
  for (S v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

bool has_opaque(const Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(),
                     [](const Node& n) { return n.op == Op::Opaque; });
}

// Runs both graphs on the same random inputs and compares every output; the
// first `outputs` are the graphs' own, `compared` those that compare floats,
// whose operands follow them in pairs.
template <class S>
Expected<CheckResult> compare_evaluated(const Graph& original, const Graph& optimized,
                                        size_t outputs, const std::vector<size_t>& compared,
                                        const CheckOptions& options) {
  CheckResult result;
  for (int run = 0; run < options.runs; ++run) {
    uint64_t state = options.seed * 0x100000001b3ull + static_cast<uint64_t>(run);
    std::map<std::string, ref::Tensor<S>> feeds;
    // Inputs, and weights without data (the text format's), are random; both
    // graphs read them by name.
    for (int i : original.input_nodes()) {
      const Node& n = original.node(i);
      if (n.op == Op::Input || (n.op == Op::Weight && n.data == nullptr))
        feeds.emplace(n.name, random_tensor<S>(n.outs[0], &state));
    }
    auto a = ref::evaluate<S>(original, feeds);
    if (!a) return Error{"evaluating the original graph: " + a.error().message};
    auto b = ref::evaluate<S>(optimized, feeds);
    if (!b) return Error{"evaluating the optimized graph: " + b.error().message};
    // For each compared output: its operands in the original and how close
    // they may come to be a tie.
    std::map<size_t, std::pair<size_t, double>> ties;
    for (size_t at = 0; at < compared.size(); ++at) {
      const size_t l = outputs + 2 * at;
      ties[compared[at]] = {l, options.tolerance * std::max({max_magnitude((*a)[l].data),
                                                             max_magnitude((*a)[l + 1].data),
                                                             1e-6})};
    }
    for (size_t k = 0; k < a->size(); ++k) {
      const std::vector<S>& x = (*a)[k].data;
      const std::vector<S>& y = (*b)[k].data;
      const auto tie = ties.find(k);
      double diff = 0, scale = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (tie != ties.end() && x[i] != y[i]) {
          const ref::Tensor<S>& l = (*a)[tie->second.first];
          const ref::Tensor<S>& r = (*a)[tie->second.first + 1];
          const Shape& shape = (*a)[k].shape;
          const double lv = l.data[broadcast_index(shape, l.shape, int64_t(i))];
          const double rv = r.data[broadcast_index(shape, r.shape, int64_t(i))];
          if (std::fabs(lv - rv) <= tie->second.second) {
            ++result.near_ties;
            continue;
          }
        }
        diff = std::max(diff, std::fabs(double(y[i]) - double(x[i])));
        scale = std::max(scale, std::fabs(double(x[i])));
        if (std::isnan(x[i]) != std::isnan(y[i])) diff = INFINITY;
      }
      double rel = diff / std::max(scale, 1e-6);
      if (rel > result.max_relative_error || result.worst_output.empty()) {
        result.max_relative_error = std::max(result.max_relative_error, rel);
        result.worst_output = original.outputs()[k].name;
      }
    }
    ++result.runs;
  }
  return result;
}

}  // namespace

Expected<CheckResult> compare_graphs(const Graph& original, const Graph& optimized,
                                     const CheckOptions& options) {
  if (has_opaque(original) || has_opaque(optimized)) {
    std::map<std::string, std::string> sig_a, sig_b;
    Expected<Graph> a = cut_at_opaque(original, &sig_a);
    if (!a) return Error{"the original graph: " + a.error().message};
    Expected<Graph> b = cut_at_opaque(optimized, &sig_b);
    if (!b) return Error{"the optimized graph: " + b.error().message};
    if (sig_a != sig_b)
      return Error{"the optimized graph does not keep the original's opaque nodes unchanged"};
    return compare_graphs(*a, *b, options);
  }
  if (original.outputs().size() != optimized.outputs().size())
    return Error{"the optimized graph has " + std::to_string(optimized.outputs().size()) +
                 " outputs, the original " + std::to_string(original.outputs().size())};
  for (size_t k = 0; k < original.outputs().size(); ++k) {
    const GraphOutput& a = original.outputs()[k];
    const GraphOutput& b = optimized.outputs()[k];
    if (a.name != b.name || !(original.type(a.ref) == optimized.type(b.ref)))
      return Error{"output " + std::to_string(k) + " differs: " + a.name + " " +
                   to_string(original.type(a.ref)) + " vs " + b.name + " " +
                   to_string(optimized.type(b.ref))};
  }
  const std::vector<size_t> compared = comparison_outputs(original, optimized);
  auto evaluate = [&](const Graph& a, const Graph& b) {
    const size_t n = original.outputs().size();
    return options.f64 ? compare_evaluated<double>(a, b, n, compared, options)
                       : compare_evaluated<float>(a, b, n, compared, options);
  };
  if (compared.empty()) return evaluate(original, optimized);
  Expected<Graph> a = with_operands(original, compared);
  if (!a) return Error{"the original graph: " + a.error().message};
  Expected<Graph> b = with_operands(optimized, compared);
  if (!b) return Error{"the optimized graph: " + b.error().message};
  return evaluate(*a, *b);
}

std::string check_notes(const CheckResult& r) {
  std::string s;
  if (r.near_ties > 0)
    s += ", " + std::to_string(r.near_ties) + " comparison result" +
         (r.near_ties == 1 ? "" : "s") + " at near ties of their operands";
  if (r.f64_max_relative_error >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g (bound %.3g)", r.f64_max_relative_error, kF64Tolerance);
    s += "; over the tolerance in f32 on output '" + r.worst_output +
         "', in f64 max relative error " + buf;
  }
  return s;
}

}  // namespace tso::opt
