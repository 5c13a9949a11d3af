#include "runtime/cpu/logic.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "runtime/common/geometry.h"
#include "runtime/common/top_k.h"

namespace tso::cpu {

namespace {

constexpr int64_t kParallelFrom = 16384;

// Calls f(i, offsets...) for every output element i with the element offset
// of each operand of shape `shapes[k]` broadcast to `out`: 1 or 0 per element
// when every operand is the output's shape or one element, else the offsets
// of each row of the output's last axis, stepped along it (a division per
// row, not per element: a where over attention weights [1,2,16,16] whose
// condition is [1,1,16,1] took 6 us for 512 elements).
template <size_t N, class F>
void for_each_broadcast(const Shape (&shapes)[N], const Shape& out, F f) {
  const int64_t n = out.numel();
  int64_t step[N];
  bool direct = true;
  for (size_t k = 0; k < N; ++k) {
    step[k] = shapes[k] == out ? 1 : shapes[k].numel() == 1 ? 0 : -1;
    direct = direct && step[k] >= 0;
  }
  if (direct) {
#pragma omp parallel for schedule(static) if (n > kParallelFrom)
    for (int64_t i = 0; i < n; ++i) {
      int64_t at[N];
      for (size_t k = 0; k < N; ++k) at[k] = i * step[k];
      f(i, at);
    }
    return;
  }
  std::vector<int64_t> strides[N];
  for (size_t k = 0; k < N; ++k) strides[k] = rt::broadcast_strides(shapes[k], out);
  const int r = out.rank();
  const int64_t width = out[r - 1];
  if (width == 0) return;
  int64_t along[N];
  for (size_t k = 0; k < N; ++k) along[k] = strides[k][r - 1];
#pragma omp parallel for schedule(static) if (n > kParallelFrom)
  for (int64_t row = 0; row < n / width; ++row) {
    int64_t start[N] = {}, rest = row;
    for (int d = r - 2; d >= 0; --d) {
      const int64_t c = rest % out[d];
      rest /= out[d];
      for (size_t k = 0; k < N; ++k) start[k] += c * strides[k][d];
    }
    for (int64_t j = 0; j < width; ++j) {
      int64_t at[N];
      for (size_t k = 0; k < N; ++k) at[k] = start[k] + j * along[k];
      f(row * width + j, at);
    }
  }
}

// Calls f with a null pointer of the C++ type of `t` (`numeric`).
template <class F>
void with_type(DType t, F f) {
  switch (t) {
    case DType::kF32:
      return f(static_cast<float*>(nullptr));
    case DType::kF64:
      return f(static_cast<double*>(nullptr));
    case DType::kI64:
      return f(static_cast<int64_t*>(nullptr));
    case DType::kI32:
      return f(static_cast<int32_t*>(nullptr));
    default:
      return;
  }
}

template <class T>
bool holds(CompareFn f, T a, T b) {
  switch (f) {
    case CompareFn::kEqual:
      return a == b;
    case CompareFn::kLess:
      return a < b;
    case CompareFn::kGreater:
      return a > b;
  }
  return false;
}

// Two's complement arithmetic without signed overflow.
template <class T>
T wrapping(BinaryFn f, T a, T b) {
  using U = std::make_unsigned_t<T>;
  const U x = static_cast<U>(a), y = static_cast<U>(b);
  switch (f) {
    case BinaryFn::kAdd:
      return static_cast<T>(static_cast<U>(x + y));
    case BinaryFn::kSub:
      return static_cast<T>(static_cast<U>(x - y));
    case BinaryFn::kMul:
      return static_cast<T>(static_cast<U>(x * y));
    case BinaryFn::kMax:
      return std::max(a, b);
    case BinaryFn::kMin:
      return std::min(a, b);
    default:
      return 0;
  }
}

template <class T>
T sum(T a, T b) {
  if constexpr (std::is_integral_v<T>) return wrapping(BinaryFn::kAdd, a, b);
  return a + b;
}

}  // namespace

bool numeric(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kI64 || t == DType::kI32;
}

void compare(CompareFn f, DType t, const std::byte* a, const Shape& as, const std::byte* b,
             const Shape& bs, uint8_t* y, const Shape& out) {
  with_type(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* pa = reinterpret_cast<const T*>(a);
    const T* pb = reinterpret_cast<const T*>(b);
    for_each_broadcast({as, bs}, out, [&](int64_t i, const int64_t* at) {
      y[i] = holds(f, pa[at[0]], pb[at[1]]) ? 1 : 0;
    });
  });
}

