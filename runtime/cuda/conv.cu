// conv2d on cuDNN: descriptors built once, the algorithm measured once per
// signature (ConvAlgoCache), bias and relu fused through
// cudnnConvolutionBiasActivationForward (cuDNN fuses only relu and identity;
// other activations and a bias without relu run as one epilogue kernel).
// Asymmetric padding (odd `same`, explicit) is applied by copying the input
// into a zeroed, padded scratch buffer, since cuDNN pads symmetrically.
#include <algorithm>
#include <vector>

#include "runtime/common/geometry.h"
#include "runtime/cuda/kernels.cuh"
#include "runtime/cuda/runner.cuh"

namespace tso::cuda {
namespace {

class ConvRunner : public StepRunner {
 public:
  ~ConvRunner() override {
    if (x_) cudnnDestroyTensorDescriptor(x_);
    if (y_) cudnnDestroyTensorDescriptor(y_);
    if (b_) cudnnDestroyTensorDescriptor(b_);
    if (w_) cudnnDestroyFilterDescriptor(w_);
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
    if (act_) cudnnDestroyActivationDescriptor(act_);
  }

  Status prepare(const StepContext& sc, DeviceContext& dc) {
    const Node& n = sc.node();
    const Shape& xs = sc.in_type(0).shape;
    const Shape& ws = sc.in_type(1).shape;
    const Shape& ys = sc.out_type().shape;
    Expected<std::vector<rt::WindowAxis>> win =
        rt::resolve_window(xs, ws[2], ws[3], n.attrs, false);
    if (!win) return win.error();
    const rt::WindowAxis &h = (*win)[0], &v = (*win)[1];
    x_ptr_ = sc.in(0);
    w_ptr_ = sc.in(1);
    bias_ = sc.step->inputs.size() > 2 ? sc.in(2) : nullptr;
    y_ptr_ = sc.out();
    act_kind_ = n.attrs.act(AttrKey::act);
    act_fn_ = unary_of_act(n.attrs, &act_lo_, &act_hi_);
    Shape conv_in = xs;
    int64_t pad_h = h.pad_lo, pad_w = v.pad_lo;
    if (!h.symmetric() || !v.symmetric()) {
      padded_ = sc.scratch(0);
      conv_in = Shape{xs[0], xs[1], h.in + h.pad_lo + h.pad_hi, v.in + v.pad_lo + v.pad_hi};
      padded_bytes_ = conv_in.numel() * 4;
      const std::vector<int64_t> dst = rt::strides_of(conv_in);
      pad_copy_ = make_strided(xs, rt::strides_of(xs), dst);
      pad_origin_ = h.pad_lo * dst[2] + v.pad_lo;
      pad_h = pad_w = 0;
    }
    TSO_CUDNN(cudnnCreateTensorDescriptor(&x_));
    TSO_CUDNN(cudnnCreateTensorDescriptor(&y_));
    TSO_CUDNN(cudnnCreateFilterDescriptor(&w_));
    TSO_CUDNN(cudnnCreateConvolutionDescriptor(&conv_));
    TSO_CUDNN(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(conv_in[0]),
                                         int(conv_in[1]), int(conv_in[2]), int(conv_in[3])));
    TSO_CUDNN(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(ys[0]),
                                         int(ys[1]), int(ys[2]), int(ys[3])));
    TSO_CUDNN(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, int(ws[0]),
                                         int(ws[1]), int(ws[2]), int(ws[3])));
    TSO_CUDNN(cudnnSetConvolution2dDescriptor(conv_, int(pad_h), int(pad_w), int(h.stride),
                                              int(v.stride), int(h.dil), int(v.dil),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    const int64_t groups = n.attrs.i(AttrKey::groups);
    TSO_CUDNN(cudnnSetConvolutionGroupCount(conv_, int(groups)));
    TSO_CUDNN(cudnnSetConvolutionMathType(conv_, dc.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    int on, oc, oh, ow;
    TSO_CUDNN(cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &on, &oc, &oh, &ow));
    if (Shape{on, oc, oh, ow} != ys)
      return Error{"cuDNN computes output " + to_string(Shape{on, oc, oh, ow}) +
                   ", the graph says " + to_string(ys)};

    fused_ = bias_ != nullptr && act_kind_ == Act::kRelu;
    if (fused_) {
      TSO_CUDNN(cudnnCreateTensorDescriptor(&b_));
      TSO_CUDNN(
          cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, int(ys[1]), 1, 1));
      TSO_CUDNN(cudnnCreateActivationDescriptor(&act_));
      TSO_CUDNN(
          cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    ConvSignature sig;
    sig.x = conv_in;
    sig.w = ws;
    sig.y = ys;
    sig.pad_h = pad_h;
    sig.pad_w = pad_w;
    sig.stride_h = h.stride;
    sig.stride_w = v.stride;
    sig.dil_h = h.dil;
    sig.dil_w = v.dil;
    sig.groups = groups;
    sig.tf32 = dc.tf32;
    sig.fused = fused_;
    Expected<ConvAlgoResult> algo =
        dc.algos->choose(sig, [&](const ConvSignature&) { return measure(dc); });
    if (!algo) return algo.error();
    algo_ = static_cast<cudnnConvolutionFwdAlgo_t>(algo->algo);
    TSO_CUDNN(cudnnSetConvolutionMathType(conv_, static_cast<cudnnMathType_t>(algo->math)));
    size_t ws_bytes = 0;
    TSO_CUDNN(
        cudnnGetConvolutionForwardWorkspaceSize(dc.cudnn, x_, w_, conv_, y_, algo_, &ws_bytes));
    workspace_ = std::max<size_t>(ws_bytes, static_cast<size_t>(algo->workspace_bytes));
    channels_ = ys[1];
    inner_ = ys[2] * ys[3];
    outer_ = ys[0];
    return Status::Ok();
  }

  Status enqueue(const DeviceContext& dc) override {
    const float* x = x_ptr_;
    if (padded_) {
      TSO_CUDART(cudaMemsetAsync(padded_, 0, padded_bytes_, dc.stream));
      TSO_RETURN_IF_ERROR(strided_copy(dc.stream, x_ptr_, padded_ + pad_origin_, 4, pad_copy_));
      x = padded_;
    }
    const float one = 1.0f, zero = 0.0f;
    if (fused_) {
      TSO_CUDNN(cudnnConvolutionBiasActivationForward(
          dc.cudnn, &one, x_, x, w_, w_ptr_, conv_, algo_, dc.workspace, dc.workspace_bytes, &zero,
          y_, y_ptr_, b_, bias_, act_, y_, y_ptr_));
      return Status::Ok();
    }
    TSO_CUDNN(cudnnConvolutionForward(dc.cudnn, &one, x_, x, w_, w_ptr_, conv_, algo_, dc.workspace,
                                      dc.workspace_bytes, &zero, y_, y_ptr_));
    if (bias_ || act_kind_ != Act::kNone)
      return bias_act(dc.stream, y_ptr_, bias_, outer_, channels_, inner_, act_fn_,
                      act_kind_ != Act::kNone, act_lo_, act_hi_);
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return workspace_; }

 private:
  Expected<std::vector<ConvAlgoResult>> measure(DeviceContext& dc) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    TSO_CUDNN(cudnnFindConvolutionForwardAlgorithm(dc.cudnn, x_, w_, conv_, y_,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf));
    std::vector<ConvAlgoResult> out;
    for (int i = 0; i < count; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      if (!dc.tf32 && perf[i].mathType != CUDNN_FMA_MATH) continue;
      out.push_back({static_cast<int>(perf[i].algo), static_cast<int64_t>(perf[i].memory),
                     perf[i].time, static_cast<int>(perf[i].mathType)});
    }
    return out;
  }

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  const float *x_ptr_ = nullptr, *w_ptr_ = nullptr, *bias_ = nullptr;
  float* y_ptr_ = nullptr;
  float* padded_ = nullptr;
  int64_t padded_bytes_ = 0, pad_origin_ = 0;
  Strided pad_copy_;
  Act act_kind_ = Act::kNone;
  UnaryFn act_fn_ = UnaryFn::kRelu;
  float act_lo_ = 0, act_hi_ = 0;  // clip's bounds
  bool fused_ = false;
  size_t workspace_ = 0;
  int64_t outer_ = 0, channels_ = 0, inner_ = 0;
};

}  // namespace

Expected<std::unique_ptr<StepRunner>> make_conv_runner(const StepContext& sc, DeviceContext& dc) {
  auto r = std::make_unique<ConvRunner>();
  TSO_RETURN_IF_ERROR(r->prepare(sc, dc));
  return std::unique_ptr<StepRunner>(std::move(r));
}

}  // namespace tso::cuda
