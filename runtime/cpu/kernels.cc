#include "runtime/cpu/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "runtime/common/geometry.h"
#include "runtime/cpu/vector_kernels.h"

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tso::cpu {

namespace {

// Merges neighbouring dimensions that are contiguous in both source and
// destination, so that most copies become long memcpy rows.
struct Collapsed {
  std::vector<int64_t> extent, src, dst;
};

Collapsed collapse(const StridedCopy& c) {
  Collapsed r;
  for (size_t d = 0; d < c.extent.size(); ++d) {
    if (c.extent[d] == 1) continue;
    if (!r.extent.empty() && r.src.back() == c.src_st[d] * c.extent[d] &&
        r.dst.back() == c.dst_st[d] * c.extent[d]) {
      r.extent.back() *= c.extent[d];
      r.src.back() = c.src_st[d];
      r.dst.back() = c.dst_st[d];
      continue;
    }
    r.extent.push_back(c.extent[d]);
    r.src.push_back(c.src_st[d]);
    r.dst.push_back(c.dst_st[d]);
  }
  if (r.extent.empty()) r.extent = {1}, r.src = {1}, r.dst = {1};
  // A short innermost run (an interleave: depth-to-space, a 2x2 unfold) is
  // a row per handful of elements, each row paying for its offsets. The
  // dimension the source reads most contiguously, where it is longer, is
  // made the innermost instead: any loop order copies the same elements.
  const size_t last = r.extent.size() - 1;
  constexpr int64_t kShortRun = 8;
  size_t best = last;
  for (size_t d = 0; d < last; ++d)
    if (r.extent[d] >= kShortRun && (best == last || std::abs(r.src[d]) < std::abs(r.src[best])))
      best = d;
  if (r.extent[last] < kShortRun && best != last && std::abs(r.src[best]) < std::abs(r.src[last]))
    for (auto* v : {&r.extent, &r.src, &r.dst}) {
      const int64_t moved = (*v)[best];
      v->erase(v->begin() + static_cast<std::ptrdiff_t>(best));
      v->push_back(moved);
    }
  return r;
}

template <int kBytes>
void copy_row(const std::byte* s, int64_t ss, std::byte* d, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    std::memcpy(d, s, n * kBytes);
    return;
  }
  for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * ds * kBytes, s + j * ss * kBytes, kBytes);
}

template <int kBytes>
void copy_rows(const Collapsed& c, int64_t src_off, const std::byte* src, int64_t dst_off,
               std::byte* dst) {
  const int r = static_cast<int>(c.extent.size());
  const int64_t inner = c.extent[r - 1];
  int64_t rows = 1;
  for (int d = 0; d + 1 < r; ++d) rows *= c.extent[d];
#pragma omp parallel for schedule(static) if (rows * inner > 16384)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t s = src_off, t = dst_off, rest = row;
    for (int d = r - 2; d >= 0; --d) {
      const int64_t i = rest % c.extent[d];
      rest /= c.extent[d];
      s += i * c.src[d];
      t += i * c.dst[d];
    }
    copy_row<kBytes>(src + s * kBytes, c.src[r - 1], dst + t * kBytes, c.dst[r - 1], inner);
  }
}

