// y <- a * x + y over float vectors in device memory: the first kernel of the
// CUDA runtime, and the smallest end-to-end check that a kernel compiled for
// sm_90 launches and computes on this machine's GPU.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "runtime/cuda/device.h"

namespace tso::cuda {

// Computes y[i] = fmaf(a, x[i], y[i]) for i < n (a fused multiply-add, so the
// result is bit-exact against std::fma on the host) and waits for it. Both
// buffers must hold at least n floats.
Status axpy(float a, const DeviceBuffer& x, DeviceBuffer& y, int64_t n);

}  // namespace tso::cuda
