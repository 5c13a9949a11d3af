#include "runtime/cpu/winograd.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <vector>

namespace tso::cpu {

namespace {

using dnnl::memory;

constexpr int64_t kVec = 8;
int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Lavin & Gray's transforms. Each 1-D transform maps a line of alpha = m + 2
// values; the 2-D one applies it to columns, then rows.
//   F(2x2,3x3): B^T rows (1,0,-1,0) (0,1,1,0) (0,-1,1,0) (0,1,0,-1);
//               A^T rows (1,1,1,0) (0,1,-1,-1).
//   F(4x4,3x3): B^T rows (4,0,-5,0,1,0) (0,-4,-4,1,1,0) (0,4,-4,-1,1,0)
//               (0,-2,-1,2,1,0) (0,2,-1,-2,1,0) (0,4,0,-5,0,1);
//               A^T rows (1,1,1,1,1,0) (0,1,-1,2,-2,0) (0,1,1,4,4,0)
//               (0,1,-1,8,-8,1).
v8 fma(float a, v8 x, v8 y) { return _mm256_fmadd_ps(_mm256_set1_ps(a), x, y); }    // a x + y
v8 fnma(float a, v8 x, v8 y) { return _mm256_fnmadd_ps(_mm256_set1_ps(a), x, y); }  // y - a x

template <int M>
struct Transform;

template <>
struct Transform<2> {
  static constexpr double kG[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
  template <class T>
  static void input(const T* d, int ds, T* t, int ts) {
    t[0] = d[0] - d[2 * ds];
    t[ts] = d[ds] + d[2 * ds];
    t[2 * ts] = d[2 * ds] - d[ds];
    t[3 * ts] = d[ds] - d[3 * ds];
  }
  template <class T>
  static void output(const T* d, int ds, T* t, int ts) {
    t[0] = d[0] + d[ds] + d[2 * ds];
    t[ts] = d[ds] - d[2 * ds] - d[3 * ds];
  }
};

template <>
struct Transform<4> {
  static constexpr double kG[6][3] = {{1. / 4, 0, 0},
                                      {-1. / 6, -1. / 6, -1. / 6},
                                      {-1. / 6, 1. / 6, -1. / 6},
                                      {1. / 24, 1. / 12, 1. / 6},
                                      {1. / 24, -1. / 12, 1. / 6},
                                      {0, 0, 1}};
  // With explicit FMAs: the build is ISO C++, where GCC contracts none.
  static void input(const v8* d, int ds, v8* t, int ts) {
    const v8 d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    const v8 a = fnma(4, d2, d4), b = fnma(4, d1, d3);  // shared by rows 1 and 2
    const v8 c = d4 - d2, e = d3 - d1;                  // shared by rows 3 and 4
    t[0] = fma(4, d0, fnma(5, d2, d4));
    t[ts] = a + b;
    t[2 * ts] = a - b;
    t[3 * ts] = fma(2, e, c);
    t[4 * ts] = fnma(2, e, c);
    t[5 * ts] = fma(4, d1, fnma(5, d3, d5));
  }
  static void output(const v8* d, int ds, v8* t, int ts) {
    const v8 p = d[ds] + d[2 * ds], q = d[ds] - d[2 * ds];
    const v8 r = d[3 * ds] + d[4 * ds], u = d[3 * ds] - d[4 * ds];
    t[0] = d[0] + p + r;
    t[ts] = fma(2, u, q);
    t[2 * ts] = fma(4, r, p);
    t[3 * ts] = fma(8, u, q + d[5 * ds]);
  }
};

__m256i tail_mask(int64_t lanes) {
  alignas(32) static const int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + 8 - lanes));
}

// Tile indexing shared by both schedules. cp, kp: C and K rounded up to the
// vector width; ks: the row stride of the GEMM output (kp, or K rounded up to
// the micro-kernel's 16 columns).
struct Tiling {
  WinogradShape s;
  int64_t th, tw, cp, kp, ks;
};

// An (m+2)x(m+2) patch wholly inside the image, C a multiple of 8.
template <int M>
void input_inner(const float* patch, int64_t row_stride, int64_t cs, float* out, int64_t plane) {
  constexpr int A = M + 2;
  for (int64_t c = 0; c < cs; c += kVec) {
    v8 d[A][A], t[A][A];
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) d[i][j] = _mm256_loadu_ps(patch + i * row_stride + j * cs + c);
    for (int j = 0; j < A; ++j) Transform<M>::input(&d[0][j], A, &t[0][j], A);
    for (int i = 0; i < A; ++i) Transform<M>::input(&t[i][0], 1, &d[i][0], 1);
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) _mm256_storeu_ps(out + (i * A + j) * plane + c, d[i][j]);
  }
}

