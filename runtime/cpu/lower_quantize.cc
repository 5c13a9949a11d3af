// quantize_linear and dequantize_linear as own steps on row-major tensors,
// by the formulas the reference executor uses (runtime/common/quantize.h):
// the Q and DQ nodes around every operator of a QDQ model. A dequantized
// weight is computed once, in the prologue, like every step of constants.
//
// A Q whose only reader is a DQ of the same single scale and zero point (an
// activation of a QDQ model, quantized and at once dequantized for the next
// operator) runs with it as one step that rounds each value to its
// quantization level in place of both: elementwise with one parameter, it
// reads and writes whatever layout its input has (padding zeros stay zeros),
// so a convolution's blocked or NHWC output is not reordered to row-major
// and back (SqueezeNet 1.1 quantized: 44 reorders a run).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/common/quantize.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/vector_kernels.h"

namespace tso::cpu {

namespace {

// x as rows of `inner` elements, row r taking parameter r % extent.
struct QuantLayout {
  int64_t rows = 1, extent = 1, inner = 1;
};

QuantLayout layout_of(const Shape& x, const Shape& scale, int64_t axis) {
  QuantLayout l;
  l.inner = x.numel();
  if (scale.numel() == 1 || x.rank() == 0) return l;
  l.extent = x[static_cast<int>(axis)];
  l.inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) l.inner *= x[d];
  l.rows = x.numel() / l.inner;
  return l;
}

// The vector kernels' leading elements, then the scalar formula's.
template <class Q>
int64_t quantize_vector(const float* x, QuantLevels q, Q* y, int64_t n) {
  if constexpr (std::is_same_v<Q, uint8_t>)
    return vector_kernels().quantize_u8(x, q, y, n);
  else
    return vector_kernels().quantize_i8(x, q, y, n);
}

template <class Q>
int64_t dequantize_vector(const Q* x, float s, int z, float* y, int64_t n) {
  if constexpr (std::is_same_v<Q, uint8_t>)
    return vector_kernels().dequantize_u8(x, s, z, y, n);
  else if constexpr (std::is_same_v<Q, int8_t>)
    return vector_kernels().dequantize_i8(x, s, z, y, n);
  else
    return 0;  // int32: (x - z) is not exact in float
}

// Calls f(row, begin, end) over pieces of at most kPiece elements of each
// row, in parallel: a tensor quantized per tensor is one row, which a loop
// over rows ran on one thread (ResNet-50's input at 2 threads: 2.4x the
// pair step's time).
constexpr int64_t kPiece = 16384;
template <class F>
void for_pieces(const QuantLayout& l, F f) {
  const int64_t per_row = (l.inner + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) if (l.rows * l.inner > kPiece)
  for (int64_t p = 0; p < l.rows * per_row; ++p) {
    const int64_t row = p / per_row, begin = p % per_row * kPiece;
    f(row, begin, std::min(l.inner, begin + kPiece));
  }
}

template <class Q>
void quantize_rows(const QuantLayout& l, const float* x, const float* scale, const Q* zero,
                   rt::QuantRange r, Q* y) {
  for_pieces(l, [&](int64_t row, int64_t begin, int64_t end) {
    const int64_t c = row % l.extent;
    const float s = scale[c];
    const int z = zero[c];
    const float* in = x + row * l.inner + begin;
    Q* out = y + row * l.inner + begin;
    const int64_t n = end - begin;
    for (int64_t i = quantize_vector(in, {s, z, r}, out, n); i < n; ++i)
      out[i] = static_cast<Q>(rt::quantize_value(in[i], s, z, r));
  });
}

template <class Q>
void dequantize_rows(const QuantLayout& l, const Q* x, const float* scale, const Q* zero,
                     float* y) {
  for_pieces(l, [&](int64_t row, int64_t begin, int64_t end) {
    const int64_t c = row % l.extent;
    const float s = scale[c];
    const Q z = zero[c];
    const Q* in = x + row * l.inner + begin;
    float* out = y + row * l.inner + begin;
    const int64_t n = end - begin;
    for (int64_t i = dequantize_vector(in, s, z, out, n); i < n; ++i)
      out[i] = rt::dequantize_value<float>(in[i], s, z);
  });
}

void quantize(const QuantLayout& l, DType to, const std::byte* x, const std::byte* scale,
              const std::byte* zero, std::byte* y) {
  const auto* px = reinterpret_cast<const float*>(x);
  const auto* ps = reinterpret_cast<const float*>(scale);
  if (to == DType::kU8)
    quantize_rows(l, px, ps, reinterpret_cast<const uint8_t*>(zero), rt::kU8Range,
                  reinterpret_cast<uint8_t*>(y));
  else
    quantize_rows(l, px, ps, reinterpret_cast<const int8_t*>(zero), rt::kI8Range,
                  reinterpret_cast<int8_t*>(y));
}

void dequantize(const QuantLayout& l, DType from, const std::byte* x, const std::byte* scale,
                const std::byte* zero, std::byte* y) {
  const auto* ps = reinterpret_cast<const float*>(scale);
  auto* py = reinterpret_cast<float*>(y);
  switch (from) {
    case DType::kU8:
      return dequantize_rows(l, reinterpret_cast<const uint8_t*>(x), ps,
                             reinterpret_cast<const uint8_t*>(zero), py);
    case DType::kI8:
      return dequantize_rows(l, reinterpret_cast<const int8_t*>(x), ps,
                             reinterpret_cast<const int8_t*>(zero), py);
    default:
      return dequantize_rows(l, reinterpret_cast<const int32_t*>(x), ps,
                             reinterpret_cast<const int32_t*>(zero), py);
  }
}

}  // namespace