void logical(LogicFn f, const uint8_t* a, const Shape& as, const uint8_t* b, const Shape& bs,
             uint8_t* y, const Shape& out) {
  for_each_broadcast({as, bs}, out, [&](int64_t i, const int64_t* at) {
    const bool x = a[at[0]] != 0, z = b[at[1]] != 0;
    y[i] = (f == LogicFn::kAnd ? x && z : x || z) ? 1 : 0;
  });
}

void logical_not(const uint8_t* x, uint8_t* y, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelFrom)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] == 0 ? 1 : 0;
}

AxisLines lines_along(const Shape& shape, int axis) {
  AxisLines l;
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < axis) l.outer *= shape[d];
    if (d > axis) l.inner *= shape[d];
  }
  l.extent = shape[axis];
  return l;
}

void cumsum(const CumSumGeometry& g, DType t, const std::byte* x, std::byte* y) {
  with_type(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* px = reinterpret_cast<const T*>(x);
    T* py = reinterpret_cast<T*>(y);
    const int64_t lines = g.outer * g.inner;
#pragma omp parallel for schedule(static) if (lines * g.extent > kParallelFrom)
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t base = line / g.inner * g.extent * g.inner + line % g.inner;
      T acc = 0;
      for (int64_t k = 0; k < g.extent; ++k) {
        const int64_t at = base + (g.reverse ? g.extent - 1 - k : k) * g.inner;
        const T v = px[at];
        if (g.exclusive) py[at] = acc;
        acc = sum(acc, v);
        if (!g.exclusive) py[at] = acc;
      }
    }
  });
}

namespace {

template <class T>
void top_k_lines(const TopKGeometry& g, const T* x, T* values, int64_t* indices) {
#pragma omp parallel if (g.outer * g.inner * g.extent > 16384)
  {
    std::vector<int64_t> order;
#pragma omp for schedule(static)
    for (int64_t line = 0; line < g.outer * g.inner; ++line) {
      const int64_t o = line / g.inner, j = line % g.inner;
      const T* px = x + o * g.extent * g.inner + j;
      rt::top_k_order(px, g.extent, g.inner, g.k, g.largest, &order);
      for (int64_t r = 0; r < g.k; ++r) {
        const int64_t at = (o * g.k + r) * g.inner + j;
        values[at] = px[order[r] * g.inner];
        indices[at] = order[r];
      }
    }
  }
}

}  // namespace

void top_k(const TopKGeometry& g, DType t, const std::byte* x, std::byte* values,
           int64_t* indices) {
  if (t == DType::kF64)
    top_k_lines(g, reinterpret_cast<const double*>(x), reinterpret_cast<double*>(values), indices);
  else
    top_k_lines(g, reinterpret_cast<const float*>(x), reinterpret_cast<float*>(values), indices);
}

void arg_max(const ArgMaxGeometry& g, DType t, const std::byte* x, int64_t* y) {
  with_type(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    auto nan = [](T v) { return v != v; };
    const T* px = reinterpret_cast<const T*>(x);
    const int64_t lines = g.outer * g.inner;
#pragma omp parallel for schedule(static) if (lines * g.extent > kParallelFrom)
    for (int64_t line = 0; line < lines; ++line) {
      const T* p = px + line / g.inner * g.extent * g.inner + line % g.inner;
      int64_t best = 0;
      for (int64_t k = 1; k < g.extent; ++k) {
        const T v = p[k * g.inner], b = p[best * g.inner];
        if (nan(b) ? g.last && nan(v) : nan(v) || v > b || (g.last && v == b)) best = k;
      }
      y[line] = best;
    }
  });
}

