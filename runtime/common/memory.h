// Host memory: how much the machine can still give, and tensor and buffer
// sizes checked before anything is allocated, so that a model too large for
// the machine is an Error naming what did not fit instead of std::bad_alloc
// or an overflowed size. Shared by the runtimes for their host buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/error.h"
#include "core/types.h"

namespace tso::rt {

// Bytes the machine can allocate without swapping: MemAvailable from
// /proc/meminfo, or, where that is missing, the physical memory (sysconf),
// so the check below only refuses what could never fit.
int64_t available_memory_bytes();

// An Error when `bytes` (>= 0) exceed the `available` bytes of `holder`,
// e.g. "needs 40.0 TiB for the arena but the GPU has 78.2 GiB available".
Status check_fits(int64_t bytes, int64_t available, const std::string& what,
                  const std::string& holder);

// check_fits against available_memory_bytes() of "the machine", e.g.
// "needs 40.0 TiB for the arena but the machine has 21.3 GiB available".
Status check_allocation(int64_t bytes, const std::string& what);

// The sum of a plan's buffer sizes (each >= 0), each with room to be rounded
// up to `alignment`: a bound on any arena, static block or offset the plan
// places them in, so a plan that checks it first adds and aligns without
// overflow. An Error naming `what` when the sum overflows int64. (Each
// tensor fits on its own: the graph checker saw to that; several may not.)
Expected<int64_t> checked_total(std::span<const int64_t> sizes, int64_t alignment,
                                const std::string& what);

// Host buffers aligned for vector loads or pages, freed with std::free.
struct FreeAligned {
  void operator()(void* p) const;
};
template <class T>
using AlignedBuffer = std::unique_ptr<T[], FreeAligned>;
// `bytes` (at least 1) rounded up to `alignment` (a power of two), aligned
// at it, not initialized; null when out of memory.
void* aligned_allocation(int64_t bytes, int64_t alignment);
template <class T = std::byte>
AlignedBuffer<T> aligned_buffer(int64_t bytes, int64_t alignment = 64) {
  return AlignedBuffer<T>(static_cast<T*>(aligned_allocation(bytes, alignment)));
}

// `bytes` for people: "512 B", "1.5 KiB", "21.3 GiB".
std::string format_bytes(int64_t bytes);

}  // namespace tso::rt
