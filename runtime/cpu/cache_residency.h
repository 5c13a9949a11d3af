// Whether a model's weights stay in the last-level cache between runs, and
// how to time an operator as it runs then.
//
// Inside a model, the rest of the model passes through the caches between
// two runs of one operator. Its weights then come from memory when the
// model's weights outgrow the last-level cache, and from that cache when
// they fit: chains of 1 MB products ran 24 us a product up to 100 MB of
// weights and 44 to 51 us at 400 MB, against 34.8 us timed alone and cold
// (runtime/cpu/README.md). How much of the cache a process gets depends on
// the host's other tenants and changes within the hour (the same chains of
// 80 products: 1.79 ms, then 4.46 ms 40 minutes later), so the capacity is
// measured when a model is optimized, not assumed.
#pragma once

#include <cstdint>

namespace tso::cpu {

// The largest cyclic read, in bytes, that `threads` threads (0: all cores)
// read at least 60% as fast as an 8 MB one, tried at sizes from 8 to 256 MB:
// what the last-level cache holds of a model's weights now. About 0.3 s.
int64_t cached_capacity_bytes(int threads);

// Whether weights of `weight_bytes` stay cached between runs of a model,
// given `capacity` (cached_capacity_bytes): up to three quarters of it, the
// rest left to activations and the other tenants' churn.
bool weights_stay_cached(int64_t weight_bytes, int64_t capacity);

// Each of `threads` threads (0: all cores) reads its own scratch buffer of
// twice its core's L2, moving what the operator left in L1 and L2 out but
// leaving the last-level cache's weights in place: the state a model whose
// weights stay cached leaves each operator in.
void evict_private_caches(int threads);

}  // namespace tso::cpu