bool integer_binary_supported(BinaryFn f, DType t) {
  return (t == DType::kI64 || t == DType::kI32) &&
         (f == BinaryFn::kAdd || f == BinaryFn::kSub || f == BinaryFn::kMul ||
          f == BinaryFn::kMax || f == BinaryFn::kMin);
}

void integer_binary(BinaryFn f, DType t, const std::byte* a, const Shape& as, const std::byte* b,
                    const Shape& bs, std::byte* y, const Shape& out) {
  with_type(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    if constexpr (std::is_integral_v<T>) {
      const T* pa = reinterpret_cast<const T*>(a);
      const T* pb = reinterpret_cast<const T*>(b);
      T* py = reinterpret_cast<T*>(y);
      for_each_broadcast({as, bs}, out, [&](int64_t i, const int64_t* at) {
        py[i] = wrapping(f, pa[at[0]], pb[at[1]]);
      });
    }
  });
}

void where_bytes(int elem_bytes, const uint8_t* c, const Shape& cs, const std::byte* a,
                 const Shape& as, const std::byte* b, const Shape& bs, std::byte* y,
                 const Shape& out) {
  // Elements of 4 bytes (f32, i32) are copied as such, in a vectorized loop
  // when no operand broadcasts along an axis (BERT's NaN guard on its
  // attention weights, 12 of [1,12,128,128]); others by memcpy.
  if (elem_bytes == 4) {
    const uint32_t* pa = reinterpret_cast<const uint32_t*>(a);
    const uint32_t* pb = reinterpret_cast<const uint32_t*>(b);
    uint32_t* py = reinterpret_cast<uint32_t*>(y);
    auto step = [&](const Shape& s) { return s == out ? 1 : s.numel() == 1 ? 0 : -1; };
    const int64_t dc = step(cs), da = step(as), db = step(bs), n = out.numel();
    // A scalar against a full tensor under a full condition (the NaN guard's
    // 0), strides known to the compiler: a blend. The general loop's strides
    // make every load a gather: BERT-base's 12 guards took 0.43 to 0.46 ms a
    // run with it, 0.11 to 0.14 so (three alternating pairs of tso run
    // --profile 10, 2026-12-01).
    if (dc == 1 && da == 0 && db == 1) {
      const uint32_t va = *pa;
#pragma omp parallel for simd schedule(static) if (n > kParallelFrom)
      for (int64_t i = 0; i < n; ++i) py[i] = c[i] ? va : pb[i];
      return;
    }
    if (dc == 1 && da == 1 && db == 0) {
      const uint32_t vb = *pb;
#pragma omp parallel for simd schedule(static) if (n > kParallelFrom)
      for (int64_t i = 0; i < n; ++i) py[i] = c[i] ? pa[i] : vb;
      return;
    }
    if (dc >= 0 && da >= 0 && db >= 0) {
#pragma omp parallel for simd schedule(static) if (n > kParallelFrom)
      for (int64_t i = 0; i < n; ++i) py[i] = c[i * dc] ? pa[i * da] : pb[i * db];
      return;
    }
    for_each_broadcast({cs, as, bs}, out, [&](int64_t i, const int64_t* at) {
      py[i] = c[at[0]] ? pa[at[1]] : pb[at[2]];
    });
    return;
  }
  const size_t e = static_cast<size_t>(elem_bytes);
  for_each_broadcast({cs, as, bs}, out, [&](int64_t i, const int64_t* at) {
    std::memcpy(y + i * e, c[at[0]] ? a + at[1] * e : b + at[2] * e, e);
  });
}

}  // namespace tso::cpu