// The (m+2)x(m+2) patch of `tile` into out[xi * plane + c]; pixels outside the
// image read as zero (padding and the far side of partial tiles), as do
// channels past C.
template <int M>
void input_tile(const Tiling& g, int64_t tile, const float* src, float* out, int64_t plane) {
  constexpr int A = M + 2;
  const WinogradShape& s = g.s;
  const int64_t b = tile / (g.th * g.tw), ty = tile / g.tw % g.th, tx = tile % g.tw;
  const int64_t y0 = ty * M - s.pad_top, x0 = tx * M - s.pad_left;
  const float* img = src + b * s.h * s.w * s.c;
  // The rows [i0, i1) and columns [j0, j1) of the patch inside the image.
  const int i0 = int(std::max<int64_t>(0, -y0)), i1 = int(std::clamp<int64_t>(s.h - y0, 0, A));
  const int j0 = int(std::max<int64_t>(0, -x0)), j1 = int(std::clamp<int64_t>(s.w - x0, 0, A));
  if (i0 == 0 && i1 == A && j0 == 0 && j1 == A && s.c % kVec == 0) {
    input_inner<M>(img + (y0 * s.w + x0) * s.c, s.w * s.c, s.c, out, plane);
    return;
  }
  for (int64_t c = 0; c < g.cp; c += kVec) {
    const bool full = c + kVec <= s.c;
    const __m256i mask = tail_mask(std::min<int64_t>(kVec, s.c - c));
    v8 d[A][A], t[A][A];
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) {
        if (i < i0 || i >= i1 || j < j0 || j >= j1) {
          d[i][j] = _mm256_setzero_ps();
        } else {
          const float* p = img + ((y0 + i) * s.w + x0 + j) * s.c + c;
          d[i][j] = full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
        }
      }
    for (int j = 0; j < A; ++j) Transform<M>::input(&d[0][j], A, &t[0][j], A);
    for (int i = 0; i < A; ++i) Transform<M>::input(&t[i][0], 1, &d[i][0], 1);
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) _mm256_storeu_ps(out + (i * A + j) * plane + c, d[i][j]);
  }
}

// in[xi * plane + k - k0] (the GEMM outputs of `tile`, channels [k0, k1))
// into its m x m output tile, clipped at the image's edges, through the
// epilogue.
template <int M>
void output_tile(const Tiling& g, int64_t tile, int64_t k0, int64_t k1, const float* in,
                 int64_t plane, float* dst, std::span<const EpilogueOp> epilogue) {
  constexpr int A = M + 2;
  const WinogradShape& s = g.s;
  const int64_t oh = s.oh(), ow = s.ow();
  const int64_t b = tile / (g.th * g.tw), ty = tile / g.tw % g.th, tx = tile % g.tw;
  const int rows = int(std::min<int64_t>(M, oh - ty * M));
  const int cols = int(std::min<int64_t>(M, ow - tx * M));
  const int64_t origin = ((b * oh + ty * M) * ow + tx * M) * s.k;  // the tile's first pixel
  for (int64_t k = k0; k < k1; k += kVec) {
    const bool full = k + kVec <= s.k;
    const __m256i mask = tail_mask(std::min<int64_t>(kVec, s.k - k));
    v8 d[A][A], t[M][A], o[M][M];
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) d[i][j] = _mm256_loadu_ps(in + (i * A + j) * plane + k - k0);
    for (int j = 0; j < A; ++j) Transform<M>::output(&d[0][j], A, &t[0][j], A);
    for (int i = 0; i < M; ++i) Transform<M>::output(&t[i][0], 1, &o[i][0], 1);
    if (full && rows == M && cols == M) {  // constant bounds keep o[][] in registers
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j) {
          const int64_t at = origin + (i * ow + j) * s.k + k;
          _mm256_storeu_ps(dst + at, apply_epilogue(o[i][j], epilogue, k, at, full, mask));
        }
      continue;
    }
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        const int64_t at = origin + (i * ow + j) * s.k + k;
        const v8 x = apply_epilogue(o[i][j], epilogue, k, at, full, mask);
        if (full)
          _mm256_storeu_ps(dst + at, x);
        else
          _mm256_maskstore_ps(dst + at, mask, x);
      }
    }
  }
}

