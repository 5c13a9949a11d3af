// The memory arena of a runtime: one allocation holds every intermediate
// tensor, placed by lifetime so that tensors that are never alive at the
// same time share bytes. The executor allocates `peak_bytes` once. Shared by
// runtime/cuda (device memory, 256-byte aligned) and runtime/cpu (host
// memory, cache-line aligned).
#pragma once

#include <cstdint>
#include <vector>

namespace tso::rt {

// The default alignment: a cache line.
constexpr int64_t kDefaultArenaAlignment = 64;

// A buffer alive from step `first` to step `last` inclusive.
struct Lifetime {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct ArenaLayout {
  std::vector<int64_t> offsets;  // one per Lifetime, multiples of the alignment
  int64_t peak_bytes = 0;        // the arena's size
  int64_t total_bytes = 0;       // sum of aligned sizes: the arena without reuse
};

// `n` rounded up to a multiple of `alignment` (a positive number).
int64_t align_up(int64_t n, int64_t alignment);

// Places the buffers: largest first, each at the lowest offset, a multiple of
// `alignment`, that overlaps no already placed buffer whose lifetime
// intersects its own. No two buffers alive at one step share a byte. Each
// buffer occupies its size rounded up to `alignment`.
ArenaLayout plan_arena(const std::vector<Lifetime>& buffers,
                       int64_t alignment = kDefaultArenaAlignment);

}  // namespace tso::rt
