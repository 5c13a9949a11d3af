#include "runtime/cpu/winograd.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace tso::cpu {

namespace {

using dnnl::memory;
using v8 = __m256;  // 8 channels; GCC's vector operators work on it

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
  template <class T>
  static void input(const T* d, int ds, T* t, int ts) {
    T d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    T a = d4 - 4.f * d2, b = d3 - 4.f * d1;  // shared by rows 1 and 2
    T c = d4 - d2, e = 2.f * (d3 - d1);      // shared by rows 3 and 4
    t[0] = 4.f * d0 - 5.f * d2 + d4;
    t[ts] = a + b;
    t[2 * ts] = a - b;
    t[3 * ts] = c + e;
    t[4 * ts] = c - e;
    t[5 * ts] = 4.f * d1 - 5.f * d3 + d5;
  }
  template <class T>
  static void output(const T* d, int ds, T* t, int ts) {
    T p = d[ds] + d[2 * ds], q = d[ds] - d[2 * ds];
    T r = d[3 * ds] + d[4 * ds], u = d[3 * ds] - d[4 * ds];
    t[0] = d[0] + p + r;
    t[ts] = q + 2.f * u;
    t[2 * ts] = p + 4.f * r;
    t[3 * ts] = q + 8.f * u + d[5 * ds];
  }
};

__m256i tail_mask(int64_t lanes) {
  alignas(32) static const int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + 8 - lanes));
}

// Input patches into V[xi][tile][cp]; pixels outside the image read as zero
// (padding and the far side of partial tiles), as do channels past C.
template <int M>
void input_transform(const WinogradShape& s, int64_t th, int64_t tw, int64_t tiles, int64_t cp,
                     const float* src, float* v) {
  constexpr int A = M + 2;
  const int64_t cblocks = cp / kVec;
  const int64_t plane = tiles * cp;
#pragma omp parallel for schedule(static)
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t b = tile / (th * tw), ty = tile / tw % th, tx = tile % tw;
    const int64_t y0 = ty * M - s.pad_top, x0 = tx * M - s.pad_left;
    const float* img = src + b * s.h * s.w * s.c;
    for (int64_t cb = 0; cb < cblocks; ++cb) {
      const int64_t c = cb * kVec;
      const bool full = c + kVec <= s.c;
      const __m256i mask = tail_mask(std::min<int64_t>(kVec, s.c - c));
      v8 d[A][A], t[A][A];
      for (int i = 0; i < A; ++i) {
        const int64_t y = y0 + i;
        for (int j = 0; j < A; ++j) {
          const int64_t x = x0 + j;
          if (y < 0 || y >= s.h || x < 0 || x >= s.w) {
            d[i][j] = _mm256_setzero_ps();
          } else {
            const float* p = img + (y * s.w + x) * s.c + c;
            d[i][j] = full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
          }
        }
      }
      for (int j = 0; j < A; ++j) Transform<M>::input(&d[0][j], A, &t[0][j], A);
      for (int i = 0; i < A; ++i) Transform<M>::input(&t[i][0], 1, &d[i][0], 1);
      float* out = v + tile * cp + c;
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) _mm256_storeu_ps(out + (i * A + j) * plane, d[i][j]);
    }
  }
}

v8 load(const float* p, bool full, __m256i mask) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

v8 apply_epilogue(v8 x, std::span<const EpilogueOp> epilogue, int64_t k, int64_t at, bool full,
                  __m256i mask) {
  for (const EpilogueOp& op : epilogue) {
    switch (op.kind) {
      case EpilogueOp::kAddChannel:
        x += load(op.data + k, full, mask);
        break;
      case EpilogueOp::kMulChannel:
        x *= load(op.data + k, full, mask);
        break;
      case EpilogueOp::kAddTensor:
        x += load(op.data + at, full, mask);
        break;
      case EpilogueOp::kRelu:
        x = _mm256_max_ps(x, _mm256_setzero_ps());
        break;
      case EpilogueOp::kClip:
        x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(op.lo)), _mm256_set1_ps(op.hi));
        break;
    }
  }
  return x;
}

// M[xi][tile][kp] into m x m output tiles, clipped at the image's edges.
template <int M>
void output_transform(const WinogradShape& s, int64_t th, int64_t tw, int64_t tiles, int64_t kp,
                      const float* mm, float* dst, std::span<const EpilogueOp> epilogue) {
  constexpr int A = M + 2;
  const int64_t kblocks = kp / kVec;
  const int64_t plane = tiles * kp;
  const int64_t oh = s.oh(), ow = s.ow();
#pragma omp parallel for schedule(static)
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t b = tile / (th * tw), ty = tile / tw % th, tx = tile % tw;
    const int rows = int(std::min<int64_t>(M, oh - ty * M));
    const int cols = int(std::min<int64_t>(M, ow - tx * M));
    for (int64_t kb = 0; kb < kblocks; ++kb) {
      const int64_t k = kb * kVec;
      const bool full = k + kVec <= s.k;
      const __m256i mask = tail_mask(std::min<int64_t>(kVec, s.k - k));
      const float* in = mm + tile * kp + k;
      v8 d[A][A], t[M][A], o[M][M];
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) d[i][j] = _mm256_loadu_ps(in + (i * A + j) * plane);
      for (int j = 0; j < A; ++j) Transform<M>::output(&d[0][j], A, &t[0][j], A);
      for (int i = 0; i < M; ++i) Transform<M>::output(&t[i][0], 1, &o[i][0], 1);
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
          const int64_t at = ((b * oh + ty * M + i) * ow + tx * M + j) * s.k + k;
          const v8 x = apply_epilogue(o[i][j], epilogue, k, at, full, mask);
          if (full)
            _mm256_storeu_ps(dst + at, x);
          else
            _mm256_maskstore_ps(dst + at, mask, x);
        }
      }
    }
  }
}