// m[r][0..16) = sum_c v[r][c] * u[c][0..16) for R rows: 2R accumulators.
template <int R>
void gemm_rows(const float* v, int64_t vs, const float* u, int64_t cp, float* m, int64_t ms) {
  v8 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int64_t c = 0; c < cp; ++c) {
    const v8 u0 = _mm256_loadu_ps(u + c * 16), u1 = _mm256_loadu_ps(u + c * 16 + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const v8 x = _mm256_broadcast_ss(v + r * vs + c);
      acc[r][0] = _mm256_fmadd_ps(x, u0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, u1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(m + r * ms, acc[r][0]);
    _mm256_storeu_ps(m + r * ms + 8, acc[r][1]);
  }
}

// m[xi][r][0..cols) = v[xi][r][cp] x u[xi][n0 / 16 ..][cp][16] for `rows`
// rows: columns [n0, n0 + cols) of the packed weights, cols a multiple of 16.
void gemm_block(const float* v, const float* u, float* m, int64_t rows, int a2, int64_t cp,
                int64_t ks, int64_t n0, int64_t cols) {
  constexpr int R = 6;
  for (int xi = 0; xi < a2; ++xi) {
    const float* vx = v + xi * rows * cp;
    float* mx = m + xi * rows * cols;
    for (int64_t n = 0; n < cols; n += 16) {
      const float* un = u + (xi * ks + n0 + n) * cp;
      int64_t r = 0;
      for (; r + R <= rows; r += R) gemm_rows<R>(vx + r * cp, cp, un, cp, mx + r * cols + n, cols);
      const float* vr = vx + r * cp;
      float* mr = mx + r * cols + n;
      switch (rows - r) {
        case 1:
          gemm_rows<1>(vr, cp, un, cp, mr, cols);
          break;
        case 2:
          gemm_rows<2>(vr, cp, un, cp, mr, cols);
          break;
        case 3:
          gemm_rows<3>(vr, cp, un, cp, mr, cols);
          break;
        case 4:
          gemm_rows<4>(vr, cp, un, cp, mr, cols);
          break;
        case 5:
          gemm_rows<5>(vr, cp, un, cp, mr, cols);
          break;
      }
    }
  }
}

// Calls put(xi, c, k, U[xi][c][k]) for U[xi][c][k] = (G g[k][c] G^T)[xi],
// computed in double, on `threads` threads. A thread takes blocks of 16
// output channels and goes over every input channel with the block's 16
// channels innermost, so both weight layouts (a 64-byte row of 16 channels
// in the fused one, runs along k in the matmul one) are written a row at a
// time. Written one channel k at a time over all c, each row was written
// in 16 passes over the whole tensor: 38% of the time `tso optimize` spent
// measuring NASNet-A's signatures went to this transform.
template <int M, typename Put>
void transform_weights_into(const WinogradShape& s, const float* oihw, int threads, Put put) {
  constexpr int A = M + 2;
  const auto& g = Transform<M>::kG;
  const int64_t blocks = (s.k + 15) / 16;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t kb = 0; kb < blocks; ++kb)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t k = kb * 16; k < std::min(s.k, kb * 16 + 16); ++k) {
        const float* w = oihw + (k * s.c + c) * 9;
        double t[A][3];  // G w
        for (int a = 0; a < A; ++a)
          for (int j = 0; j < 3; ++j)
            t[a][j] = g[a][0] * w[j] + g[a][1] * w[3 + j] + g[a][2] * w[6 + j];
        for (int a = 0; a < A; ++a)
          for (int b = 0; b < A; ++b)
            put(a * A + b, c, k, float(t[a][0] * g[b][0] + t[a][1] * g[b][1] + t[a][2] * g[b][2]));
      }
}

int64_t align64(int64_t bytes) { return round_up(bytes, 64); }

// Tiles per block of the fused schedule: the block's transformed input and
// GEMM output about fill a 512 KiB L2 (measured: 384 KiB and 768 KiB are
// each slower on some of the benchmark shapes), but at least 24 tiles, as
// each block streams all the weights it multiplies by.
constexpr int64_t kBlockBytes = 512 << 10;
constexpr int64_t kMinBlock = 24, kMaxBlock = 96;

}  // namespace

