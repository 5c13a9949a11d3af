// matmul and gemm on cuBLASLt. Row-major products are computed as their
// column-major transposes (D^T = B^T A^T), so no data is transposed. A bias
// along the output's columns and relu run as cuBLASLt epilogues; gemm's other
// C shapes are broadcast (times beta) into the output first and accumulated
// with beta = 1; sigmoid and tanh run as a separate kernel. TF32 is the
// compute type CUBLAS_COMPUTE_32F_FAST_TF32.
#include <vector>

#include "runtime/common/geometry.h"
#include "runtime/cuda/kernels.cuh"
#include "runtime/cuda/runner.cuh"

namespace tso::cuda {
namespace {

// Operand broadcast to the full batch before the product.
struct Expansion {
  const float* src = nullptr;
  float* dst = nullptr;
  Strided st;
};

class MatmulRunner : public StepRunner {
 public:
  ~MatmulRunner() override {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_, b_, d_})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  Status prepare(const StepContext& sc, DeviceContext& dc) {
    const Node& n = sc.node();
    const bool gemm = n.op == Op::Gemm;
    const Shape& as = sc.in_type(0).shape;
    const Shape& bs = sc.in_type(1).shape;
    a_ptr_ = sc.in(0);
    b_ptr_ = sc.in(1);
    d_ptr_ = sc.out();
    bool ta = false, tb = false;
    int64_t m, nn, k, batch = 1, stride_a = 0, stride_b = 0;
    if (gemm) {
      ta = n.attrs.i(AttrKey::trans_a) != 0;
      tb = n.attrs.i(AttrKey::trans_b) != 0;
      m = as[ta ? 1 : 0];
      k = as[ta ? 0 : 1];
      nn = bs[tb ? 0 : 1];
      alpha_ = static_cast<float>(n.attrs.f(AttrKey::alpha));
    } else {
      Expected<rt::MatmulGeometry> g = rt::matmul_geometry(as, bs);
      if (!g) return g.error();
      m = g->m, nn = g->n, k = g->k, batch = g->batch;
      stride_a = g->stride_a, stride_b = g->stride_b;
      int scratch = 0;
      auto expand = [&](const Shape& s, const float* src, int64_t rows, int64_t cols) {
        Shape full = g->batch_shape;
        full.push_back(rows);
        full.push_back(cols);
        Expansion e{src, sc.scratch(scratch++), {}};
        e.st = make_strided(full, rt::broadcast_strides(s, full), rt::strides_of(full));
        expansions_.push_back(e);
        return e.dst;
      };
      const Shape a2 = as.rank() == 1 ? Shape{1, as[0]} : as;
      const Shape b2 = bs.rank() == 1 ? Shape{bs[0], 1} : bs;
      if (g->expand_a) a_ptr_ = expand(a2, a_ptr_, m, k);
      if (g->expand_b) b_ptr_ = expand(b2, b_ptr_, k, nn);
    }
    out_elements_ = sc.out_type().shape.numel();
    const Act act = n.attrs.act(AttrKey::act);
    bool bias_epilogue = false;
    if (gemm && sc.step->inputs.size() > 2) {
      const Shape& cs = sc.in_type(2).shape;
      const float beta = static_cast<float>(n.attrs.f(AttrKey::beta));
      const bool row_vector =
          cs.numel() == nn && (cs.rank() == 1 || (cs.rank() == 2 && cs[0] == 1));
      if (row_vector && beta == 1.0f) {
        bias_epilogue = true;
        bias_ = sc.in(2);
      } else {
        const Shape out{m, nn};
        c_copy_ = make_strided(out, rt::broadcast_strides(cs, out), rt::strides_of(out));
        c_src_ = sc.in(2);
        c_scale_ = beta;
        beta_ = 1.0f;
      }
    }
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (act == Act::kRelu)
      epilogue = bias_epilogue ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    else if (bias_epilogue)
      epilogue = CUBLASLT_EPILOGUE_BIAS;
    if (act != Act::kNone && act != Act::kRelu) {
      post_ = unary_of_act(n.attrs, &post_lo_, &post_hi_);
      has_post_ = true;
    }

    const cublasComputeType_t compute = dc.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    TSO_CUBLAS(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
    // cuBLASLt's A is our B and its B our A (column-major transposes).
    const cublasOperation_t op_lt_a = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_lt_b = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    TSO_CUBLAS(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_lt_a, sizeof op_lt_a));
    TSO_CUBLAS(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_lt_b, sizeof op_lt_b));
    TSO_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue));
    if (bias_epilogue)
      TSO_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_,
                                                sizeof bias_));
    // Stored (pre-op) shapes in column-major terms.
    TSO_CUBLAS(tb ? cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, k, nn, k)
                  : cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, nn, k, nn));
    TSO_CUBLAS(ta ? cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, m, k, m)
                  : cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, k, m, k));
    TSO_CUBLAS(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, nn, m, nn));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      const int64_t sd = m * nn;
      TSO_RETURN_IF_ERROR(set_batch(a_, count, stride_b));
      TSO_RETURN_IF_ERROR(set_batch(b_, count, stride_a));
      TSO_RETURN_IF_ERROR(set_batch(d_, count, sd));
    }
    TSO_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_));
    const size_t limit = static_cast<size_t>(dc.algos->workspace_limit());
    TSO_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &limit, sizeof limit));
    int found = 0;
    TSO_CUBLAS(
        cublasLtMatmulAlgoGetHeuristic(dc.lt, op_, a_, b_, d_, d_, pref_, 1, &heuristic_, &found));
    if (found == 0)
      return Error{"cublasLtMatmulAlgoGetHeuristic: no algorithm for [" + std::to_string(m) + "," +
                   std::to_string(k) + "] x [" + std::to_string(k) + "," + std::to_string(nn) +
                   "] batch " + std::to_string(batch)};
    return Status::Ok();
  }

  Status enqueue(const DeviceContext& dc) override {
    for (const Expansion& e : expansions_)
      TSO_RETURN_IF_ERROR(strided_copy(dc.stream, e.src, e.dst, 4, e.st));
    if (c_src_) TSO_RETURN_IF_ERROR(strided_copy(dc.stream, c_src_, d_ptr_, 4, c_copy_, c_scale_));
    TSO_CUBLAS(cublasLtMatmul(dc.lt, op_, &alpha_, b_ptr_, a_, a_ptr_, b_, &beta_, d_ptr_, d_,
                              d_ptr_, d_, &heuristic_.algo, dc.workspace, dc.workspace_bytes,
                              dc.stream));
    if (has_post_)
      return unary(dc.stream, post_, d_ptr_, d_ptr_, out_elements_, post_lo_, post_hi_);
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return heuristic_.workspaceSize; }

 private:
  static Status set_batch(cublasLtMatrixLayout_t l, int32_t count, int64_t stride) {
    TSO_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                sizeof count));
    TSO_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride));
    return Status::Ok();
  }

  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  const float *a_ptr_ = nullptr, *b_ptr_ = nullptr, *bias_ = nullptr, *c_src_ = nullptr;
  float* d_ptr_ = nullptr;
  float alpha_ = 1.0f, beta_ = 0.0f, c_scale_ = 1.0f;
  Strided c_copy_;
  std::vector<Expansion> expansions_;
  UnaryFn post_ = UnaryFn::kRelu;
  bool has_post_ = false;
  float post_lo_ = 0, post_hi_ = 0;  // clip's bounds
  int64_t out_elements_ = 0;
};

}  // namespace

Expected<std::unique_ptr<StepRunner>> make_matmul_runner(const StepContext& sc, DeviceContext& dc) {
  auto r = std::make_unique<MatmulRunner>();
  TSO_RETURN_IF_ERROR(r->prepare(sc, dc));
  return std::unique_ptr<StepRunner>(std::move(r));
}

}  // namespace tso::cuda
