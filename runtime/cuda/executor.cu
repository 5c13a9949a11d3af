#include "runtime/cuda/executor.h"

#include <algorithm>
#include <cstring>

#include "runtime/common/memory.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/runner.cuh"

namespace tso::cuda {

struct Executor::Impl {
  Graph graph;
  Plan plan;
  ExecutorOptions options;
  ConvAlgoCache algos{0};
  DeviceContext dc;
  DeviceBuffer statics, arena, workspace;
  std::vector<std::unique_ptr<StepRunner>> runners;
  cudaGraph_t cuda_graph = nullptr;
  cudaGraphExec_t cuda_graph_exec = nullptr;

  ~Impl() {
    runners.clear();  // descriptors before the handles they were made with
    if (cuda_graph_exec) cudaGraphExecDestroy(cuda_graph_exec);
    if (cuda_graph) cudaGraphDestroy(cuda_graph);
    if (dc.lt) cublasLtDestroy(dc.lt);
    if (dc.cudnn) cudnnDestroy(dc.cudnn);
    if (dc.stream) cudaStreamDestroy(dc.stream);
  }

  void* address(int tensor) {
    const TensorPlan& t = plan.tensors[tensor];
    char* base = static_cast<char*>(t.storage == Storage::kStatic ? statics.data() : arena.data());
    return base + t.offset;
  }

  Status enqueue_all() {
    for (size_t i = 0; i < runners.size(); ++i) {
      Status s = runners[i]->enqueue(dc);
      if (!s.ok()) return Error{describe_node(graph, plan.steps[i].node) + ": " + s.error().message};
    }
    return Status::Ok();
  }

  Status capture() {
    TSO_CUDART(cudaStreamBeginCapture(dc.stream, cudaStreamCaptureModeThreadLocal));
    Status s = enqueue_all();
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(dc.stream, &g);
    if (!s.ok()) {
      if (g) cudaGraphDestroy(g);
      cudaGetLastError();
      return s;
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      return Error{cuda_message("cudaStreamEndCapture", e)};
    }
    cuda_graph = g;
    TSO_CUDART(cudaGraphInstantiate(&cuda_graph_exec, cuda_graph, 0));
    return Status::Ok();
  }

