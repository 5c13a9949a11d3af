#include "core/testing/random_graph.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/testing/rng.h"

namespace tso::testing {
namespace {

using Ints = std::vector<int64_t>;

// Ops whose first argument wants a particular rank; others take any.
int preferred_rank(Op op) {
  switch (op) {
    case Op::Conv2d:
    case Op::AvgPool:
    case Op::MaxPool:
    case Op::GlobalAvgPool:
    case Op::BatchNorm:
    case Op::Enlarge:
    case Op::GridSample:
      return 4;
    case Op::Gemm:
      return 2;
    default:
      return -1;
  }
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& o) : rng_(seed), o_(o) {}

  Graph run() {
    GraphBuilder b(fresh_name());
    for (int i = 0, n = static_cast<int>(rng_.range(1, std::max(1, o_.max_inputs))); i < n; ++i)
      tensors_.push_back(rng_.chance(30) ? b.weight(fresh_name(), random_type())
                                         : b.input(fresh_name(), random_type()));
    std::vector<Op> ops;
    for (const OpInfo& info : all_ops())
      if (info.op != Op::Input && info.op != Op::Weight && (o_.opaque || info.op != Op::Opaque))
        ops.push_back(info.op);
    for (int attempt = 0, added = 0; attempt < o_.max_attempts && added < o_.operators; ++attempt) {
      // Try on a copy so that a rejected candidate leaves no stray weights.
      GraphBuilder trial = b;
      std::vector<TensorRef> fresh;
      Op op = rng_.pick(ops);
      bool ok = op == Op::Opaque ? try_opaque(trial, &fresh) : try_operator(trial, op, &fresh);
      if (!ok) continue;
      b = std::move(trial);
      tensors_.insert(tensors_.end(), fresh.begin(), fresh.end());
      ++added;
    }
    add_outputs(b);
    Expected<Graph> g = b.finish();
    TSO_CHECK(g.ok(), "random graph rejected: " + g.error().message);
    return std::move(g).value();
  }

 private:
  std::string fresh_name() {
    static const std::vector<std::string> kPlain = {
        "x", "w", "input.1", "conv1.weight", "layer/0/fc-2", "_t"};
    static const std::vector<std::string> kOdd = {"onnx::Conv_", "a b",  "tab\t",       "q\"",
                                                  "back\\",      "\x01", "caf\xc3\xa9", "%",
                                                  "1st",         "#c",   "new\nline"};
    const std::string& base = o_.odd_names && rng_.chance(40) ? rng_.pick(kOdd) : rng_.pick(kPlain);
    return base + std::to_string(names_++);
  }

  Shape random_shape(int rank) {
    Shape s;
    for (int i = 0; i < rank; ++i)
      s.push_back(rng_.range(rank == 4 && i >= 2 ? 2 : 1, rank == 4 && i >= 2 ? 6 : 4));
    return s;
  }

  TensorType random_type() {
    static const std::vector<int> kRanks = {4, 4, 4, 2, 2, 3, 1, 0};
    TensorType t;
    t.dtype = rng_.chance(90) ? DType::kF32 : rng_.chance(50) ? DType::kF64 : DType::kF16;
    t.shape = random_shape(rng_.pick(kRanks));
    return t;
  }

  // Mostly recent tensors, so that graphs grow deep rather than wide.
  TensorRef pick_tensor(const GraphBuilder& b, int rank) {
    if (rank >= 0 && rng_.chance(80)) {
      std::vector<TensorRef> fit;
      for (TensorRef r : tensors_)
        if (b.type(r).shape.rank() == rank) fit.push_back(r);
      if (!fit.empty()) return rng_.pick(fit);
    }
    if (rng_.chance(60))
      return tensors_[tensors_.size() - 1 - rng_.below(std::min<size_t>(3, tensors_.size()))];
    return rng_.pick(tensors_);
  }

  double nice_double() {
    static const std::vector<double> kValues = {0.5, 0.1, 1e-3, 1.0 / 3, -2.25, 1e-5, 3.0};
    return rng_.pick(kValues);
  }

  Ints random_axes(const Shape& s, Op op) {
    int r = s.rank();
    Ints axes;
    if (op == Op::Unsqueeze) {  // m distinct positions of the result
      int m = static_cast<int>(rng_.range(1, 2));
      axes = random_perm(r + m);
      axes.resize(m);
      std::sort(axes.begin(), axes.end());
      return axes;
    }
    for (int a = 0; a < r; ++a)
      if (op == Op::Squeeze ? s[a] == 1 : rng_.chance(50))
        axes.push_back(rng_.chance(20) ? a - r : a);
    if (axes.empty()) axes.push_back(0);
    return axes;
  }

