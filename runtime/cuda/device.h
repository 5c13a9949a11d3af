// The GPU as tso's CUDA runtime sees it: whether kernels can run here and, if
// not, why (so a machine without a GPU gets a sentence, not an error code),
// and device memory owned by RAII buffers. Everything GPU-side starts here.
//
// This header is plain C++ (no CUDA types) so that CPU code and tests can use
// it; the CUDA calls live in device.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace tso::cuda {

// The compute capability tso's kernels are compiled for (sm_90 machine code
// plus compute_90 PTX, see the top-level CMakeLists.txt); older devices
// cannot run them.
constexpr int kMinComputeMajor = 9;

struct GpuStatus {
  bool usable = false;
  std::string reason;  // why not usable; empty when usable
  int device_count = 0;
  int runtime_version = 0;  // CUDA runtime linked in, e.g. 13000
  int driver_version = 0;   // 0 when no driver is installed
  // Device 0, when one is visible.
  std::string name;
  int64_t total_memory = 0;  // bytes
  int compute_major = 0;
  int compute_minor = 0;
};

// Queries the CUDA runtime. Never fails: a missing driver or device is
// reported in `reason`, e.g. "cudaGetDeviceCount: CUDA driver version is
// insufficient for CUDA runtime version".
GpuStatus gpu_status();

// Device memory free now on the current device (cudaMemGetInfo), or the
// CUDA error.
Expected<int64_t> free_device_memory();

// One line for logs and test skips: "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90"
// or "no usable GPU: <reason>".
std::string describe(const GpuStatus& s);

// An owned allocation in device memory; move-only. A default-constructed
// buffer is empty (size 0, null data).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` bytes; the error carries CUDA's reason.
  static Expected<DeviceBuffer> allocate(size_t bytes);

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

  // Synchronous copies of exactly `bytes` bytes from the start of the
  // buffer; copying more than the buffer holds is an error.
  Status upload(const void* host, size_t bytes);
  Status download(void* host, size_t bytes) const;

 private:
  DeviceBuffer(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tso::cuda