bool WinogradConv::supports(const WinogradShape& s) {
  return s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.k > 0 && s.pad_top >= 0 && s.pad_left >= 0 &&
         s.pad_bottom >= 0 && s.pad_right >= 0 && s.oh() > 0 && s.ow() > 0;
}

WinogradConv::WinogradConv(const WinogradShape& s, const dnnl::engine& engine, int tile,
                           WinogradSchedule schedule)
    : s_(s), engine_(engine), m_(tile), alpha_(tile + 2) {
  if (!supports(s) || (m_ != 2 && m_ != 4))
    throw dnnl::error(dnnl_invalid_arguments, "WinogradConv: unsupported shape or tile");
  th_ = (s.oh() + m_ - 1) / m_;
  tw_ = (s.ow() + m_ - 1) / m_;
  tiles_ = s.n * th_ * tw_;
  cp_ = round_up(s.c, kVec);
  kp_ = round_up(s.k, kVec);
  threads_ = omp_get_max_threads();
  const int64_t a2 = int64_t(alpha_) * alpha_;
  // Fused: work items of (block of tiles, chunk of output channels), each
  // transformed, multiplied and transformed back by one thread while in L2.
  // With few blocks, the output channels are split among the threads so that
  // each streams only its share of the weights.
  const int64_t ks16 = round_up(s.k, 16);
  const int64_t most = std::clamp(kBlockBytes / (a2 * 4 * (cp_ + ks16)), kMinBlock, kMaxBlock);
  blocks_ = (tiles_ + most - 1) / most;
  // Few blocks: as many per thread, but not so small that the weights they
  // stream are used by fewer than 12 rows.
  if (blocks_ < 4 * threads_) blocks_ = round_up(blocks_, threads_);
  block_ = (tiles_ + blocks_ - 1) / blocks_;
  kchunk_ = ks16;
  if (block_ < 12) {
    blocks_ = (tiles_ + most - 1) / most;
    block_ = (tiles_ + blocks_ - 1) / blocks_;
    kchunk_ = round_up((ks16 + threads_ - 1) / threads_, 16);
  }
  blocks_ = (tiles_ + block_ - 1) / block_;
  kchunks_ = (ks16 + kchunk_ - 1) / kchunk_;
  fused_ = schedule != WinogradSchedule::kBatchedMatmul;
  if (fused_) {
    ks_ = ks16;
    v_bytes_ = align64(a2 * block_ * cp_ * 4);
    m_bytes_ = align64(a2 * block_ * kchunk_ * 4);
    return;
  }
  ks_ = kp_;
  v_bytes_ = align64(a2 * tiles_ * cp_ * 4);
  m_bytes_ = align64(a2 * tiles_ * kp_ * 4);
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  memory::desc src({a2, tiles_, cp_}, f32, tag::abc);
  memory::desc wei({a2, cp_, kp_}, f32, tag::any);
  memory::desc dst({a2, tiles_, kp_}, f32, tag::abc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  pd_ = dnnl::matmul::primitive_desc(engine, src, wei, dst, attr);
  matmul_ = dnnl::matmul(pd_);
}

std::string WinogradConv::impl_info() const {
  const std::string m = std::to_string(m_);
  return "winograd F(" + m + "x" + m + ",3x3) " +
         (fused_ ? "fused, " + std::to_string(blocks_) + " blocks of " + std::to_string(block_) +
                       " tiles x " + std::to_string(kchunks_) + " channel chunks"
                 : "batched matmul " + std::string(pd_.impl_info_str()));
}

int64_t WinogradConv::weights_floats() const {
  const int64_t a2 = int64_t(alpha_) * alpha_;
  if (fused_) return a2 * cp_ * ks_;
  return int64_t(pd_.weights_desc().get_size() / sizeof(float));
}

void WinogradConv::transform_weights(const float* oihw, float* out) const {
  const int64_t a2 = int64_t(alpha_) * alpha_;
  // Padded to [a2][cp][ks] (matmul) or packed to [a2][ks / 16][cp][16] (fused).
  std::vector<float> padded;
  float* to = out;
  memory::desc plain({a2, cp_, kp_}, memory::data_type::f32, memory::format_tag::abc);
  const bool reorder = !fused_ && plain != pd_.weights_desc();
  if (reorder) {
    padded.resize(size_t(a2 * cp_ * kp_));
    to = padded.data();
  }
  std::fill(to, to + a2 * cp_ * ks_, 0.f);
  const int64_t cp = cp_, ks = ks_;
  const bool fused = fused_;
  auto put = [=](int64_t xi, int64_t c, int64_t k, float x) {
    if (fused)
      to[((xi * ks + k / 16 * 16) * cp + c * 16) + k % 16] = x;
    else
      to[(xi * cp + c) * ks + k] = x;
  };
  if (m_ == 2)
    transform_weights_into<2>(s_, oihw, threads_, put);
  else
    transform_weights_into<4>(s_, oihw, threads_, put);
  if (!reorder) return;
  memory from(plain, engine_, padded.data()), into(pd_.weights_desc(), engine_, out);
  dnnl::stream stream(engine_);
  dnnl::reorder(from, into).execute(stream, from, into);
  stream.wait();
}

int64_t WinogradConv::scratch_bytes() const {
  if (fused_) return threads_ * (v_bytes_ + m_bytes_);
  return v_bytes_ + m_bytes_ + align64(int64_t(pd_.scratchpad_desc().get_size()));
}

template <int M>
void WinogradConv::run_fused(const float* src, const float* weights, float* dst, std::byte* scratch,
                             std::span<const EpilogueOp> epilogue) const {
  const Tiling g{s_, th_, tw_, cp_, kp_, ks_};
  const int a2 = alpha_ * alpha_;
#pragma omp parallel num_threads(threads_)
  {
    std::byte* mine = scratch + omp_get_thread_num() * (v_bytes_ + m_bytes_);
    float* v = reinterpret_cast<float*>(mine);
    float* mm = reinterpret_cast<float*>(mine + v_bytes_);
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < blocks_ * kchunks_; ++item) {
      const int64_t blk = item / kchunks_, n0 = item % kchunks_ * kchunk_;
      const int64_t cols = std::min(kchunk_, ks_ - n0);
      const int64_t first = blk * block_, rows = std::min(block_, tiles_ - first);
      for (int64_t r = 0; r < rows; ++r) input_tile<M>(g, first + r, src, v + r * cp_, rows * cp_);
      gemm_block(v, weights, mm, rows, a2, cp_, ks_, n0, cols);
      const int64_t k1 = std::min(n0 + cols, kp_);
      for (int64_t r = 0; r < rows; ++r)
        output_tile<M>(g, first + r, n0, k1, mm + r * cols, rows * cols, dst, epilogue);
    }
  }
}