// U[xi][c][k] = (G g[k][c] G^T)[xi] in double, zero past C and K.
template <int M>
void transform_weights_plain(const WinogradShape& s, int64_t cp, int64_t kp, const float* oihw,
                             float* u) {
  constexpr int A = M + 2;
  const auto& g = Transform<M>::kG;
  std::fill(u, u + A * A * cp * kp, 0.f);
  for (int64_t k = 0; k < s.k; ++k) {
    for (int64_t c = 0; c < s.c; ++c) {
      const float* w = oihw + (k * s.c + c) * 9;
      double t[A][3];  // G w
      for (int a = 0; a < A; ++a)
        for (int j = 0; j < 3; ++j)
          t[a][j] = g[a][0] * w[j] + g[a][1] * w[3 + j] + g[a][2] * w[6 + j];
      for (int a = 0; a < A; ++a)
        for (int b = 0; b < A; ++b)
          u[((a * A + b) * cp + c) * kp + k] =
              float(t[a][0] * g[b][0] + t[a][1] * g[b][1] + t[a][2] * g[b][2]);
    }
  }
}

int64_t align64(int64_t bytes) { return round_up(bytes, 64); }

}  // namespace

bool WinogradConv::supports(const WinogradShape& s) {
  return s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.k > 0 && s.pad_top >= 0 && s.pad_left >= 0 &&
         s.pad_bottom >= 0 && s.pad_right >= 0 && s.oh() > 0 && s.ow() > 0;
}

WinogradConv::WinogradConv(const WinogradShape& s, const dnnl::engine& engine, int tile)
    : s_(s), engine_(engine), m_(tile), alpha_(tile + 2) {
  if (!supports(s) || (tile != 2 && tile != 4))
    throw dnnl::error(dnnl_invalid_arguments, "WinogradConv: unsupported shape or tile");
  th_ = (s.oh() + m_ - 1) / m_;
  tw_ = (s.ow() + m_ - 1) / m_;
  tiles_ = s.n * th_ * tw_;
  cp_ = round_up(s.c, kVec);
  kp_ = round_up(s.k, kVec);
  const int64_t a2 = int64_t(alpha_) * alpha_;
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
  return "winograd F(" + m + "x" + m + ",3x3) + matmul " + pd_.impl_info_str();
}

int64_t WinogradConv::weights_floats() const {
  return int64_t(pd_.weights_desc().get_size() / sizeof(float));
}

void WinogradConv::transform_weights(const float* oihw, float* out) const {
  const int64_t a2 = int64_t(alpha_) * alpha_;
  memory::desc plain({a2, cp_, kp_}, memory::data_type::f32, memory::format_tag::abc);
  if (plain == pd_.weights_desc()) {
    if (m_ == 2)
      transform_weights_plain<2>(s_, cp_, kp_, oihw, out);
    else
      transform_weights_plain<4>(s_, cp_, kp_, oihw, out);
    return;
  }
  std::vector<float> u(size_t(a2 * cp_ * kp_));
  if (m_ == 2)
    transform_weights_plain<2>(s_, cp_, kp_, oihw, u.data());
  else
    transform_weights_plain<4>(s_, cp_, kp_, oihw, u.data());
  memory from(plain, engine_, u.data()), to(pd_.weights_desc(), engine_, out);
  dnnl::stream stream(engine_);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}

int64_t WinogradConv::scratch_bytes() const {
  return v_bytes_ + m_bytes_ + align64(int64_t(pd_.scratchpad_desc().get_size()));
}

void WinogradConv::run(const float* src, const float* weights, float* dst, std::byte* scratch,
                       std::span<const EpilogueOp> epilogue, dnnl::stream& stream) const {
  float* v = reinterpret_cast<float*>(scratch);
  float* mm = reinterpret_cast<float*>(scratch + v_bytes_);
  std::byte* pad = scratch + v_bytes_ + m_bytes_;
  if (m_ == 2)
    input_transform<2>(s_, th_, tw_, tiles_, cp_, src, v);
  else
    input_transform<4>(s_, th_, tw_, tiles_, cp_, src, v);
  memory vm(pd_.src_desc(), engine_, v),
      wm(pd_.weights_desc(), engine_, const_cast<float*>(weights)), dm(pd_.dst_desc(), engine_, mm),
      sm(pd_.scratchpad_desc(), engine_, pad);
  matmul_.execute(
      stream,
      {{DNNL_ARG_SRC, vm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dm}, {DNNL_ARG_SCRATCHPAD, sm}});
  stream.wait();
  if (m_ == 2)
    output_transform<2>(s_, th_, tw_, tiles_, kp_, mm, dst, epilogue);
  else
    output_transform<4>(s_, th_, tw_, tiles_, kp_, mm, dst, epilogue);
}

}  // namespace tso::cpu