#ifdef __AVX2__
// Transposes the 8x8 block of floats at s (rows s_row apart) into d (rows
// d_row apart): d[i][j] = s[j][i].
void transpose8x8(const float* s, int64_t s_row, float* d, int64_t d_row) {
  __m256 r[8], t[8];
  for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(s + j * s_row);
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
    t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
  }
  for (int j = 0; j < 8; j += 4)
    for (int k = 0; k < 2; ++k) {
      r[j + k] = _mm256_shuffle_ps(t[j + k], t[j + k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[j + k + 2] = _mm256_shuffle_ps(t[j + k], t[j + k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    }
  // r[0..7] now hold, per 128-bit half, columns 0, 2, 1, 3 of rows 0-3
  // (r[0], r[2], r[1], r[3]) and of rows 4-7 (r[4], r[6], r[5], r[7]).
  const int order[4] = {0, 2, 1, 3};
  for (int i = 0; i < 4; ++i) {
    const __m256 lo = r[order[i]], hi = r[4 + order[i]];
    _mm256_storeu_ps(d + i * d_row, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(d + (i + 4) * d_row, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}

// A transpose of 4-byte elements that moves the innermost axis: the
// destination runs along `last` (stride 1 there) and the source along `a`.
// Copied row by row, each row gathers one element per source stride (BERT's
// keys, [128, 12, 64] to [12, 64, 128]: 0.04 ms); in 8x8 blocks moved in
// registers it reads and writes whole vectors.
bool copy_transposed_blocks(const Collapsed& c, int64_t src_off, const float* src,
                            int64_t dst_off, float* dst) {
  const int r = static_cast<int>(c.extent.size()), last = r - 1;
  int a = -1;
  for (int d = 0; d < last; ++d)
    if (c.src[d] == 1) a = d;
  if (a < 0 || c.dst[last] != 1 || c.src[last] == 1 || c.extent[a] < 8 || c.extent[last] < 8)
    return false;
  // The other axes, outermost first.
  std::vector<int> outer;
  for (int d = 0; d < last; ++d)
    if (d != a) outer.push_back(d);
  int64_t rows = 1;
  for (int d : outer) rows *= c.extent[d];
  const int64_t na = c.extent[a], nl = c.extent[last];
  const int64_t blocks_a = (na + 7) / 8, blocks_l = (nl + 7) / 8;
#pragma omp parallel for schedule(static) if (rows * na * nl > 16384)
  for (int64_t job = 0; job < rows * blocks_a; ++job) {
    int64_t s = src_off, t = dst_off, rest = job / blocks_a;
    for (int k = static_cast<int>(outer.size()) - 1; k >= 0; --k) {
      const int64_t i = rest % c.extent[outer[k]];
      rest /= c.extent[outer[k]];
      s += i * c.src[outer[k]];
      t += i * c.dst[outer[k]];
    }
    const int64_t i0 = job % blocks_a * 8, ni = std::min<int64_t>(8, na - i0);
    for (int64_t lb = 0; lb < blocks_l; ++lb) {
      const int64_t j0 = lb * 8, nj = std::min<int64_t>(8, nl - j0);
      const float* from = src + s + i0 + j0 * c.src[last];
      float* to = dst + t + i0 * c.dst[a] + j0;
      if (ni == 8 && nj == 8) {
        transpose8x8(from, c.src[last], to, c.dst[a]);
        continue;
      }
      for (int64_t i = 0; i < ni; ++i)
        for (int64_t j = 0; j < nj; ++j) to[i * c.dst[a] + j] = from[j * c.src[last] + i];
    }
  }
  return true;
}
#endif

}  // namespace

void strided_copy(const StridedCopy& c, const std::byte* src, std::byte* dst) {
  for (int64_t e : c.extent)
    if (e == 0) return;
  const Collapsed k = collapse(c);
#ifdef __AVX2__
  if (c.elem_bytes == 4 &&
      copy_transposed_blocks(k, c.src_off, reinterpret_cast<const float*>(src), c.dst_off,
                             reinterpret_cast<float*>(dst)))
    return;
#endif
  switch (c.elem_bytes) {
    case 1:
      return copy_rows<1>(k, c.src_off, src, c.dst_off, dst);
    case 2:
      return copy_rows<2>(k, c.src_off, src, c.dst_off, dst);
    case 4:
      return copy_rows<4>(k, c.src_off, src, c.dst_off, dst);
    default:
      return copy_rows<8>(k, c.src_off, src, c.dst_off, dst);
  }
}

void fill(std::byte* dst, int64_t n, int elem_bytes, const void* value) {
  bool zero = true;
  for (int b = 0; b < elem_bytes; ++b) zero = zero && static_cast<const char*>(value)[b] == 0;
  if (zero) {
    std::memset(dst, 0, n * elem_bytes);
    return;
  }
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem_bytes, value, elem_bytes);
}

namespace {

int64_t index_at(const void* indices, bool wide, int64_t j) {
  return wide ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
}

}  // namespace

namespace {

// Rows of N bytes (one element, or a few): a copy the compiler makes one
// move, data row o's indices walked in order. A reflect or edge pad of the
// innermost axis is such a gather, one element per index.
template <int N, typename I>
void gather_short_rows(const GatherRows& g, const std::byte* data, const I* indices,
                       std::byte* y) {
#pragma omp parallel for schedule(static) if (g.outer * g.count > 16384)
  for (int64_t o = 0; o < g.outer; ++o) {
    const std::byte* from = data + o * g.extent * N;
    std::byte* to = y + o * g.count * N;
    for (int64_t j = 0; j < g.count; ++j) {
      const int64_t k = indices[j] < 0 ? indices[j] + g.extent : indices[j];
      std::memcpy(to + j * N, from + k * N, N);
    }
  }
}

template <typename I>
bool gather_short_rows(const GatherRows& g, const std::byte* data, const I* indices,
                       std::byte* y) {
  switch (g.row_bytes) {
    case 1: gather_short_rows<1>(g, data, indices, y); return true;
    case 2: gather_short_rows<2>(g, data, indices, y); return true;
    case 4: gather_short_rows<4>(g, data, indices, y); return true;
    case 8: gather_short_rows<8>(g, data, indices, y); return true;
    default: return false;
  }
}

}  // namespace

int64_t gather(const GatherRows& g, const std::byte* data, const void* indices, std::byte* y) {
  for (int64_t j = 0; j < g.count; ++j) {
    const int64_t k = index_at(indices, g.wide, j);
    if (k < -g.extent || k >= g.extent) return j;
  }
  if (g.wide ? gather_short_rows(g, data, static_cast<const int64_t*>(indices), y)
             : gather_short_rows(g, data, static_cast<const int32_t*>(indices), y))
    return -1;
  const int64_t rows = g.outer * g.count;
#pragma omp parallel for schedule(static) if (rows * g.row_bytes > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / g.count, j = r % g.count;
    int64_t k = index_at(indices, g.wide, j);
    if (k < 0) k += g.extent;
    std::memcpy(y + r * g.row_bytes, data + (o * g.extent + k) * g.row_bytes, g.row_bytes);
  }
  return -1;
}

int64_t gather_elements(const GatherElements& g, const std::byte* data, const void* indices,
                        std::byte* y) {
  const int64_t n = g.indices.numel(), extent = g.data[g.axis];
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = index_at(indices, g.wide, j);
    if (k < -extent || k >= extent) return j;
  }
  const std::vector<int64_t> strides = rt::strides_of(g.data);
  const int r = g.indices.rank();
#pragma omp parallel for schedule(static) if (n * g.elem_bytes > 65536)
  for (int64_t j = 0; j < n; ++j) {
    int64_t k = index_at(indices, g.wide, j), at = 0, rest = j;
    if (k < 0) k += extent;
    for (int d = r - 1; d >= 0; --d) {
      const int64_t c = rest % g.indices[d];
      rest /= g.indices[d];
      at += (d == g.axis ? k : c) * strides[d];
    }
    std::memcpy(y + j * g.elem_bytes, data + at * g.elem_bytes, g.elem_bytes);
  }
  return -1;
}

namespace {

// f16 elements, read and written through float.
struct Half {
  uint16_t bits;
};

template <class T>
T widen(T v) {
  return v;
}
float widen(Half h) { return half_to_float(h.bits); }

template <class To, class V>
To element_as(V v) {
  if constexpr (std::is_same_v<To, Half>)
    return Half{float_to_half(static_cast<float>(v))};
  else if constexpr (sizeof(To) == 1 && std::is_floating_point_v<V>)
    return static_cast<To>(static_cast<int64_t>(v));  // toward zero, then modulo 256
  else
    return static_cast<To>(v);  // floats to integers: toward zero
}

// Bool tensors are bytes (0 or 1), read and written as uint8_t.
template <class To, bool kToBool = false, class From>
void convert_as(const From* x, To* y, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const auto v = widen(x[i]);
    if constexpr (kToBool)
      y[i] = v != decltype(v)(0);
    else
      y[i] = element_as<To>(v);
  }
}

template <class From>
void convert_from(const From* x, std::byte* y, DType to, int64_t n) {
  switch (to) {
    case DType::kF32:
      return convert_as(x, reinterpret_cast<float*>(y), n);
    case DType::kF64:
      return convert_as(x, reinterpret_cast<double*>(y), n);
    case DType::kI64:
      return convert_as(x, reinterpret_cast<int64_t*>(y), n);
    case DType::kI32:
      return convert_as(x, reinterpret_cast<int32_t*>(y), n);
    case DType::kBool:
      return convert_as<uint8_t, true>(x, reinterpret_cast<uint8_t*>(y), n);
    case DType::kU8:
      return convert_as(x, reinterpret_cast<uint8_t*>(y), n);
    case DType::kI8:
      return convert_as(x, reinterpret_cast<int8_t*>(y), n);
    case DType::kF16:
      return convert_as(x, reinterpret_cast<Half*>(y), n);
  }
}

// f16 <-> f32, the conversions of an f16 model's inputs and outputs: eight
// elements an instruction with F16C (x86-64-v3 has it), the rest one by one.
void halves_to_floats(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
#endif
  for (; i < n; ++i) y[i] = half_to_float(x[i]);
}

void floats_to_halves(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

}  // namespace

void convert(const std::byte* x, DType from, std::byte* y, DType to, int64_t n) {
  if (from == DType::kF16 && to == DType::kF32)
    return halves_to_floats(reinterpret_cast<const uint16_t*>(x), reinterpret_cast<float*>(y), n);
  if (from == DType::kF32 && to == DType::kF16)
    return floats_to_halves(reinterpret_cast<const float*>(x), reinterpret_cast<uint16_t*>(y), n);
  switch (from) {
    case DType::kF32:
      return convert_from(reinterpret_cast<const float*>(x), y, to, n);
    case DType::kF64:
      return convert_from(reinterpret_cast<const double*>(x), y, to, n);
    case DType::kI64:
      return convert_from(reinterpret_cast<const int64_t*>(x), y, to, n);
    case DType::kI32:
      return convert_from(reinterpret_cast<const int32_t*>(x), y, to, n);
    case DType::kBool:
    case DType::kU8:
      return convert_from(reinterpret_cast<const uint8_t*>(x), y, to, n);
    case DType::kI8:
      return convert_from(reinterpret_cast<const int8_t*>(x), y, to, n);
    case DType::kF16:
      return convert_from(reinterpret_cast<const Half*>(x), y, to, n);
  }
}

void reduce_rows(const RowReduction& r, const float* x, float* y) {
  const bool max = r.kind == RowReduction::kMax, l2 = r.kind == RowReduction::kL2;
#pragma omp parallel for schedule(static) if (r.outer * r.reduced * r.inner > 16384)
  for (int64_t o = 0; o < r.outer; ++o) {
    float* out = y + o * r.inner;
    const float* in = x + o * r.reduced * r.inner;
    for (int64_t i = 0; i < r.inner; ++i) out[i] = max ? in[i] : l2 ? in[i] * in[i] : in[i];
    for (int64_t k = 1; k < r.reduced; ++k) {
      const float* row = in + k * r.inner;
      if (max)
        for (int64_t i = 0; i < r.inner; ++i) out[i] = std::max(out[i], row[i]);
      else if (l2)
        for (int64_t i = 0; i < r.inner; ++i) out[i] += row[i] * row[i];
      else
        for (int64_t i = 0; i < r.inner; ++i) out[i] += row[i];
    }
    if (l2)
      for (int64_t i = 0; i < r.inner; ++i) out[i] = std::sqrt(out[i]);
    else if (r.kind == RowReduction::kMean)
      for (int64_t i = 0; i < r.inner; ++i) out[i] /= static_cast<float>(r.reduced);
  }
}

void batchnorm_channels_last(const ChannelsLastBatchNorm& n, const float* x, const float* scale,
                             const float* shift, const float* mean, const float* var, float* y) {
  std::vector<float> a(n.channels), b(n.channels);
  for (int64_t c = 0; c < n.channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + n.epsilon);
    b[c] = shift[c] - mean[c] * a[c];
  }
  const float *pa = a.data(), *pb = b.data();
  const int64_t channels = n.channels;
#pragma omp parallel for schedule(static) if (n.rows * channels > 16384)
  for (int64_t r = 0; r < n.rows; ++r) {
    const float* px = x + r * channels;
    float* py = y + r * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) py[c] = px[c] * pa[c] + pb[c];
  }
}

