#include "core/testing/pattern_graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/rng.h"

namespace tso::testing {
namespace {

using Ints = std::vector<int64_t>;

// Weight values: kernels scaled by their fan-in so that chains keep their
// magnitude; batchnorm scales and variances positive.
enum class Init : uint8_t { kKernel, kBias, kScale, kVariance };

// A graph under construction with its pools of activations: rank-4 NCHW
// images and rank-2 or rank-3 sequences (the operands of projections).
struct State {
  GraphBuilder b;
  std::vector<TensorRef> images, seqs;
  int operators = 0;
  int weights = 0;
};

class Generator {
 public:
  Generator(uint64_t seed, const PatternGraphOptions& o) : rng_(seed), o_(o) {}

  Graph run() {
    State s;
    s.b = GraphBuilder("pattern");
    Shape image{rng_.pick<int64_t>({1, 1, 2}), rng_.pick<int64_t>({2, 4, 6, 8}), rng_.range(4, 8),
                rng_.range(4, 8)};
    s.images.push_back(s.b.input("x", {DType::kF32, image}));
    if (rng_.chance(40)) s.images.push_back(s.b.input("x2", {DType::kF32, image}));
    if (rng_.chance(70)) {
      Shape seq{rng_.range(2, 6), rng_.pick<int64_t>({2, 4, 8})};
      if (rng_.chance(50)) seq = Shape{rng_.range(1, 2), seq[0], seq[1]};
      s.seqs.push_back(s.b.input("s", {DType::kF32, seq}));
    }
    int target = static_cast<int>(rng_.range(std::min(4, o_.max_operators), o_.max_operators));
    // A motif that would pass the limit is dropped, and the graph ends there.
    while (s.operators < target) {
      State trial = s;
      motif(trial);
      if (trial.operators > o_.max_operators) break;
      s = std::move(trial);
    }
    return finish(s);
  }

 private:
  // ---- building blocks ----------------------------------------------------

  TensorRef weight(State& s, const Shape& shape, Init init) {
    auto data = std::make_shared<WeightData>();
    data->type = {DType::kF32, shape};
    int64_t fan_in = shape.rank() >= 2 ? shape.numel() / shape[0] : 1;
    if (init == Init::kKernel && shape.rank() == 2) fan_in = shape[0];  // matmul's [K, N]
    double bound = init == Init::kKernel ? 1.5 / std::sqrt(static_cast<double>(fan_in)) : 0.5;
    std::vector<float> v(static_cast<size_t>(shape.numel()));
    for (float& x : v)
      x = static_cast<float>(init == Init::kScale || init == Init::kVariance
                                 ? rng_.uniform(0.5, 1.5)
                                 : rng_.uniform(-bound, bound));
    data->bytes.resize(v.size() * sizeof(float));
    std::memcpy(data->bytes.data(), v.data(), data->bytes.size());
    TensorType type = data->type;
    return s.b.weight("w" + std::to_string(s.weights++), type, std::move(data));
  }

  std::vector<TensorRef> add(State& s, Op op, std::vector<TensorRef> args, Attrs attrs = {}) {
    Expected<std::vector<TensorRef>> outs = s.b.add(op, std::move(args), std::move(attrs));
    TSO_CHECK(outs.ok(), "pattern graph: " + (outs.ok() ? std::string() : outs.error().message));
    ++s.operators;
    return *outs;
  }
  TensorRef add1(State& s, Op op, std::vector<TensorRef> args, Attrs attrs = {}) {
    return add(s, op, std::move(args), std::move(attrs))[0];
  }
  const Shape& shape(const State& s, TensorRef t) const { return s.b.type(t).shape; }

  // Mostly one of the latest tensors, so that patterns stack on each other.
  TensorRef pick(const std::vector<TensorRef>& pool) {
    if (rng_.chance(60))
      return pool[pool.size() - 1 - rng_.below(std::min<size_t>(2, pool.size()))];
    return rng_.pick(pool);
  }
  // Another tensor of t's shape from `pool`, else t itself or a weight.
  TensorRef same_shape(State& s, const std::vector<TensorRef>& pool, TensorRef t) {
    std::vector<TensorRef> fit;
    for (TensorRef r : pool)
      if (r != t && shape(s, r) == shape(s, t)) fit.push_back(r);
    if (!fit.empty() && rng_.chance(70)) return rng_.pick(fit);
    return rng_.chance(50) ? t : weight(s, shape(s, t), Init::kBias);
  }

  struct Kernel {
    int64_t h = 1, w = 1;
  };
  Kernel random_kernel() {
    static const std::vector<Kernel> kKernels = {{1, 1}, {3, 3}, {3, 3}, {1, 1}, {1, 3}, {3, 1}};
    return rng_.pick(kKernels);
  }

