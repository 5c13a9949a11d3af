// Winograd convolution for 3x3, stride 1, dilation 1, ungrouped convolutions
// on NHWC f32 tensors: F(m x m, 3x3) with output tiles of m = 2 or 4. oneDNN
// 3.2 has no Winograd kernel on AVX2, and its direct kernels already run near
// the machine's peak, so doing fewer multiplies is the only way to go faster.
//
// A run has three phases:
//   1. input transform: each (m+2)x(m+2) input patch, vectorized over channels,
//      into V[xi][tile][c] (xi = one of the (m+2)^2 transform points);
//   2. (m+2)^2 GEMMs M[xi] = V[xi] x U[xi] ([tiles, C] x [C, K]) with the
//      weights U transformed once, at plan time;
//   3. output transform of M into m x m output tiles, with the conv's fused
//      epilogue applied to each element as it is written.
// By default (WinogradSchedule::kFused) each thread of the caller's OpenMP
// team runs all three on a block of tiles (and a chunk of output channels
// where tiles are few) while it stays in L2, with an own 6x16 AVX2 GEMM
// kernel; kBatchedMatmul runs each phase over all tiles, the GEMMs as one
// batched oneDNN matmul. The batch is folded into the tiles.
//
// Accuracy against a direct fp32 convolution (max|a-b| / max|b|, weights
// U(+-1/sqrt(9C)), inputs N(0,1), C = 512): about 1e-6 for m = 2, 2e-5 for
// m = 4 (winograd_test asserts 1e-4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <span>
#include <string>

#include "runtime/cpu/epilogue.h"

namespace tso::cpu {

struct WinogradShape {
  int64_t n, c, h, w, k, pad_top, pad_left, pad_bottom, pad_right;
  int64_t oh() const { return h + pad_top + pad_bottom - 2; }
  int64_t ow() const { return w + pad_left + pad_right - 2; }
};

// How a run is scheduled. kFused: blocks of tiles, each transformed,
// multiplied by an own AVX2 GEMM kernel and transformed back by one thread
// while in L2. kBatchedMatmul: the three phases one after the other over all
// tiles, the GEMMs as one batched oneDNN matmul (better with few tiles: its
// GEMMs are parallel over the transform points). kAuto: fused.
enum class WinogradSchedule { kAuto, kFused, kBatchedMatmul };

class WinogradConv {
 public:
  // Shapes it handles: positive sizes, pads >= 0, an output of at least 1x1.
  static bool supports(const WinogradShape& s);
  // `tile` is the output tile m: 4 (F(4x4,3x3), 4x fewer multiplies than
  // direct) or 2 (F(2x2,3x3), 2.25x, smaller transformed weights: better where
  // the GEMMs are bound by reading weights, e.g. 8x8 images with many
  // channels). Reads omp_get_max_threads(): run() uses that many threads.
  explicit WinogradConv(const WinogradShape& s, const dnnl::engine& engine, int tile = 4,
                        WinogradSchedule schedule = WinogradSchedule::kAuto);

  int tile() const { return m_; }
  // "winograd F(4x4,3x3) fused, 8 blocks of 25 tiles x 1 channel chunks": for
  // profiles.
  std::string impl_info() const;
  // Floats of the transformed weights transform_weights writes.
  int64_t weights_floats() const;
  // OIHW [k, c, 3, 3] weights into the layout run() reads; once, at plan time.
  void transform_weights(const float* oihw, float* out) const;
  // Bytes of per-run workspace (transformed input and output tiles, GEMM
  // scratchpad; fused: one share per thread). Any alignment works; 64 bytes is
  // best.
  int64_t scratch_bytes() const;
  // src NHWC [n, h, w, c], dst NHWC [n, oh, ow, k] (dense), weights from
  // transform_weights. kAddTensor data may alias dst.
  void run(const float* src, const float* weights, float* dst, std::byte* scratch,
           std::span<const EpilogueOp> epilogue, dnnl::stream& stream) const;

 private:
  template <int M>
  void run_fused(const float* src, const float* weights, float* dst, std::byte* scratch,
                 std::span<const EpilogueOp> epilogue) const;
  template <int M>
  void run_matmul(const float* src, const float* weights, float* dst, std::byte* scratch,
                  std::span<const EpilogueOp> epilogue, dnnl::stream& stream) const;

  WinogradShape s_;
  dnnl::engine engine_;
  int m_, alpha_;            // output tile, input tile = m + 2
  int64_t th_, tw_, tiles_;  // tile rows and columns per image; n * th * tw
  int64_t cp_, kp_;          // C and K rounded up to 8 (the vector width)
  int64_t ks_;               // row stride of the GEMM output: kp, or K rounded up to 16
  int threads_;
  bool fused_;
  int64_t blocks_, block_;           // blocks of tiles, tiles per block (fused)
  int64_t kchunks_, kchunk_;         // chunks of output channels, channels per chunk (fused)
  int64_t v_bytes_, m_bytes_;        // per thread (fused) or in all (matmul)
  dnnl::matmul::primitive_desc pd_;  // matmul only
  dnnl::matmul matmul_;
};

}  // namespace tso::cpu