Status lower_quantize_pair(Builder& b, int q, int dq) {
  const Node& n = b.graph().node(q);
  const int x = b.value(n.args[0]);
  const int scale = b.as_plain(b.value(n.args[1])), zero = b.as_plain(b.value(n.args[2]));
  const memory::desc md = b.tensor(x).md;
  const int64_t count = static_cast<int64_t>(md.get_size() / sizeof(float));
  const rt::QuantRange r = n.outs[0].dtype == DType::kU8 ? rt::kU8Range : rt::kI8Range;
  const bool u8 = n.outs[0].dtype == DType::kU8;
  const int y = b.output_tensor(b.graph().node(dq).outs[0], md, {x, scale, zero});
  b.add_kernel("quantize and dequantize (own)", b.describe(q) + ", " + b.describe(dq),
               {x, scale, zero}, {y}, [=](const Bindings& m) -> Run {
                 const float* px = reinterpret_cast<const float*>(m.data(x));
                 const float s = *reinterpret_cast<const float*>(m.data(scale));
                 const int z = u8 ? int{*reinterpret_cast<const uint8_t*>(m.data(zero))}
                                  : int{*reinterpret_cast<const int8_t*>(m.data(zero))};
                 float* py = reinterpret_cast<float*>(m.data(y));
                 return [=] {
#pragma omp parallel if (count > 16384)
                   {
                     const int t = omp_get_thread_num(), nt = omp_get_num_threads();
                     const int64_t chunk = (count / nt + 7) / 8 * 8;
                     const int64_t begin = std::min(count, t * chunk);
                     const int64_t end = t + 1 == nt ? count : std::min(count, begin + chunk);
                     fake_quantize(px + begin, s, z, r, py + begin, end - begin);
                   }
                 };
               });
  b.set_value({dq, 0}, y);
  b.note_pair(y, {x, scale, zero, n.outs[0].dtype});
  return {};
}

int quantize_pair_input(Builder& b, const Builder::PairSource& p, const memory::desc& want) {
  const memory::desc x_md = b.tensor(p.x).md;
  const Shape shape = b.tensor(p.x).type.shape;
  const int64_t count = shape.numel();
  const memory::data_type q_dt =
      p.type == DType::kU8 ? memory::data_type::u8 : memory::data_type::s8;
  if (x_md.get_inner_nblks() != 0 || static_cast<int64_t>(x_md.get_size()) != count * 4 ||
      want.get_data_type() != q_dt || x_md.get_dims() != want.get_dims())
    return -1;
  const memory::desc q_md(x_md.get_dims(), q_dt, x_md.get_strides());
  const int x = p.x, scale = p.scale, zero = p.zero;
  const int y = b.output_tensor({p.type, shape}, q_md, {x, scale, zero});
  const bool u8 = p.type == DType::kU8;
  b.add_kernel("quantize (own)", "int8 input", {x, scale, zero}, {y},
               [=](const Bindings& m) -> Run {
                 const float* px = reinterpret_cast<const float*>(m.data(x));
                 const float s = *reinterpret_cast<const float*>(m.data(scale));
                 const std::byte* pz = m.data(zero);
                 std::byte* py = m.data(y);
                 const QuantLayout l{1, 1, count};
                 if (u8)
                   return [=] {
                     quantize_rows(l, px, &s, reinterpret_cast<const uint8_t*>(pz), rt::kU8Range,
                                   reinterpret_cast<uint8_t*>(py));
                   };
                 return [=] {
                   quantize_rows(l, px, &s, reinterpret_cast<const int8_t*>(pz), rt::kI8Range,
                                 reinterpret_cast<int8_t*>(py));
                 };
               });
  b.plan().steps.back().operand_copy = true;
  return q_md == want ? y : b.as_layout(y, want);
}

Status lower_quantize(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const int scale = b.as_plain(b.value(n.args[1])), zero = b.as_plain(b.value(n.args[2]));
  const QuantLayout l =
      layout_of(b.tensor(x).type.shape, b.tensor(scale).type.shape, n.attrs.i(AttrKey::axis));
  const bool q = n.op == Op::QuantizeLinear;
  const DType t = q ? n.outs[0].dtype : b.tensor(x).type.dtype;
  const int y = row_major_output(b, node, 0, {x, scale, zero});
  b.add_kernel(std::string(op_name(n.op)) + " (own)", b.describe(node), {x, scale, zero}, {y},
               [=](const Bindings& m) -> Run {
                 const std::byte *px = m.data(x), *ps = m.data(scale), *pz = m.data(zero);
                 std::byte* py = m.data(y);
                 if (q) return [=] { quantize(l, t, px, ps, pz, py); };
                 return [=] { dequantize(l, t, px, ps, pz, py); };
               });
  b.set_value({node, 0}, y);
  return {};
}

}  // namespace tso::cpu