namespace {

// y[i] = f(x[i]) for n elements, on the OpenMP team past 16K of them.
template <class F>
void map_floats(const float* x, float* y, int64_t n, F f) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

// libmvec's vector erff (vector_kernels.h): the scalar erff took 1.3 to 2.1
// ms for each of the 12 standalone erfs of a quantized BERT-base (128 x
// 3072), a third of its run.
void erf(const float* x, float* y, int64_t n) {
  constexpr int64_t kPiece = 4096;
  const VectorKernels& k = vector_kernels();
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t b = 0; b < n; b += kPiece) {
    const int64_t m = std::min(kPiece, n - b);
    for (int64_t i = k.erf(x + b, y + b, m); i < m; ++i) y[b + i] = std::erf(x[b + i]);
  }
}

void fake_quantize(const float* x, float scale, int zero, rt::QuantRange r, float* y,
                   int64_t n) {
  for (int64_t i = vector_kernels().fake_quantize(x, {scale, zero, r}, y, n); i < n; ++i)
    y[i] = rt::dequantize_value<float>(rt::quantize_value(x[i], scale, zero, r), scale, zero);
}

void sin(const float* x, float* y, int64_t n) {
  map_floats(x, y, n, [](float v) { return std::sin(v); });
}

void cos(const float* x, float* y, int64_t n) {
  map_floats(x, y, n, [](float v) { return std::cos(v); });
}

