// Host memory: how much the machine can still give, and tensor and buffer
// sizes checked before anything is allocated, so that a model too large for
// the machine is an Error naming what did not fit instead of std::bad_alloc
// or an overflowed size. Shared by the runtimes for their host buffers.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/types.h"

namespace tso::rt {

// Bytes the machine can allocate without swapping: MemAvailable from
// /proc/meminfo, or, where that is missing, the physical memory (sysconf),
// so the check below only refuses what could never fit.
int64_t available_memory_bytes();

// An Error when `bytes` (>= 0) exceed available_memory_bytes(), e.g.
// "needs 40.0 TiB for the arena but the machine has 21.3 GiB available".
Status check_allocation(int64_t bytes, const std::string& what);

// The size of a tensor of type `t` in bytes (elements times dtype_bytes), or
// an Error naming tensor `name` and its type when that overflows int64.
Expected<int64_t> checked_bytes(const TensorType& t, const std::string& name);

// `bytes` for people: "512 B", "1.5 KiB", "21.3 GiB".
std::string format_bytes(int64_t bytes);

}  // namespace tso::rt
