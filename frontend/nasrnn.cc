#include "frontend/nasrnn.h"

#include <string>
#include <vector>

#include "frontend/random_weights.h"

namespace tso {

namespace {

class NasRnnBuilder {
 public:
  explicit NasRnnBuilder(const NasRnnOptions& o) : o_(o), b_("nasrnn") {}

  Expected<Graph> build() {
    const TensorType vec{DType::kF32, Shape{1, o_.hidden}};
    std::vector<TensorRef> xs;
    for (int t = 0; t < o_.steps; ++t) xs.push_back(b_.input("x" + std::to_string(t), vec));
    TensorRef h = weight("h0", vec.shape, "Add");
    for (int t = 0; t < o_.steps; ++t) {
      step_ = t;
      Expected<TensorRef> next = cell(h, xs[t]);
      if (!next) return next.error();
      h = *next;
    }
    b_.output("h", h);
    return b_.finish();
  }

 private:
  TensorRef weight(const std::string& name, Shape shape, const char* use) {
    TensorType type{DType::kF32, shape};
    return b_.weight(name, type,
                     onnx_frontend::random_weight(o_.seed, name, type, {use, 1, false}));
  }

  Expected<TensorRef> op(Op o, std::vector<TensorRef> args) { return b_.add1(o, std::move(args)); }

  // x W1 + h W2 with fresh weights.
  Expected<TensorRef> combine(TensorRef x, TensorRef h, int k) {
    const std::string p = "step" + std::to_string(step_) + ".t" + std::to_string(k);
    TensorRef w1 = weight(p + ".wx", Shape{o_.hidden, o_.hidden}, "MatMul");
    TensorRef w2 = weight(p + ".wh", Shape{o_.hidden, o_.hidden}, "MatMul");
    Expected<TensorRef> a = op(Op::Matmul, {x, w1}), c = op(Op::Matmul, {h, w2});
    if (!a) return a;
    if (!c) return c;
    return op(Op::Add, {*a, *c});
  }

  // f(a) <op> g(b), the cell's building block.
  Expected<TensorRef> mix(Op f, TensorRef a, Op combine_op, Op g, TensorRef b) {
    Expected<TensorRef> fa = op(f, {a}), gb = op(g, {b});
    if (!fa) return fa;
    if (!gb) return gb;
    return op(combine_op, {*fa, *gb});
  }

  Expected<TensorRef> cell(TensorRef h, TensorRef x) {
    std::vector<TensorRef> t;
    for (int k = 0; k < 8; ++k) {
      Expected<TensorRef> r = combine(x, h, k);
      if (!r) return r;
      t.push_back(*r);
    }
    std::vector<TensorRef> m;
    auto push = [&](Expected<TensorRef> r) {
      if (r) m.push_back(*r);
      return r.ok() ? Status::Ok() : Status(r.error());
    };
    TSO_RETURN_IF_ERROR(push(mix(Op::Relu, t[0], Op::Add, Op::Sigmoid, t[3])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Sigmoid, t[1], Op::Add, Op::Tanh, t[2])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Sigmoid, t[4], Op::Mul, Op::Tanh, t[5])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Sigmoid, t[6], Op::Mul, Op::Relu, t[7])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Sigmoid, m[1], Op::Add, Op::Tanh, m[2])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Tanh, m[0], Op::Mul, Op::Tanh, m[3])));
    TSO_RETURN_IF_ERROR(push(mix(Op::Tanh, m[4], Op::Mul, Op::Tanh, m[5])));
    return op(Op::Tanh, {m[6]});
  }

  NasRnnOptions o_;
  GraphBuilder b_;
  int step_ = 0;
};

}  // namespace

Expected<Graph> build_nasrnn(const NasRnnOptions& options) {
  if (options.steps < 1 || options.hidden < 1)
    return Error{"nasrnn: steps and hidden size must be positive"};
  return NasRnnBuilder(options).build();
}

}  // namespace tso