void isnan(const float* x, uint8_t* y, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i];
}

BinaryFn binary_fn(Op op) {
  switch (op) {
    case Op::Sub:
      return BinaryFn::kSub;
    case Op::Mul:
    case Op::ScalarMul:
      return BinaryFn::kMul;
    case Op::Div:
      return BinaryFn::kDiv;
    case Op::Pow:
      return BinaryFn::kPow;
    case Op::Max:
      return BinaryFn::kMax;
    case Op::Min:
      return BinaryFn::kMin;
    default:
      return BinaryFn::kAdd;
  }
}

namespace {

// y[k] = f(a[k or 0], b[k or 0]) over a run of n elements: each operand runs
// along it (step 1) or holds one value (step 0).
template <typename F>
void run(F f, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  if (sa && sb)
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[k], b[k]);
  else if (sa)
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[k], b[0]);
  else if (sb)
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[0], b[k]);
  else
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[0], b[0]);
}

template <typename F>
void broadcast_runs(F f, const float* a, const std::vector<int64_t>& sa, const float* b,
                    const std::vector<int64_t>& sb, float* y, const Shape& out) {
  // The trailing axes along which each operand either runs contiguously or
  // holds one value form one run; the axes before it are walked by index.
  const int r = out.rank();
  const int64_t step_a = r > 0 && sa[r - 1] != 0, step_b = r > 0 && sb[r - 1] != 0;
  int first = r;
  int64_t inner = 1;
  while (first > 0) {
    const int d = first - 1;
    if (sa[d] != step_a * inner || sb[d] != step_b * inner) break;
    inner *= out[d];
    first = d;
  }
  const int64_t outer = inner == 0 ? 0 : out.numel() / inner;
#pragma omp parallel for schedule(static) if (outer * inner > 16384)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t ia = 0, ib = 0, rest = o;
    for (int d = first - 1; d >= 0; --d) {
      const int64_t k = rest % out[d];
      rest /= out[d];
      ia += k * sa[d];
      ib += k * sb[d];
    }
    run(f, a + ia, step_a, b + ib, step_b, y + o * inner, inner);
  }
}

}  // namespace

