#include "runtime/cpu/row_product.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace tso::cpu {

int64_t row_panel_floats(int64_t k, int64_t n) {
  return (n + kRowPanel - 1) / kRowPanel * kRowPanel * k;
}

void pack_row_panels(const float* w, int64_t k, int64_t n, bool transposed, float* packed) {
  const int64_t panels = (n + kRowPanel - 1) / kRowPanel;
#pragma omp parallel for schedule(static) if (k * n > 65536)
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = packed + p * k * kRowPanel;
    const int64_t c0 = p * kRowPanel, width = std::min(kRowPanel, n - c0);
    for (int64_t i = 0; i < k; ++i) {
      float* row = dst + i * kRowPanel;
      for (int64_t c = 0; c < width; ++c)
        row[c] = transposed ? w[(c0 + c) * k + i] : w[i * n + c0 + c];
      std::fill(row + width, row + kRowPanel, 0.f);
    }
  }
}

void row_product(const float* x, const float* packed, int64_t k, int64_t n, float* y) {
  const int64_t panels = (n + kRowPanel - 1) / kRowPanel;
#pragma omp parallel for schedule(static) if (panels > 1)
  for (int64_t p = 0; p < panels; ++p) {
    const float* w = packed + p * k * kRowPanel;
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t i = 0; i < k; ++i, w += kRowPanel) {
      const __m256 xi = _mm256_broadcast_ss(x + i);
      for (int j = 0; j < 8; ++j) acc[j] = _mm256_fmadd_ps(xi, _mm256_loadu_ps(w + 8 * j), acc[j]);
    }
    alignas(32) float out[kRowPanel];
    for (int j = 0; j < 8; ++j) _mm256_store_ps(out + 8 * j, acc[j]);
    const int64_t c0 = p * kRowPanel;
    std::memcpy(y + c0, out, std::min(kRowPanel, n - c0) * sizeof(float));
  }
}

}  // namespace tso::cpu