  // conv2d of x to `out` channels: "same" padding (as the rules write it, or
  // as the explicit pads ONNX gives), now and then a stride, groups, a bias
  // or a fused relu.
  TensorRef conv(State& s, TensorRef x, int64_t out, Kernel k, bool bias, bool relu,
                 bool keep_size = false) {
    int64_t c = shape(s, x)[1];
    int64_t groups = c % 2 == 0 && out % 2 == 0 && rng_.chance(10) ? 2 : 1;
    Attrs a;
    Padding p;
    p.mode = Padding::kSame;
    if (rng_.chance(20)) p = {Padding::kExplicit, {k.h / 2, k.w / 2, k.h / 2, k.w / 2}};
    a.set(AttrKey::pad, p);
    if (!keep_size && rng_.chance(8)) a.set(AttrKey::stride, Ints{2, 2});
    if (groups > 1) a.set(AttrKey::groups, groups);
    if (relu) a.set(AttrKey::act, Act::kRelu);
    std::vector<TensorRef> args = {x, weight(s, {out, c / groups, k.h, k.w}, Init::kKernel)};
    if (bias) args.push_back(weight(s, {out}, Init::kBias));
    return add1(s, Op::Conv2d, std::move(args), std::move(a));
  }
  TensorRef random_conv(State& s, TensorRef x, int64_t out, Kernel k) {
    return conv(s, x, out, k, rng_.chance(50), rng_.chance(20));
  }
  int64_t channels() { return rng_.pick<int64_t>({2, 4, 4, 6, 8}); }

  TensorRef maybe_relu(State& s, TensorRef t, int percent) {
    return rng_.chance(percent) ? add1(s, Op::Relu, {t}) : t;
  }
  TensorRef batchnorm(State& s, TensorRef t) {
    int64_t c = shape(s, t)[1];
    Attrs a;
    a.set(AttrKey::epsilon, rng_.chance(50) ? 1e-5 : 1e-3);
    return add1(s, Op::BatchNorm,
                {t, weight(s, {c}, Init::kScale), weight(s, {c}, Init::kBias),
                 weight(s, {c}, Init::kBias), weight(s, {c}, Init::kVariance)},
                std::move(a));
  }

  // ---- motifs: each adds a few operators and puts its results in a pool ---

  void motif(State& s) {
    bool seq = !s.seqs.empty() && rng_.chance(30);
    if (seq) {
      switch (rng_.below(5)) {
        case 0:
        case 1:
          projections(s);
          return;
        case 2:
          matmul_chain(s);
          return;
        case 3:
          transposes(s, s.seqs);
          return;
        default:
          pointwise(s, s.seqs);
          return;
      }
    }
    switch (rng_.below(13)) {
      case 0:
      case 1:
        parallel_convs(s);
        return;
      case 2:
        s.images.push_back(
            maybe_relu(s, random_conv(s, pick(s.images), channels(), random_kernel()), 50));
        return;
      case 3:
        conv_chain(s);
        return;
      case 4:
        conv_batchnorm(s);
        return;
      case 5:
        concat_batchnorm(s);
        return;
      case 6:
        conv_bias_add(s);
        return;
      case 7:
        residual(s);
        return;
      case 8:
        pointwise(s, s.images);
        return;
      case 9:
        transposes(s, s.images);
        return;
      case 10:
        concat_split(s);
        return;
      case 11:
        split_concat(s);
        return;
      default:
        pool(s);
        return;
    }
  }

  // Two or three convolutions read one input (inception branches, fire
  // modules): mostly one kernel size, each maybe with a relu, maybe
  // concatenated on channels.
  void parallel_convs(State& s) {
    TensorRef x = pick(s.images);
    Kernel k = random_kernel();
    bool mixed = rng_.chance(30), bias = rng_.chance(50), relu = rng_.chance(50);
    std::vector<TensorRef> ys;
    for (int i = 0, n = static_cast<int>(rng_.range(2, 3)); i < n; ++i) {
      TensorRef y = conv(s, x, channels(), mixed ? random_kernel() : k, bias, false);
      ys.push_back(relu ? add1(s, Op::Relu, {y}) : y);
    }
    bool same = std::all_of(ys.begin(), ys.end(), [&](TensorRef y) {
      Shape a = shape(s, y), b = shape(s, ys[0]);
      a[1] = b[1];
      return a == b;
    });
    if (same && rng_.chance(50)) {
      Attrs a;
      a.set(AttrKey::axis, int64_t{1});
      s.images.push_back(add1(s, Op::Concat, ys, std::move(a)));
    } else {
      s.images.insert(s.images.end(), ys.begin(), ys.end());
    }
  }

