// Products of one row by constant weights: x [1, K] times W [K, N], as a
// recurrent cell multiplies its input and state at batch 1 (NasRNN: 80 of
// them by 512x512 weights, 84 MB a run). Such a product does 2 flops per
// weight it reads, so it runs at the speed weights stream from memory.
// oneDNN's inner product and matmul streamed NasRNN's weights at 22 to 30
// GB/s on the AMD EPYC, where two threads read memory at 40 to 44; this
// kernel, its weights packed once into panels of 64 columns that each
// thread reads front to back, at 30 to 38 GB/s (runtime/cpu/README.md).
// Plain buffers, parallel over the calling OpenMP team. Internal to
// runtime/cpu; needs AVX2 and FMA.
#pragma once

#include <cstdint>

namespace tso::cpu {

constexpr int64_t kRowPanel = 64;  // columns per panel: 8 AVX2 accumulators

// Floats the packed weights of a K x N product take (N rounded up to panels).
int64_t row_panel_floats(int64_t k, int64_t n);

// Packs W, row-major [K, N] (or [N, K] when `transposed`, as gemm's transB
// stores it), into panels: panel p holds columns [64p, 64p + 64) as K rows of
// 64 floats, zeros past column N.
void pack_row_panels(const float* w, int64_t k, int64_t n, bool transposed, float* packed);

// y[0, n) = x[0, k) times the packed W.
void row_product(const float* x, const float* packed, int64_t k, int64_t n, float* y);

}  // namespace tso::cpu
