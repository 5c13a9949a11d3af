// A chain of IR nodes for one ONNX node (internal to frontend/): the
// mappings that write an operator as several of the IR's build it step by
// step without checking each step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// Adds IR nodes named after the ONNX node. The first error is kept and
// every later step is skipped, so a mapping checks once, at the end.
class NodeChain {
 public:
  explicit NodeChain(NodeContext& ctx) : ctx_(ctx) {}

  TensorRef input(int k) { return keep(ctx_.tensor(k)); }
  TensorRef op(Op op, std::vector<TensorRef> args, Attrs attrs = {}) {
    if (error_) return {};
    return keep(ctx_.builder().add1(op, std::move(args), std::move(attrs), ctx_.node().name()));
  }
  // `x` under `op` with one list attribute set (a reshape's shape, a
  // transpose's perm).
  TensorRef op(Op op, TensorRef x, AttrKey key, std::vector<int64_t> values) {
    Attrs a;
    a.set(key, std::move(values));
    return this->op(op, {x}, std::move(a));
  }
  // `x` reshaped, or `x` itself when it already has `shape`.
  TensorRef reshape(TensorRef x, std::vector<int64_t> shape) {
    if (error_) return {};
    const Shape& s = ctx_.builder().type(x).shape;
    if (std::vector<int64_t>(s.begin(), s.end()) == shape) return x;
    return op(Op::Reshape, x, AttrKey::shape, std::move(shape));
  }
  // A scalar weight of input 0's element type.
  TensorRef scalar(const std::string& suffix, double value) {
    HostTensor t = HostTensor::zeros(ctx_.type(0).dtype, Shape{});
    t.f[0] = value;
    return ctx_.new_weight(suffix, t);
  }
  // The last step's result as the node's output, or the first error.
  Expected<Mapped> result(TensorRef last) const { return result(std::vector<TensorRef>{last}); }
  // The node's outputs in order, or the first error.
  Expected<Mapped> result(std::vector<TensorRef> outputs) const {
    if (error_) return *error_;
    return Mapped{std::move(outputs), {}};
  }

 private:
  TensorRef keep(Expected<TensorRef> r) {
    if (r) return *r;
    if (!error_) error_ = r.error();
    return {};
  }

  NodeContext& ctx_;
  std::optional<Error> error_;
};

}  // namespace tso::onnx_frontend
