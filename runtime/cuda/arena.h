// The device memory arena: one allocation holds every intermediate tensor,
// placed by lifetime so that tensors that are never alive at the same time
// share bytes. Plain C++; the executor allocates `peak_bytes` once.
#pragma once

#include <cstdint>
#include <vector>

namespace tso::cuda {

// Offsets are multiples of this (cuDNN and cuBLASLt want 256-byte aligned
// operands for their fastest paths).
constexpr int64_t kArenaAlignment = 256;

// A buffer alive from step `first` to step `last` inclusive.
struct Lifetime {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct ArenaLayout {
  std::vector<int64_t> offsets;  // one per Lifetime, aligned
  int64_t peak_bytes = 0;        // the arena's size
  int64_t total_bytes = 0;       // sum of aligned sizes: the arena without reuse
};

// Places the buffers: largest first, each at the lowest aligned offset that
// overlaps no already placed buffer whose lifetime intersects its own. No two
// buffers alive at one step share a byte.
ArenaLayout plan_arena(const std::vector<Lifetime>& buffers);

}  // namespace tso::cuda
