// The kernel of grouped_conv.h. This file is compiled for AVX-512 F, BW, DQ
// and VL (CMakeLists.txt); lower_grouped.cc runs it only where the CPU has
// them (avx512_kernels_run).
#include <immintrin.h>

#include "runtime/cpu/grouped_conv.h"

namespace tso::cpu {

namespace {

// Output pixels ow0 .. ow0 + P - 1 of output row `oh`, output channels
// [16 v, 16 v + 16), of image `img`, stored at `out` (the row's first
// pixel), without the epilogue. Only a block with kEdge checks that its
// taps fall inside the row: dimensions known only at run time cost the
// unchecked blocks nothing (ResNeXt's 56x56 groups of 4: 0.20 ms checked,
// 0.13 split so).
template <int G, int S, int P, bool kEdge>
inline void block(const GroupedShape& s, const float* img, const float* w, float* out, int64_t oh,
                  int64_t ow0, int64_t v, const __m512i* lanes) {
  const int64_t c = s.c;
  __m512 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  const int64_t iw0 = ow0 * S - s.pad_left;
  for (int kh = 0; kh < 3; ++kh) {
    const int64_t ih = oh * S - s.pad_top + kh;
    if (ih < 0 || ih >= s.h) continue;
    const float* x0 = img + (ih * s.w + iw0) * c + 16 * v;
    const float* wk = w + (v * 9 + kh * 3) * G * 16;
#pragma GCC unroll 16
    for (int d = 0; d < (P - 1) * S + 3; ++d) {
      if (kEdge && (iw0 + d < 0 || iw0 + d >= s.w)) continue;
      const __m512 x = _mm512_loadu_ps(x0 + d * c);
#pragma GCC unroll 16
      for (int j = 0; j < G; ++j) {
        const __m512 xj = _mm512_permutexvar_ps(lanes[j], x);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
          const int kw = d - p * S;
          if (kw < 0 || kw > 2) continue;
          acc[p] = _mm512_fmadd_ps(_mm512_loadu_ps(wk + (kw * G + j) * 16), xj, acc[p]);
        }
      }
    }
  }
  for (int p = 0; p < P; ++p) _mm512_storeu_ps(out + (ow0 + p) * c + 16 * v, acc[p]);
}

// `epilogue` (epilogue.h) on output channels [16 v, 16 v + 16) of the row
// of output pixels at `out` (offset `at` in the whole output), one step at a
// time over the row while it is in the first-level cache: applied per
// output vector, their loop and switch took a quarter of the kernel.
void apply_epilogue_row(const GroupedShape& s, float* out, int64_t at, int64_t v,
                        std::span<const EpilogueOp> epilogue) {
  const __m256i all = _mm256_set1_epi32(-1);
  const int64_t k = 16 * v;
  for (size_t i = 0; i < epilogue.size(); ++i)
    for (int64_t p = 0; p < s.ow; ++p)
      for (int64_t h = 0; h < 16; h += 8) {
        float* o = out + p * s.c + k + h;
        _mm256_storeu_ps(o, apply_epilogue(_mm256_loadu_ps(o), epilogue.subspan(i, 1), k + h,
                                           at + p * s.c + k + h, true, all));
      }
}

template <int G, int S>
void run(const GroupedShape& s, const float* src, const float* w, float* dst,
         std::span<const EpilogueOp> epilogue) {
  // Lane l of permute j takes input lane (l / G) * G + j: channel j of the
  // group that output lane l belongs to.
  __m512i lanes[G];
  for (int j = 0; j < G; ++j) {
    alignas(64) int32_t idx[16];
    for (int l = 0; l < 16; ++l) idx[l] = l / G * G + j;
    lanes[j] = _mm512_load_si512(idx);
  }
  const int64_t vectors = s.c / 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t r = 0; r < s.n * s.oh; ++r)
    for (int64_t v = 0; v < vectors; ++v) {
      const int64_t b = r / s.oh, oh = r % s.oh;
      const float* img = src + b * s.h * s.w * s.c;
      const int64_t at = r * s.ow * s.c;
      // Blocks whose taps all fall inside the row run without checks.
      int64_t ow0 = 0;
      for (; ow0 < s.ow && ow0 * S - s.pad_left < 0; ++ow0)
        block<G, S, 1, true>(s, img, w, dst + at, oh, ow0, v, lanes);
      for (; ow0 + 4 <= s.ow && (ow0 + 3) * S - s.pad_left + 2 < s.w; ow0 += 4)
        block<G, S, 4, false>(s, img, w, dst + at, oh, ow0, v, lanes);
      for (; ow0 < s.ow; ++ow0) block<G, S, 1, true>(s, img, w, dst + at, oh, ow0, v, lanes);
      apply_epilogue_row(s, dst + at, at, v, epilogue);
    }
}

}  // namespace

void grouped_conv_weights(const GroupedShape& s, const float* oihw, float* out) {
  const int64_t g = s.group_channels;
  for (int64_t k = 0; k < s.c; ++k)
    for (int64_t j = 0; j < g; ++j)
      for (int64_t t = 0; t < 9; ++t)
        out[((k / 16 * 9 + t) * g + j) * 16 + k % 16] = oihw[(k * g + j) * 9 + t];
}

void grouped_conv(const GroupedShape& s, const float* src, const float* weights, float* dst,
                  std::span<const EpilogueOp> epilogue) {
  const bool two = s.stride == 2;
  switch (s.group_channels) {
    case 4:
      return two ? run<4, 2>(s, src, weights, dst, epilogue)
                 : run<4, 1>(s, src, weights, dst, epilogue);
    case 8:
      return two ? run<8, 2>(s, src, weights, dst, epilogue)
                 : run<8, 1>(s, src, weights, dst, epilogue);
    default:
      return two ? run<16, 2>(s, src, weights, dst, epilogue)
                 : run<16, 1>(s, src, weights, dst, epilogue);
  }
}

}  // namespace tso::cpu
