// One prepared step of a plan: descriptors built, algorithms chosen and
// device addresses resolved when the executor is created, so that enqueueing
// it (during CUDA graph capture) only launches work. Internal to runtime/cuda.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cuda/algo_cache.h"
#include "runtime/cuda/plan.h"

namespace tso::cuda {

// Library handles and shared state, owned by the executor.
struct DeviceContext {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  bool tf32 = true;
  ConvAlgoCache* algos = nullptr;
  void* workspace = nullptr;  // shared by every step; sized after all steps are prepared
  size_t workspace_bytes = 0;
};

// Where a step's tensors are.
struct StepContext {
  const Graph* graph = nullptr;
  const Plan* plan = nullptr;
  const StepPlan* step = nullptr;
  char* arena = nullptr;
  char* statics = nullptr;

  const Node& node() const { return graph->node(step->node); }
  std::string where() const { return describe_node(*graph, step->node); }
  void* tensor(int id) const {
    const TensorPlan& t = plan->tensors[id];
    return (t.storage == Storage::kStatic ? statics : arena) + t.offset;
  }
  float* in(int i) const { return static_cast<float*>(tensor(step->inputs[i])); }
  float* out(int i = 0) const { return static_cast<float*>(tensor(step->outputs[i])); }
  const TensorType& in_type(int i) const { return plan->tensors[step->inputs[i]].type; }
  const TensorType& out_type(int i = 0) const { return plan->tensors[step->outputs[i]].type; }
  float* scratch(int i) const { return reinterpret_cast<float*>(arena + step->scratch_offsets[i]); }
};

class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Launches the step on ctx.stream; errors carry the failing call.
  virtual Status enqueue(const DeviceContext& ctx) = 0;
  // Workspace bytes this step needs from DeviceContext::workspace.
  virtual size_t workspace_bytes() const { return 0; }
};

// The runner for any step (dispatches on its kernel family).
Expected<std::unique_ptr<StepRunner>> make_runner(const StepContext& sc, DeviceContext& dc);

// Family-specific factories.
Expected<std::unique_ptr<StepRunner>> make_conv_runner(const StepContext& sc, DeviceContext& dc);
Expected<std::unique_ptr<StepRunner>> make_matmul_runner(const StepContext& sc,
                                                         DeviceContext& dc);

// "cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM ..." style messages.
std::string cudnn_message(const char* call, cudnnStatus_t s);
std::string cublas_message(const char* call, cublasStatus_t s);
std::string cuda_message(const char* call, cudaError_t e);

}  // namespace tso::cuda

// Returns an Error naming the call when a CUDA, cuDNN or cuBLAS call fails.
#define TSO_CUDNN(call)                                                            \
  do {                                                                             \
    cudnnStatus_t tso_s_ = (call);                                                 \
    if (tso_s_ != CUDNN_STATUS_SUCCESS) return ::tso::Error{::tso::cuda::cudnn_message(#call, tso_s_)}; \
  } while (0)
#define TSO_CUBLAS(call)                                                           \
  do {                                                                             \
    cublasStatus_t tso_s_ = (call);                                                \
    if (tso_s_ != CUBLAS_STATUS_SUCCESS) return ::tso::Error{::tso::cuda::cublas_message(#call, tso_s_)}; \
  } while (0)
#define TSO_CUDART(call)                                                           \
  do {                                                                             \
    cudaError_t tso_e_ = (call);                                                   \
    if (tso_e_ != cudaSuccess) {                                                   \
      cudaGetLastError();                                                          \
      return ::tso::Error{::tso::cuda::cuda_message(#call, tso_e_)};              \
    }                                                                              \
  } while (0)
