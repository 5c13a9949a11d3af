// Runners for tso's own kernels (elementwise, normalizations, reductions,
// pooling, data movement) and the dispatch from a step's kernel family to
// its runner.
#include <algorithm>
#include <functional>
#include <vector>

#include "runtime/common/geometry.h"
#include "runtime/cuda/cublaslt_loader.h"
#include "runtime/cuda/kernels.cuh"
#include "runtime/cuda/runner.cuh"

namespace tso::cuda {
namespace {

// A runner that is a list of launches prepared on the host.
class LaunchList : public StepRunner {
 public:
  using Launch = std::function<Status(cudaStream_t)>;
  void add(Launch l) { launches_.push_back(std::move(l)); }
  Status enqueue(const DeviceContext& dc) override {
    for (const Launch& l : launches_) TSO_RETURN_IF_ERROR(l(dc.stream));
    return Status::Ok();
  }

 private:
  std::vector<Launch> launches_;
};

UnaryFn unary_fn(Op op) {
  switch (op) {
    case Op::Sigmoid:
      return UnaryFn::kSigmoid;
    case Op::Tanh:
      return UnaryFn::kTanh;
    case Op::Erf:
      return UnaryFn::kErf;
    case Op::Gelu:
      return UnaryFn::kGelu;
    case Op::Sqrt:
      return UnaryFn::kSqrt;
    case Op::Neg:
      return UnaryFn::kNeg;
    case Op::Exp:
      return UnaryFn::kExp;
    case Op::Clip:
      return UnaryFn::kClip;
    case Op::LeakyRelu:
      return UnaryFn::kLeakyRelu;
    case Op::Softplus:
      return UnaryFn::kSoftplus;
    case Op::Log:
      return UnaryFn::kLog;
    case Op::Abs:
      return UnaryFn::kAbs;
    case Op::Sin:
      return UnaryFn::kSin;
    case Op::Cos:
      return UnaryFn::kCos;
    default:
      return UnaryFn::kRelu;
  }
}

BinaryFn binary_fn(Op op) {
  switch (op) {
    case Op::Mul:
    case Op::ScalarMul:
      return BinaryFn::kMul;
    case Op::Sub:
      return BinaryFn::kSub;
    case Op::Div:
      return BinaryFn::kDiv;
    case Op::Pow:
      return BinaryFn::kPow;
    case Op::Max:
      return BinaryFn::kMax;
    case Op::Min:
      return BinaryFn::kMin;
    default:
      return BinaryFn::kAdd;
  }
}

int64_t extent(const Shape& s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s[i];
  return n;
}

// Copies `src` (shape `dims`, strides `src_st`) to `dst` + `dst_origin`
// elements with strides `dst_st`.
LaunchList::Launch copy_launch(const void* src, void* dst, int64_t dst_origin, int elem,
                               const Shape& dims, const std::vector<int64_t>& src_st,
                               const std::vector<int64_t>& dst_st, int64_t src_origin = 0) {
  const Strided st = make_strided(dims, src_st, dst_st);
  const char* s = static_cast<const char*>(src) + src_origin * elem;
  char* d = static_cast<char*>(dst) + dst_origin * elem;
  return [=](cudaStream_t stream) { return strided_copy(stream, s, d, elem, st); };
}

LaunchList::Launch zero_launch(void* dst, int64_t bytes) {
  return [=](cudaStream_t stream) -> Status {
    TSO_CUDART(cudaMemsetAsync(dst, 0, static_cast<size_t>(bytes), stream));
    return Status::Ok();
  };
}

Status plan_movement(const StepContext& sc, LaunchList& l) {
  const Node& n = sc.node();
  const Shape& xs = sc.in_type(0).shape;
  const int elem = static_cast<int>(dtype_bytes(sc.in_type(0).dtype));
  const std::vector<int64_t> in_st = rt::strides_of(xs);
  switch (n.op) {
    case Op::Transpose: {
      const Shape& ys = sc.out_type().shape;
      const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);
      std::vector<int64_t> src(ys.rank());
      for (int d = 0; d < ys.rank(); ++d) src[d] = in_st[perm[d]];
      l.add(copy_launch(sc.in(0), sc.out(), 0, elem, ys, src, rt::strides_of(ys)));
      return Status::Ok();
    }
    case Op::Slice: {
      const Shape& ys = sc.out_type().shape;
      std::vector<int64_t> src = in_st;
      int64_t origin = 0;
      const auto& axes = n.attrs.ints(AttrKey::axes);
      for (size_t i = 0; i < axes.size(); ++i) {
        origin += n.attrs.ints(AttrKey::starts)[i] * in_st[axes[i]];
        src[axes[i]] *= n.attrs.ints(AttrKey::steps)[i];
      }
      if (ys.numel() > 0)
        l.add(copy_launch(sc.in(0), sc.out(), 0, elem, ys, src, rt::strides_of(ys), origin));
      return Status::Ok();
    }
    case Op::Enlarge: {
      const Shape& ys = sc.out_type().shape;
      const std::vector<int64_t> out_st = rt::strides_of(ys);
      const int64_t origin = (ys[2] - xs[2]) / 2 * out_st[2] + (ys[3] - xs[3]) / 2;
      l.add(zero_launch(sc.out(), ys.numel() * elem));
      l.add(copy_launch(sc.in(0), sc.out(), origin, elem, xs, in_st, out_st));
      return Status::Ok();
    }
    case Op::Split: {
      const int64_t axis = n.attrs.i(AttrKey::axis);
      int64_t at = 0;
      for (size_t o = 0; o < sc.step->outputs.size(); ++o) {
        const Shape& ys = sc.out_type(static_cast<int>(o)).shape;
        l.add(copy_launch(sc.in(0), sc.out(static_cast<int>(o)), 0, elem, ys, in_st,
                          rt::strides_of(ys), at * in_st[axis]));
        at += ys[static_cast<int>(axis)];
      }
      return Status::Ok();
    }
    case Op::Concat: {
      const Shape& ys = sc.out_type().shape;
      const std::vector<int64_t> out_st = rt::strides_of(ys);
      const int64_t axis = n.attrs.i(AttrKey::axis);
      int64_t at = 0;
      for (size_t i = 0; i < sc.step->inputs.size(); ++i) {
        const Shape& is = sc.in_type(static_cast<int>(i)).shape;
        if (!sc.step->in_place[i])
          l.add(copy_launch(sc.in(static_cast<int>(i)), sc.out(), at * out_st[axis], elem, is,
                            rt::strides_of(is), out_st));
        at += is[static_cast<int>(axis)];
      }
      return Status::Ok();
    }
    case Op::UpdateSlice: {  // base (unless the output is the base), then the patch
      const Shape& ys = sc.out_type().shape;
      const std::vector<int64_t> out_st = rt::strides_of(ys);
      if (!sc.step->in_place[0]) l.add(copy_launch(sc.in(0), sc.out(), 0, elem, ys, in_st, out_st));
      const Shape& ps = sc.in_type(1).shape;
      const std::vector<int64_t>& starts = n.attrs.ints(AttrKey::starts);
      int64_t origin = 0;
      for (int d = 0; d < ys.rank(); ++d) origin += starts[d] * out_st[d];
      if (ps.numel() > 0)
        l.add(copy_launch(sc.in(1), sc.out(), origin, elem, ps, rt::strides_of(ps), out_st));
      return Status::Ok();
    }
    case Op::Pad: {
      const Shape& ys = sc.out_type().shape;
      const std::vector<int64_t> out_st = rt::strides_of(ys);
      const std::vector<int64_t>& pads = n.attrs.ints(AttrKey::pads);
      const float value = static_cast<float>(n.attrs.f(AttrKey::value));
      if (value == 0.0f) {
        l.add(zero_launch(sc.out(), ys.numel() * elem));
      } else if (sc.in_type(0).dtype == DType::kF32) {
        float* y = sc.out();
        const int64_t count = ys.numel();
        l.add([=](cudaStream_t s) { return fill(s, y, count, value); });
      } else {
        return Error{"pad value " + std::to_string(value) + " on " + to_string(sc.in_type(0)) +
                     ": only f32 tensors pad with a non-zero value"};
      }
      int64_t origin = 0;
      for (int d = 0; d < xs.rank(); ++d) origin += pads[d] * out_st[d];
      l.add(copy_launch(sc.in(0), sc.out(), origin, elem, xs, in_st, out_st));
      return Status::Ok();
    }
    default:
      return Error{"not a data-movement operator"};
  }
}

Status plan_compute(const StepContext& sc, LaunchList& l) {
  const Node& n = sc.node();
  const Shape& xs = sc.in_type(0).shape;
  const float* x = sc.in(0);
  float* y = sc.out();
  const int64_t count = sc.out_type().shape.numel();
  switch (sc.step->kernel) {
    case Kernel::kUnary: {
      const UnaryFn f = unary_fn(n.op);
      float lo = 0, hi = 0;
      if (n.op == Op::Clip) {
        lo = static_cast<float>(n.attrs.f(AttrKey::min));
        hi = static_cast<float>(n.attrs.f(AttrKey::max));
      }
      if (n.op == Op::LeakyRelu) lo = static_cast<float>(n.attrs.f(AttrKey::alpha));
      l.add([=](cudaStream_t s) { return unary(s, f, x, y, count, lo, hi); });
      return Status::Ok();
    }
    case Kernel::kBinary: {
      const Shape& ys = sc.out_type().shape;
      const Strided st = make_strided(ys, rt::broadcast_strides(xs, ys),
                                      rt::broadcast_strides(sc.in_type(1).shape, ys));
      const BinaryFn f = binary_fn(n.op);
      const float* b = sc.in(1);
      l.add([=](cudaStream_t s) { return binary(s, f, x, b, y, count, st); });
      return Status::Ok();
    }
    case Kernel::kIsNaN: {
      unsigned char* mask = static_cast<unsigned char*>(sc.tensor(sc.step->outputs[0]));
      l.add([=](cudaStream_t s) { return nan_mask(s, x, mask, count); });
      return Status::Ok();
    }
    case Kernel::kWhere: {
      const Shape& ys = sc.out_type().shape;
      const SelectStrides st = make_select_strides(ys, rt::broadcast_strides(xs, ys),
                                                   rt::broadcast_strides(sc.in_type(1).shape, ys),
                                                   rt::broadcast_strides(sc.in_type(2).shape, ys));
      const unsigned char* c = static_cast<const unsigned char*>(sc.tensor(sc.step->inputs[0]));
      const void *a = sc.tensor(sc.step->inputs[1]), *b = sc.tensor(sc.step->inputs[2]);
      void* out = sc.tensor(sc.step->outputs[0]);
      const int elem = static_cast<int>(dtype_bytes(sc.out_type().dtype));
      l.add([=](cudaStream_t s) { return where_select(s, c, a, b, out, elem, count, st); });
      return Status::Ok();
    }
    case Kernel::kBatchNorm: {
      const float *scale = sc.in(1), *bias = sc.in(2), *mean = sc.in(3), *var = sc.in(4);
      const int64_t batch = xs[0], c = xs.rank() > 1 ? xs[1] : 1, inner = extent(xs, 2, xs.rank());
      const float eps = static_cast<float>(n.attrs.f(AttrKey::epsilon));
      l.add([=](cudaStream_t s) {
        return batchnorm(s, x, scale, bias, mean, var, y, batch, c, inner, eps);
      });
      return Status::Ok();
    }
    case Kernel::kSoftmax: {
      const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
      const int64_t outer = extent(xs, 0, axis), len = xs[axis],
                    inner = extent(xs, axis + 1, xs.rank());
      const bool log = n.op == Op::LogSoftmax;
      l.add([=](cudaStream_t s) { return softmax(s, x, y, outer, len, inner, log); });
      return Status::Ok();
    }
    case Kernel::kLayerNorm: {
      const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
      const int64_t rows = extent(xs, 0, axis), len = extent(xs, axis, xs.rank());
      const Shape trailing(xs.dims().subspan(axis));
      const float* params[2] = {sc.in(1), sc.in(2)};
      int scratch = 0;
      for (int p = 0; p < 2; ++p) {
        const Shape& ps = sc.in_type(p + 1).shape;
        if (ps.numel() == len) continue;
        float* dst = sc.scratch(scratch++);
        l.add(copy_launch(params[p], dst, 0, 4, trailing, rt::broadcast_strides(ps, trailing),
                          rt::strides_of(trailing)));
        params[p] = dst;
      }
      const float eps = static_cast<float>(n.attrs.f(AttrKey::epsilon));
      const float *scale = params[0], *bias = params[1];
      l.add([=](cudaStream_t s) { return layernorm(s, x, scale, bias, y, rows, len, eps); });
      return Status::Ok();
    }
    case Kernel::kReduceMean: {
      std::vector<bool> reduced(xs.rank(), false);
      if (n.op == Op::GlobalAvgPool) {
        for (int d = 2; d < xs.rank(); ++d) reduced[d] = true;
      } else {
        for (int64_t a : n.attrs.ints(AttrKey::axes)) reduced[a] = true;
      }
      const std::vector<int64_t> st = rt::strides_of(xs);
      Shape kd, rd;
      std::vector<int64_t> ks, rs;
      for (int d = 0; d < xs.rank(); ++d) {
        (reduced[d] ? rd : kd).push_back(xs[d]);
        (reduced[d] ? rs : ks).push_back(st[d]);
      }
      const Strided kept = make_strided(kd, ks, {}), red = make_strided(rd, rs, {});
      const int64_t per = rd.numel();
      l.add([=](cudaStream_t s) { return reduce_mean(s, x, y, count, kept, per, red); });
      return Status::Ok();
    }
    case Kernel::kPool: {
      const std::vector<int64_t>& k = n.attrs.ints(AttrKey::kernel);
      Expected<std::vector<rt::WindowAxis>> win =
          rt::resolve_window(xs, k[0], k[1], n.attrs, n.attrs.i(AttrKey::ceil_mode) != 0);
      if (!win) return win.error();
      const rt::WindowAxis &h = (*win)[0], &w = (*win)[1];
      PoolArgs p;
      p.planes = xs[0] * xs[1];
      p.h = xs[2], p.w = xs[3], p.oh = h.out, p.ow = w.out;
      p.kh = h.k, p.kw = w.k, p.sh = h.stride, p.sw = w.stride;
      p.ph = h.pad_lo, p.pw = w.pad_lo, p.ph_hi = h.pad_hi, p.pw_hi = w.pad_hi;
      p.max = n.op == Op::MaxPool;
      p.count_include_pad = n.op == Op::AvgPool && n.attrs.i(AttrKey::count_include_pad) != 0;
      l.add([=](cudaStream_t s) { return pool(s, x, y, p); });
      return Status::Ok();
    }
    default:
      return plan_movement(sc, l);
  }
}

}  // namespace

