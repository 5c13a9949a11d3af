// Timing an operator as it runs in a model whose weights stay in the
// last-level cache between runs (cpu::measure_weight_residency decides which
// models those are): its weights out of L1 and L2, as the rest of the model
// leaves them, but not out of the last-level cache. Chains of 1 MB products
// ran 24 us a product while their 20 to 100 MB of weights stayed cached and
// 44 to 51 us with 400 MB, against 34.8 us timed alone with the weights
// flushed from every level (runtime/cpu/README.md).
#pragma once

#include <cstdint>

namespace tso::cpu {

// Writes back and evicts `bytes` from `p` on from every cache level. The
// flushes are not ordered against later loads: a caller that times what
// follows fences once after its flushes (_mm_mfence).
void flush_from_caches(const void* p, int64_t bytes);

// Each of `threads` threads (0: all cores) reads its own scratch buffer of
// twice its core's L2, moving what an operator left in L1 and L2 out but
// leaving the last-level cache's contents in place.
void evict_private_caches(int threads);

}  // namespace tso::cpu
