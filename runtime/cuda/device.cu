#include "runtime/cuda/device.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <utility>

namespace tso::cuda {
namespace {

std::string cuda_error(const char* call, cudaError_t e) {
  return std::string(call) + ": " + cudaGetErrorString(e);
}

}  // namespace

GpuStatus gpu_status() {
  GpuStatus s;
  cudaRuntimeGetVersion(&s.runtime_version);
  cudaDriverGetVersion(&s.driver_version);
  cudaError_t e = cudaGetDeviceCount(&s.device_count);
  if (e != cudaSuccess) {
    s.device_count = 0;
    s.reason = cuda_error("cudaGetDeviceCount", e);
    cudaGetLastError();  // reset the runtime's last error so later calls start clean
    return s;
  }
  if (s.device_count == 0) {
    s.reason = "no CUDA device visible";
    return s;
  }
  cudaDeviceProp prop{};
  e = cudaGetDeviceProperties(&prop, 0);
  if (e != cudaSuccess) {
    s.reason = cuda_error("cudaGetDeviceProperties", e);
    cudaGetLastError();
    return s;
  }
  s.name = prop.name;
  s.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  s.compute_major = prop.major;
  s.compute_minor = prop.minor;
  if (prop.major < kMinComputeMajor) {
    s.reason = "device 0 (" + s.name + ") has compute capability " + std::to_string(prop.major) +
               "." + std::to_string(prop.minor) + "; tso's kernels need " +
               std::to_string(kMinComputeMajor) + ".0 or newer";
    return s;
  }
  s.usable = true;
  return s;
}

Expected<int64_t> free_device_memory() {
  size_t free = 0, total = 0;
  cudaError_t e = cudaMemGetInfo(&free, &total);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Error{cuda_error("cudaMemGetInfo", e)};
  }
  return static_cast<int64_t>(free);
}

std::string describe(const GpuStatus& s) {
  if (!s.usable) return "no usable GPU: " + s.reason;
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", s.total_memory / double(1ull << 30));
  return s.name + ", " + mem + ", sm_" + std::to_string(s.compute_major) +
         std::to_string(s.compute_minor);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Expected<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  void* p = nullptr;
  if (bytes > 0) {
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return Error{cuda_error("cudaMalloc", e) + " (" + std::to_string(bytes) + " bytes)"};
    }
  }
  return DeviceBuffer(p, bytes);
}

Status DeviceBuffer::upload(const void* host, size_t bytes) {
  if (bytes > bytes_)
    return Error{"upload of " + std::to_string(bytes) + " bytes into a buffer of " +
                 std::to_string(bytes_)};
  if (bytes == 0) return Status::Ok();
  cudaError_t e = cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return Error{cuda_error("cudaMemcpy (upload)", e)};
  return Status::Ok();
}

Status DeviceBuffer::download(void* host, size_t bytes) const {
  if (bytes > bytes_)
    return Error{"download of " + std::to_string(bytes) + " bytes from a buffer of " +
                 std::to_string(bytes_)};
  if (bytes == 0) return Status::Ok();
  cudaError_t e = cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return Error{cuda_error("cudaMemcpy (download)", e)};
  return Status::Ok();
}

}  // namespace tso::cuda