void broadcast_binary(BinaryFn f, const float* a, const Shape& as, const float* b, const Shape& bs,
                      float* y, const Shape& out) {
  const std::vector<int64_t> sa = rt::broadcast_strides(as, out),
                             sb = rt::broadcast_strides(bs, out);
  switch (f) {
    case BinaryFn::kAdd:
      return broadcast_runs([](float u, float v) { return u + v; }, a, sa, b, sb, y, out);
    case BinaryFn::kSub:
      return broadcast_runs([](float u, float v) { return u - v; }, a, sa, b, sb, y, out);
    case BinaryFn::kMul:
      return broadcast_runs([](float u, float v) { return u * v; }, a, sa, b, sb, y, out);
    case BinaryFn::kDiv:
      return broadcast_runs([](float u, float v) { return u / v; }, a, sa, b, sb, y, out);
    case BinaryFn::kPow:
      return broadcast_runs([](float u, float v) { return std::pow(u, v); }, a, sa, b, sb, y, out);
    case BinaryFn::kMax:  // u where it wins or is NaN, else v (NaN when v is)
      return broadcast_runs([](float u, float v) { return u > v || u != u ? u : v; }, a, sa, b, sb,
                            y, out);
    case BinaryFn::kMin:
      return broadcast_runs([](float u, float v) { return u < v || u != u ? u : v; }, a, sa, b, sb,
                            y, out);
  }
}

void avgpool_include_pad(const AvgPoolGeometry& g, const float* x, float* y) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = x + p * g.in_h * g.in_w;
    float* o = y + p * g.out_h * g.out_w;
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t hs = oh * g.s_h - g.pad_top, ws = ow * g.s_w - g.pad_left;
        const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + g.k_h, g.in_h);
        const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + g.k_w, g.in_w);
        const int64_t count =
            (std::min(hs + g.k_h, g.in_h + g.pad_bottom) - std::max(hs, -g.pad_top)) *
            (std::min(ws + g.k_w, g.in_w + g.pad_right) - std::max(ws, -g.pad_left));
        float sum = 0;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) sum += plane[i * g.in_w + j];
        o[oh * g.out_w + ow] = sum / static_cast<float>(count);
      }
  }
}

}  // namespace tso::cpu