  void conv_chain(State& s) {
    TensorRef y = conv(s, pick(s.images), channels(), random_kernel(), rng_.chance(50), false);
    y = add1(s, Op::Relu, {y});
    s.images.push_back(random_conv(s, y, channels(), random_kernel()));
  }

  void conv_batchnorm(State& s) {
    TensorRef y = conv(s, pick(s.images), channels(), random_kernel(), rng_.chance(50), false);
    s.images.push_back(maybe_relu(s, batchnorm(s, y), 50));
  }

  // NASNet's factorized reduction: two convs concatenated on channels, then
  // a batchnorm.
  void concat_batchnorm(State& s) {
    TensorRef x1 = pick(s.images), x2 = same_shape(s, s.images, x1);
    if (s.b.node(x2.node).op == Op::Weight) x2 = x1;
    Kernel k = random_kernel();
    Attrs a;
    a.set(AttrKey::axis, int64_t{1});
    TensorRef c = add1(s, Op::Concat,
                       {conv(s, x1, channels(), k, false, false, true),
                        conv(s, x2, channels(), k, false, false, true)},
                       std::move(a));
    s.images.push_back(batchnorm(s, c));
  }

  // A bias as ONNX exporters write it: a conv, then an add of [1,C,1,1].
  void conv_bias_add(State& s) {
    int64_t out = channels();
    TensorRef y = conv(s, pick(s.images), out, random_kernel(), false, false);
    y = add1(s, Op::Add, {y, weight(s, {1, out, 1, 1}, Init::kBias)});
    s.images.push_back(maybe_relu(s, y, 50));
  }

  // A residual block: conv keeping the shape, plus its input.
  void residual(State& s) {
    TensorRef x = pick(s.images);
    TensorRef y = conv(s, x, shape(s, x)[1], random_kernel(), rng_.chance(50), rng_.chance(30));
    if (shape(s, y) != shape(s, x)) {  // strided: no residual
      s.images.push_back(y);
      return;
    }
    s.images.push_back(maybe_relu(s, add1(s, Op::Add, {y, x}), 50));
  }

  // add or mul of two tensors of one shape, a scalar multiple, or an
  // activation.
  void pointwise(State& s, std::vector<TensorRef>& pool) {
    TensorRef a = pick(pool);
    TensorRef y;
    switch (rng_.below(5)) {
      case 0:
      case 1:
        y = add1(s, Op::Add, {a, same_shape(s, pool, a)});
        break;
      case 2:
        y = add1(s, Op::Mul, {a, same_shape(s, pool, a)});
        break;
      case 3:
        y = add1(s, Op::ScalarMul, {a, weight(s, {}, Init::kScale)});
        break;
      default:
        y = add1(s, rng_.pick<Op>({Op::Relu, Op::Relu, Op::Sigmoid, Op::Tanh}), {a});
        break;
    }
    pool.push_back(y);
  }

  // A transpose, maybe an activation, then the inverse transpose (or not).
  void transposes(State& s, std::vector<TensorRef>& pool) {
    TensorRef x = pick(pool);
    int r = shape(s, x).rank();
    Ints perm(r);
    for (int i = 0; i < r; ++i) perm[i] = i;
    while (std::is_sorted(perm.begin(), perm.end()))
      for (int i = r - 1; i > 0; --i) std::swap(perm[i], perm[rng_.below(i + 1)]);
    Ints inverse(r);
    for (int i = 0; i < r; ++i) inverse[perm[i]] = i;
    Attrs a, back;
    a.set(AttrKey::perm, perm);
    back.set(AttrKey::perm, inverse);
    TensorRef t = maybe_relu(s, add1(s, Op::Transpose, {x}, std::move(a)), 40);
    if (rng_.chance(80)) t = add1(s, Op::Transpose, {t}, std::move(back));
    pool.push_back(t);
  }

  // A concat undone by a split on the same axis, and the pieces used.
  void concat_split(State& s) {
    TensorRef a = pick(s.images), b = same_shape(s, s.images, a);
    int64_t axis = rng_.pick<int64_t>({1, 1, 0, 2});
    Attrs c, sp;
    c.set(AttrKey::axis, axis);
    TensorRef cat = add1(s, Op::Concat, {a, b}, std::move(c));
    sp.set(AttrKey::axis, axis);
    sp.set(AttrKey::sizes, Ints{shape(s, a)[axis], shape(s, b)[axis]});
    std::vector<TensorRef> parts = add(s, Op::Split, {maybe_relu(s, cat, 30)}, std::move(sp));
    for (TensorRef p : parts) s.images.push_back(p);
  }