std::string cudnn_message(const char* call, cudnnStatus_t s) {
  std::string c(call);
  return c.substr(0, c.find('(')) + ": " + cudnnGetErrorString(s);
}

std::string cublas_message(const char* call, cublasStatus_t s) {
  std::string c(call);
  const std::string load_error = cublaslt_load_error();
  return c.substr(0, c.find('(')) + ": " + cublasLtGetStatusName(s) + " (" +
         (load_error.empty() ? cublasLtGetStatusString(s) : load_error) + ")";
}

std::string cuda_message(const char* call, cudaError_t e) {
  std::string c(call);
  return c.substr(0, c.find('(')) + ": " + cudaGetErrorString(e);
}

Expected<std::unique_ptr<StepRunner>> make_runner(const StepContext& sc, DeviceContext& dc) {
  Expected<std::unique_ptr<StepRunner>> r = [&]() -> Expected<std::unique_ptr<StepRunner>> {
    switch (sc.step->kernel) {
      case Kernel::kConv:
        return make_conv_runner(sc, dc);
      case Kernel::kMatmul:
      case Kernel::kGemm:
        return make_matmul_runner(sc, dc);
      case Kernel::kSource:
      case Kernel::kView:
      case Kernel::kUnsupported:
        return Error{std::string("no runner for kernel family ") +
                     std::string(kernel_name(sc.step->kernel))};
      default: {
        auto list = std::make_unique<LaunchList>();
        TSO_RETURN_IF_ERROR(plan_compute(sc, *list));
        return std::unique_ptr<StepRunner>(std::move(list));
      }
    }
  }();
  if (!r) return Error{sc.where() + ": " + r.error().message};
  return r;
}

}  // namespace tso::cuda