  Ints random_perm(int r) {
    Ints p(r);
    for (int i = 0; i < r; ++i) p[i] = i;
    for (int i = r - 1; i > 0; --i) std::swap(p[i], p[rng_.below(i + 1)]);
    return p;
  }

  Ints const_shape(Op op) {
    int64_t c = rng_.range(1, 4), k = rng_.range(0, 1) * 2 + 1;
    switch (op) {
      case Op::ConstEye:
        return {c, c};
      case Op::ConstEyeConv:
        return {c, c, k, k};
      case Op::ConstPool:
        return {c, 1, k, k};
      default: {
        Shape s = random_shape(static_cast<int>(rng_.range(1, 3)));
        return Ints(s.begin(), s.end());
      }
    }
  }

  Ints reshape_target(const Shape& s) {
    int64_t n = s.numel();
    Ints divisors;
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0) divisors.push_back(d);
    int64_t d = divisors.empty() ? 1 : rng_.pick(divisors);
    return rng_.chance(30) ? Ints{n} : Ints{d, n / std::max<int64_t>(d, 1)};
  }

  static int64_t normalized(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

  // Attributes in AttrKey order, so later ones (sizes, starts) can fit earlier
  // ones (axis, axes). A quarter of the optional ones keep their defaults.
  Attrs random_attrs(Op op, const TensorType& first) {
    const Shape& s = first.shape;
    int r = s.rank();
    Attrs a;
    for (int k = 0; k < kNumAttrKeys; ++k) {
      AttrKey key = static_cast<AttrKey>(k);
      if (!op_info(op).takes(key)) continue;
      if (!attr_info(key).default_text.empty() && rng_.chance(25)) continue;
      switch (key) {
        case AttrKey::stride:
          a.set(key, Ints{rng_.range(1, 2), rng_.range(1, 2)});
          break;
        case AttrKey::pad: {
          Padding p;
          p.mode = static_cast<Padding::Mode>(rng_.below(3));
          if (p.mode == Padding::kExplicit)
            for (int64_t& e : p.pads) e = rng_.range(0, 1);
          a.set(key, p);
          break;
        }
        case AttrKey::dilation:
          a.set(key, rng_.chance(80) ? Ints{1, 1} : Ints{rng_.range(1, 2), rng_.range(1, 2)});
          break;
        case AttrKey::groups: {
          int64_t c = r == 4 ? s[1] : 1;
          Ints divisors;
          for (int64_t d = 1; d <= c; ++d)
            if (c % d == 0) divisors.push_back(d);
          a.set(key, divisors.empty() ? int64_t{1} : rng_.pick(divisors));
          break;
        }
        case AttrKey::act:
          a.set(key, static_cast<Act>(rng_.below(kNumActs)));
          break;
        case AttrKey::kernel:
          if (op == Op::Enlarge && r == 4)
            a.set(key, Ints{s[2] + 2 * rng_.range(0, 1), s[3] + 2 * rng_.range(0, 1)});
          else
            a.set(key, Ints{rng_.range(1, 3), rng_.range(1, 3)});
          break;
        case AttrKey::ceil_mode:
        case AttrKey::count_include_pad:
        case AttrKey::keepdims:
        case AttrKey::trans_a:
        case AttrKey::trans_b:
        case AttrKey::exclusive:
        case AttrKey::reverse:
        case AttrKey::largest:
        case AttrKey::sorted:
          a.set(key, int64_t{rng_.below(2)});
          break;
        case AttrKey::k: {  // within the extent of the axis, set before it
          const int64_t axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
          a.set(key, axis >= 0 && axis < r ? rng_.range(1, s[axis]) : int64_t{1});
          break;
        }
        case AttrKey::axis:
          a.set(key, op == Op::Flatten ? rng_.range(0, r) : r == 0 ? 0 : rng_.range(-r, r - 1));
          break;
        case AttrKey::axes:
          a.set(key, random_axes(s, op));
          break;
        case AttrKey::sizes: {
          int64_t axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
          int64_t left = axis < r ? s[axis] : 1;
          Ints sizes;
          while (left > 0) {
            int64_t piece = sizes.size() == 2 ? left : rng_.range(1, left);
            sizes.push_back(piece);
            left -= piece;
          }
          a.set(key, sizes);
          break;
        }
        case AttrKey::perm:
          a.set(key, random_perm(r));
          break;
        case AttrKey::shape:
          a.set(key, op == Op::Reshape ? reshape_target(s) : const_shape(op));
          break;
        case AttrKey::starts:
          if (op == Op::UpdateSlice) {  // a box corner; fitting_args sizes the patch
            Ints v;
            for (int d = 0; d < r; ++d) v.push_back(rng_.range(0, std::max<int64_t>(s[d] - 1, 0)));
            a.set(key, v);
            break;
          }
          [[fallthrough]];
        case AttrKey::ends:
        case AttrKey::steps: {
          Ints v;
          const Ints* starts = a.has(AttrKey::starts) ? &a.ints(AttrKey::starts) : nullptr;
          for (size_t i = 0; a.has(AttrKey::axes) && i < a.ints(AttrKey::axes).size(); ++i) {
            int64_t axis = normalized(a.ints(AttrKey::axes)[i], r);
            int64_t extent = axis >= 0 && axis < r ? s[axis] : 1;
            if (key == AttrKey::starts) v.push_back(rng_.range(0, extent - 1));
            if (key == AttrKey::ends)
              v.push_back(rng_.range(starts ? (*starts)[i] + 1 : 1, extent));
            if (key == AttrKey::steps) v.push_back(rng_.range(1, 2));
          }
          a.set(key, v);
          break;
        }
        case AttrKey::pads: {
          Ints v(2 * r);
          for (int64_t& e : v) e = rng_.range(0, 2);
          a.set(key, v);
          break;
        }
        case AttrKey::min:
          a.set(key, rng_.chance(30) ? -std::numeric_limits<double>::infinity() : -nice_double());
          break;
        case AttrKey::max:
          a.set(key, rng_.chance(30) ? std::numeric_limits<double>::infinity() : 6.0);
          break;
        case AttrKey::value:
        case AttrKey::epsilon:
        case AttrKey::alpha:
        case AttrKey::beta:
          a.set(key, nice_double());
          break;
        case AttrKey::to: {  // float types and bool: a truncation to an integer would
                             // tell float from double at values near integers
          static const std::vector<std::string> kTypes = {"f32", "f64", "bool"};
          a.set(key, rng_.pick(kTypes));
          break;
        }
        default:  // strings: opaque nodes only, set in try_opaque
          break;
      }
    }
    // A fused activation's bounds belong to act=clip, which needs one.
    if (op_info(op).takes(AttrKey::act)) {
      const double inf = std::numeric_limits<double>::infinity();
      if (!a.has(AttrKey::act) || a.act(AttrKey::act) != Act::kClip)
        a.set(AttrKey::min, -inf).set(AttrKey::max, inf);
      else if ((!a.has(AttrKey::min) || a.f(AttrKey::min) == -inf) &&
               (!a.has(AttrKey::max) || a.f(AttrKey::max) == inf))
        a.set(AttrKey::max, 6.0);
    }
    return a;
  }

  // Types for arguments 1.. that fit the first argument and the attributes.
  std::vector<TensorType> fitting_args(Op op, int n, const TensorType& t, const Attrs& a) {
    const Shape& s = t.shape;
    int r = s.rank();
    std::vector<TensorType> types(n, t);
    auto shaped = [&](Shape shape) { return TensorType{t.dtype, shape}; };
    int64_t out = rng_.range(1, 4);
    // quantization's scale and zero point: one, or one per index of the axis
    const int64_t q_axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
    const Shape q_shape = rng_.chance(50) || q_axis < 0 || q_axis >= r ? Shape{} : Shape{s[q_axis]};
    const DType q_type = rng_.chance(50) ? DType::kU8 : DType::kI8;
    for (int i = 1; i < n; ++i) {
      switch (op) {
        case Op::Conv2d: {
          int64_t g = a.has(AttrKey::groups) ? a.i(AttrKey::groups) : 1, k = rng_.range(1, 3);
          if (r == 4) types[i] = shaped({g * rng_.range(1, 2), s[1] / g, k, k});
          break;
        }
        case Op::Matmul:
          if (r >= 2) {
            Shape w = rng_.chance(30) ? Shape{s[r - 2], s[r - 1]} : s;
            w[w.rank() - 2] = s[r - 1];
            w[w.rank() - 1] = out;
            types[i] = shaped(w);
          }
          break;
        case Op::Gemm:
          if (r == 2) {
            bool ta = a.has(AttrKey::trans_a) && a.i(AttrKey::trans_a);
            bool tb = a.has(AttrKey::trans_b) && a.i(AttrKey::trans_b);
            int64_t m = s[ta ? 1 : 0], k = s[ta ? 0 : 1];
            types[i] = i == 1 ? shaped(tb ? Shape{out, k} : Shape{k, out})
                              : shaped(rng_.chance(50) ? Shape{out} : Shape{m, out});
          }
          break;
        case Op::BatchNorm:
          if (r >= 2) types[i] = shaped({s[1]});
          break;
        case Op::LayerNorm: {
          int64_t axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
          if (axis >= 0 && axis <= r) types[i] = shaped(Shape(s.dims().subspan(axis)));
          break;
        }
        case Op::ScalarMul:
          types[i] = shaped({});
          break;
        case Op::Add:
        case Op::Mul:
        case Op::Sub:
        case Op::Div:
        case Op::Pow: {
          Shape b = s;
          if (rng_.chance(25) && r > 0)
            b = Shape(s.dims().subspan(rng_.range(1, r)));
          else if (rng_.chance(33))
            for (int d = 0; d < b.rank(); ++d)
              if (rng_.chance(50)) b[d] = 1;
          types[i] = shaped(b);
          break;
        }
        case Op::Where: {  // t is the condition (bool, else rejected); values are f32
          Shape b = s;
          if (rng_.chance(30) && r > 0) b = Shape(s.dims().subspan(rng_.range(1, r)));
          types[i] = TensorType{DType::kF32, b};
          break;
        }
        case Op::UpdateSlice: {  // a non-empty patch (other operators' attributes
                                 // assume no zero extents) that fits the box
          const Ints& at = a.ints(AttrKey::starts);
          Shape b = s;
          for (int d = 0; d < r && d < static_cast<int>(at.size()); ++d)
            b[d] = rng_.range(std::min<int64_t>(1, s[d] - at[d]), s[d] - at[d]);
          types[i] = shaped(b);
          break;
        }
        case Op::Gather:  // indices: i64 of rank 0 to 2 (their values are the feeds')
          types[i] = TensorType{DType::kI64, random_shape(static_cast<int>(rng_.range(0, 2)))};
          break;
        case Op::GridSample:  // the grid: [N, Ho, Wo, 2] of t's batch
          types[i] = shaped(Shape{r > 0 ? s[0] : 1, rng_.range(1, 3), rng_.range(1, 3), 2});
          break;
        case Op::GatherElements: {  // indices: i64 of t's rank, no longer than t but on the axis
          const int64_t axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
          Shape b = s;
          for (int d = 0; d < r; ++d)
            b[d] = d == axis ? rng_.range(1, 3) : rng_.range(1, std::max<int64_t>(1, s[d]));
          types[i] = TensorType{DType::kI64, b};
          break;
        }
        case Op::QuantizeLinear:
        case Op::DequantizeLinear: {
          const DType zero = op == Op::QuantizeLinear ? q_type : t.dtype;
          types[i] = TensorType{i == 1 ? DType::kF32 : zero, q_shape};
          break;
        }
        case Op::Concat: {
          int64_t axis = a.has(AttrKey::axis) ? normalized(a.i(AttrKey::axis), r) : 0;
          Shape b = s;
          if (axis >= 0 && axis < r) b[static_cast<int>(axis)] = rng_.range(1, 3);
          types[i] = shaped(b);
          break;
        }
        default:
          break;
      }
    }
    return types;
  }

  // Reuses a tensor of the wanted type, or adds a weight of it, or (rarely)
  // takes any tensor, which shape inference then usually rejects.
  TensorRef arg_of_type(GraphBuilder& b, const TensorType& want, std::vector<TensorRef>* fresh) {
    std::vector<TensorRef> fit;
    for (TensorRef r : tensors_)
      if (b.type(r) == want) fit.push_back(r);
    if (!fit.empty() && rng_.chance(50)) return rng_.pick(fit);
    if (rng_.chance(10)) return rng_.pick(tensors_);
    fresh->push_back(b.weight(fresh_name(), want));
    return fresh->back();
  }

  // where's condition, and the first operand of not, and and or: mostly a
  // bool tensor already there (an isnan or comparison result), else a new
  // bool weight.
  TensorRef condition(GraphBuilder& b, std::vector<TensorRef>* fresh) {
    std::vector<TensorRef> masks;
    for (TensorRef r : tensors_)
      if (b.type(r).dtype == DType::kBool) masks.push_back(r);
    if (!masks.empty() && rng_.chance(80)) return rng_.pick(masks);
    fresh->push_back(b.weight(fresh_name(), TensorType{DType::kBool, random_type().shape}));
    return fresh->back();
  }

  // dequantize_linear's input: mostly a quantized tensor already there,
  // else a new u8 or i8 weight.
  TensorRef quantized(GraphBuilder& b, std::vector<TensorRef>* fresh) {
    std::vector<TensorRef> bytes;
    for (TensorRef r : tensors_)
      if (b.type(r).dtype == DType::kU8 || b.type(r).dtype == DType::kI8) bytes.push_back(r);
    if (!bytes.empty() && rng_.chance(80)) return rng_.pick(bytes);
    const DType t = rng_.chance(50) ? DType::kU8 : DType::kI8;
    fresh->push_back(b.weight(fresh_name(), TensorType{t, random_type().shape}));
    return fresh->back();
  }

  bool try_operator(GraphBuilder& b, Op op, std::vector<TensorRef>* fresh) {
    const OpInfo& info = op_info(op);
    int max = info.max_inputs == kVariadic ? info.min_inputs + 2 : info.max_inputs;
    int n = static_cast<int>(rng_.range(info.min_inputs, max));
    std::vector<TensorRef> args;
    TensorType first;
    if (n > 0) {
      const bool on_masks = op == Op::Where || op == Op::Not || op == Op::And || op == Op::Or;
      args.push_back(on_masks                         ? condition(b, fresh)
                     : op == Op::DequantizeLinear ? quantized(b, fresh)
                                                  : pick_tensor(b, preferred_rank(op)));
      first = b.type(args[0]);
    }
    Attrs attrs = random_attrs(op, first);
    std::vector<TensorType> types = fitting_args(op, n, first, attrs);
    for (int i = 1; i < n; ++i) args.push_back(arg_of_type(b, types[i], fresh));
    Expected<std::vector<TensorRef>> outs = b.add(op, std::move(args), std::move(attrs));
    if (!outs.ok()) return false;
    fresh->insert(fresh->end(), outs->begin(), outs->end());
    return true;
  }

  bool try_opaque(GraphBuilder& b, std::vector<TensorRef>* fresh) {
    static const std::vector<std::string> kTypes = {"Foo", "NonMaxSuppression", "My Op", "\x7f"};
    std::vector<TensorRef> args;
    for (int i = 0, n = rng_.below(3); i < n; ++i) args.push_back(pick_tensor(b, -1));
    Attrs attrs;
    attrs.set(AttrKey::op_type, rng_.pick(kTypes));
    if (rng_.chance(50)) attrs.set(AttrKey::domain, std::string("com.example"));
    if (rng_.chance(50)) {
      std::string payload;
      for (int i = 0, n = rng_.below(7); i < n; ++i) payload += static_cast<char>(rng_.below(256));
      attrs.set(AttrKey::payload, payload);
    }
    std::vector<TensorType> outs(rng_.range(1, 2));
    for (TensorType& t : outs) {
      t.dtype = static_cast<DType>(rng_.below(6));
      t.shape = random_shape(static_cast<int>(rng_.range(0, 3)));
    }
    Expected<std::vector<TensorRef>> refs = b.add_opaque(std::move(args), std::move(attrs), outs);
    if (!refs.ok()) return false;
    fresh->insert(fresh->end(), refs->begin(), refs->end());
    return true;
  }

  // Every unused operator feeds an output (else finish() would drop it), and
  // now and then an extra output names an arbitrary tensor, input or not.
  void add_outputs(GraphBuilder& b) {
    std::vector<bool> used(b.size());
    for (int i = 0; i < b.size(); ++i)
      for (TensorRef r : b.node(i).args) used[r.node] = true;
    int outputs = 0;
    for (int i = 0; i < b.size(); ++i) {
      Op op = b.node(i).op;
      if (used[i] || op == Op::Input || op == Op::Weight) continue;
      b.output(fresh_name(), {i, rng_.below(b.node(i).outs.size())});
      ++outputs;
    }
    if (outputs == 0 || rng_.chance(30)) b.output(fresh_name(), rng_.pick(tensors_));
  }

  Rng rng_;
  RandomGraphOptions o_;
  std::vector<TensorRef> tensors_;  // every tensor of the committed builder
  int names_ = 0;
};

}  // namespace

Graph random_graph(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).run();
}

}  // namespace tso::testing