  // Launches one run on the stream without waiting.
  Status launch() {
    if (!options.cuda_graph) return enqueue_all();
    if (!cuda_graph_exec) TSO_RETURN_IF_ERROR(capture());
    TSO_CUDART(cudaGraphLaunch(cuda_graph_exec, dc.stream));
    return Status::Ok();
  }
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

namespace {

Expected<DeviceBuffer> allocate(const char* what, int64_t bytes) {
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(static_cast<size_t>(bytes));
  if (!b) return Error{std::string("allocating the ") + what + " (" + std::to_string(bytes) +
                       " bytes): " + b.error().message};
  return b;
}

}  // namespace

Expected<std::unique_ptr<Executor>> Executor::create(const Graph& g,
                                                     const ExecutorOptions& options) {
  GpuStatus gpu = gpu_status();
  if (!gpu.usable) return Error{describe(gpu)};
  auto impl = std::make_unique<Impl>();
  impl->graph = g;
  impl->options = options;
  impl->algos = ConvAlgoCache(options.workspace_limit);
  Expected<Plan> plan = make_plan(g, options.plan);
  if (!plan) return plan.error();
  impl->plan = std::move(*plan);
  Expected<std::vector<std::byte>> image = static_image(g, impl->plan, options.sources);
  if (!image) return image.error();

  DeviceContext& dc = impl->dc;
  dc.tf32 = options.tf32;
  dc.algos = &impl->algos;
  TSO_CUDART(cudaStreamCreateWithFlags(&dc.stream, cudaStreamNonBlocking));
  TSO_CUDNN(cudnnCreate(&dc.cudnn));
  TSO_CUDNN(cudnnSetStream(dc.cudnn, dc.stream));
  TSO_CUBLAS(cublasLtCreate(&dc.lt));

  Expected<int64_t> free_bytes = free_device_memory();
  if (!free_bytes) return free_bytes.error();
  TSO_RETURN_IF_ERROR(check_device_memory(impl->plan, *free_bytes));
  Expected<DeviceBuffer> statics = allocate("static block (weights, inputs)", impl->plan.static_bytes);
  if (!statics) return statics.error();
  impl->statics = std::move(*statics);
  TSO_RETURN_IF_ERROR(impl->statics.upload(image->data(), image->size()));
  Expected<DeviceBuffer> arena = allocate("arena", impl->plan.arena.peak_bytes);
  if (!arena) return arena.error();
  impl->arena = std::move(*arena);

  size_t workspace = 0;
  for (const StepPlan& step : impl->plan.steps) {
    StepContext sc{&impl->graph, &impl->plan, &step, static_cast<char*>(impl->arena.data()),
                   static_cast<char*>(impl->statics.data())};
    Expected<std::unique_ptr<StepRunner>> r = make_runner(sc, dc);
    if (!r) return r.error();
    workspace = std::max(workspace, (*r)->workspace_bytes());
    impl->runners.push_back(std::move(*r));
  }
  free_bytes = free_device_memory();
  if (!free_bytes) return free_bytes.error();
  TSO_RETURN_IF_ERROR(rt::check_fits(static_cast<int64_t>(workspace), *free_bytes,
                                     "the convolution and matmul workspace", "the GPU"));
  Expected<DeviceBuffer> ws = allocate("workspace", static_cast<int64_t>(workspace));
  if (!ws) return ws.error();
  impl->workspace = std::move(*ws);
  dc.workspace = impl->workspace.data();
  dc.workspace_bytes = workspace;
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Status Executor::set_input(const std::string& name, std::span<const std::byte> bytes) {
  const Graph& g = impl_->graph;
  for (int i : g.input_nodes()) {
    if (g.node(i).op != Op::Input || g.node(i).name != name) continue;
    const int t = impl_->plan.first_tensor[i];
    const int64_t need = impl_->plan.tensors[t].bytes;
    if (static_cast<int64_t>(bytes.size()) != need)
      return Error{"input '" + name + "' (" + to_string(impl_->plan.tensors[t].type) + ") needs " +
                   std::to_string(need) + " bytes, got " + std::to_string(bytes.size())};
    TSO_CUDART(cudaMemcpy(impl_->address(t), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    return Status::Ok();
  }
  return Error{"the graph has no input named '" + name + "'"};
}

Status Executor::set_input(const std::string& name, std::span<const float> values) {
  return set_input(name, std::as_bytes(values));
}

Status Executor::run() {
  TSO_RETURN_IF_ERROR(impl_->launch());
  TSO_CUDART(cudaStreamSynchronize(impl_->dc.stream));
  return Status::Ok();
}

Expected<std::vector<std::byte>> Executor::output_bytes(int index) const {
  const auto& outs = impl_->graph.outputs();
  if (index < 0 || index >= static_cast<int>(outs.size()))
    return Error{"output " + std::to_string(index) + " does not exist (the graph has " +
                 std::to_string(outs.size()) + ")"};
  const int t = impl_->plan.tensor_id(outs[index].ref);
  std::vector<std::byte> host(static_cast<size_t>(impl_->plan.tensors[t].bytes));
  TSO_CUDART(cudaMemcpy(host.data(), impl_->address(t), host.size(), cudaMemcpyDeviceToHost));
  return host;
}

Expected<std::vector<float>> Executor::output(int index) const {
  Expected<std::vector<std::byte>> bytes = output_bytes(index);
  if (!bytes) return bytes.error();
  const TensorType& type = impl_->graph.type(impl_->graph.outputs()[index].ref);
  if (type.dtype != DType::kF32)
    return Error{"output '" + impl_->graph.outputs()[index].name + "' is " + to_string(type) +
                 ", not f32"};
  std::vector<float> v(bytes->size() / sizeof(float));
  std::memcpy(v.data(), bytes->data(), bytes->size());
  return v;
}

Expected<std::vector<float>> Executor::time_runs(int iters, int warmup) {
  for (int i = 0; i < warmup; ++i) TSO_RETURN_IF_ERROR(impl_->launch());
  TSO_CUDART(cudaStreamSynchronize(impl_->dc.stream));
  cudaEvent_t start = nullptr, stop = nullptr;
  TSO_CUDART(cudaEventCreate(&start));
  cudaError_t e = cudaEventCreate(&stop);
  if (e != cudaSuccess) {
    cudaEventDestroy(start);
    return Error{cuda_message("cudaEventCreate", e)};
  }
  std::vector<float> ms;
  Status status = [&]() -> Status {
    for (int i = 0; i < iters; ++i) {
      TSO_CUDART(cudaEventRecord(start, impl_->dc.stream));
      TSO_RETURN_IF_ERROR(impl_->launch());
      TSO_CUDART(cudaEventRecord(stop, impl_->dc.stream));
      TSO_CUDART(cudaEventSynchronize(stop));
      float t = 0;
      TSO_CUDART(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    return Status::Ok();
  }();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!status.ok()) return status.error();
  return ms;
}

const Plan& Executor::plan() const { return impl_->plan; }

ExecutorStats Executor::stats() const {
  ExecutorStats s;
  s.arena_bytes = impl_->plan.arena.peak_bytes;
  s.static_bytes = impl_->plan.static_bytes;
  s.workspace_bytes = static_cast<int64_t>(impl_->dc.workspace_bytes);
  s.steps = static_cast<int>(impl_->plan.steps.size());
  s.views = impl_->plan.views;
  s.conv_algorithms_measured = impl_->algos.measurements();
  return s;
}

double median(std::vector<float> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (double(values[n / 2 - 1]) + values[n / 2]);
}

}  // namespace tso::cuda