  // A split on channels, each piece through a conv or not, concatenated
  // again.
  void split_concat(State& s) {
    TensorRef x = pick(s.images);
    int64_t c = shape(s, x)[1];
    if (c < 2) return pool(s);
    int64_t first = rng_.range(1, c - 1);
    Attrs sp, cat;
    sp.set(AttrKey::axis, int64_t{1});
    sp.set(AttrKey::sizes, Ints{first, c - first});
    std::vector<TensorRef> parts = add(s, Op::Split, {x}, std::move(sp));
    if (rng_.chance(40)) parts[1] = conv(s, parts[1], c - first, {1, 1}, false, false, true);
    cat.set(AttrKey::axis, int64_t{1});
    s.images.push_back(add1(s, Op::Concat, parts, std::move(cat)));
  }

  void pool(State& s) {
    Attrs a;
    Padding p;
    p.mode = Padding::kSame;
    a.set(AttrKey::kernel, Ints{3, 3});
    a.set(AttrKey::pad, p);
    s.images.push_back(
        add1(s, rng_.chance(50) ? Op::AvgPool : Op::MaxPool, {pick(s.images)}, std::move(a)));
  }

  // Two or three products of one input by weights of one shape (attention's
  // Q, K, V), each maybe with a bias add and a relu, maybe concatenated.
  void projections(State& s) {
    TensorRef x = pick(s.seqs);
    const Shape xs = shape(s, x);
    int64_t k = xs[xs.rank() - 1], n = rng_.pick<int64_t>({2, 4, 8});
    bool bias = rng_.chance(60), relu = rng_.chance(30), gemm = xs.rank() == 2 && rng_.chance(30);
    std::vector<TensorRef> ys;
    for (int i = 0, count = static_cast<int>(rng_.range(2, 3)); i < count; ++i) {
      TensorRef y;
      if (gemm) {
        Attrs a;
        a.set(AttrKey::trans_b, int64_t{1});
        y = add1(s, Op::Gemm, {x, weight(s, {n, k}, Init::kKernel), weight(s, {n}, Init::kBias)},
                 std::move(a));
      } else {
        y = add1(s, Op::Matmul, {x, weight(s, {k, n}, Init::kKernel)});
        if (bias) y = add1(s, Op::Add, {y, weight(s, {n}, Init::kBias)});
      }
      ys.push_back(relu ? add1(s, Op::Relu, {y}) : y);
    }
    if (rng_.chance(40)) {
      Attrs a;
      a.set(AttrKey::axis, int64_t{xs.rank() - 1});
      s.seqs.push_back(add1(s, Op::Concat, ys, std::move(a)));
    } else {
      s.seqs.insert(s.seqs.end(), ys.begin(), ys.end());
    }
  }

  void matmul_chain(State& s) {
    TensorRef x = pick(s.seqs);
    int64_t k = shape(s, x)[shape(s, x).rank() - 1];
    int64_t n = rng_.pick<int64_t>({2, 4, 8}), m = rng_.pick<int64_t>({2, 4, 8});
    TensorRef y = add1(s, Op::Matmul, {x, weight(s, {k, n}, Init::kKernel)});
    y = maybe_relu(s, y, 30);
    s.seqs.push_back(add1(s, Op::Matmul, {y, weight(s, {n, m}, Init::kKernel)}));
  }

  // Every result nothing reads becomes an output (a split's unused piece
  // too, so that no operator is dropped).
  Graph finish(State& s) {
    std::vector<std::vector<bool>> used(s.b.size());
    for (int i = 0; i < s.b.size(); ++i) used[i].resize(s.b.node(i).outs.size());
    for (int i = 0; i < s.b.size(); ++i)
      for (TensorRef r : s.b.node(i).args) used[r.node][r.output] = true;
    int n = 0;
    for (int i = 0; i < s.b.size(); ++i) {
      Op op = s.b.node(i).op;
      for (size_t k = 0; k < used[i].size(); ++k)
        if (!used[i][k] && op != Op::Input && op != Op::Weight)
          s.b.output("y" + std::to_string(n++), {i, static_cast<int>(k)});
    }
    Expected<Graph> g = s.b.finish();
    TSO_CHECK(g.ok(), "pattern graph rejected: " + (g.ok() ? std::string() : g.error().message));
    return std::move(*g);
  }

  Rng rng_;
  PatternGraphOptions o_;
};

}  // namespace

Graph pattern_graph(uint64_t seed, const PatternGraphOptions& options) {
  TSO_CHECK(options.max_operators >= 1, "pattern_graph: max_operators must be at least 1");
  return Generator(seed, options).run();
}

}  // namespace tso::testing