template <int M>
void WinogradConv::run_matmul(const float* src, const float* weights, float* dst,
                              std::byte* scratch, std::span<const EpilogueOp> epilogue,
                              dnnl::stream& stream) const {
  const Tiling g{s_, th_, tw_, cp_, kp_, ks_};
  float* v = reinterpret_cast<float*>(scratch);
  float* mm = reinterpret_cast<float*>(scratch + v_bytes_);
  std::byte* pad = scratch + v_bytes_ + m_bytes_;
#pragma omp parallel for schedule(static)
  for (int64_t tile = 0; tile < tiles_; ++tile)
    input_tile<M>(g, tile, src, v + tile * cp_, tiles_ * cp_);
  memory vm(pd_.src_desc(), engine_, v),
      wm(pd_.weights_desc(), engine_, const_cast<float*>(weights)), dm(pd_.dst_desc(), engine_, mm),
      sm(pd_.scratchpad_desc(), engine_, pad);
  matmul_.execute(
      stream,
      {{DNNL_ARG_SRC, vm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dm}, {DNNL_ARG_SCRATCHPAD, sm}});
  stream.wait();
#pragma omp parallel for schedule(static)
  for (int64_t tile = 0; tile < tiles_; ++tile)
    output_tile<M>(g, tile, 0, kp_, mm + tile * kp_, tiles_ * kp_, dst, epilogue);
}

void WinogradConv::run(const float* src, const float* weights, float* dst, std::byte* scratch,
                       std::span<const EpilogueOp> epilogue, dnnl::stream& stream) const {
  if (fused_ && m_ == 2) run_fused<2>(src, weights, dst, scratch, epilogue);
  if (fused_ && m_ == 4) run_fused<4>(src, weights, dst, scratch, epilogue);
  if (!fused_ && m_ == 2) run_matmul<2>(src, weights, dst, scratch, epilogue, stream);
  if (!fused_ && m_ == 4) run_matmul<4>(src, weights, dst, scratch, epilogue, stream);
}

}  // namespace tso::cpu
