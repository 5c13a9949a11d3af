// HostTensor: conversions to and from WeightData and the element rounding
// rules the folder relies on.
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "frontend/constant_folding.h"
#include "frontend/host_tensor_util.h"

namespace tso::onnx_frontend {

double round_to(DType t, double v) {
  switch (t) {
    case DType::kF32: return static_cast<float>(v);
    case DType::kF16: return half_to_float(float_to_half(static_cast<float>(v)));
    default: return v;
  }
}

int64_t wrap_int(DType t, int64_t v) {
  switch (t) {
    case DType::kI32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DType::kBool: return v != 0;
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kI8: return static_cast<int8_t>(static_cast<uint8_t>(v));
    default: return v;
  }
}

int64_t float_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);  // truncates toward zero, as a C cast and numpy do
}

int64_t HostTensor::get_i(int64_t k) const { return is_float() ? float_to_int(f[k]) : i[k]; }

HostTensor HostTensor::zeros(DType dtype, Shape shape) {
  HostTensor h;
  h.dtype = dtype;
  h.shape = shape;
  if (h.is_float()) h.f.assign(shape.numel(), 0.0);
  else h.i.assign(shape.numel(), 0);
  return h;
}

HostTensor host_from_weight(const WeightData& w) {
  HostTensor h = HostTensor::zeros(w.type.dtype, w.type.shape);
  const std::byte* p = w.bytes.data();
  const int64_t n = h.numel();
  for (int64_t k = 0; k < n; ++k) {
    switch (h.dtype) {
      case DType::kF32: { float x; std::memcpy(&x, p + 4 * k, 4); h.f[k] = x; break; }
      case DType::kF64: std::memcpy(&h.f[k], p + 8 * k, 8); break;
      case DType::kF16: { uint16_t x; std::memcpy(&x, p + 2 * k, 2); h.f[k] = half_to_float(x); break; }
      case DType::kI64: std::memcpy(&h.i[k], p + 8 * k, 8); break;
      case DType::kI32: { int32_t x; std::memcpy(&x, p + 4 * k, 4); h.i[k] = x; break; }
      case DType::kBool: h.i[k] = p[k] != std::byte{0}; break;
      case DType::kU8: h.i[k] = static_cast<uint8_t>(p[k]); break;
      case DType::kI8: h.i[k] = static_cast<int8_t>(p[k]); break;
    }
  }
  return h;
}

WeightData weight_from_host(const HostTensor& h) {
  WeightData w;
  w.type = {h.dtype, h.shape};
  const int64_t n = h.numel();
  w.bytes.resize(byte_size(w.type));
  std::byte* p = w.bytes.data();
  for (int64_t k = 0; k < n; ++k) {
    switch (h.dtype) {
      case DType::kF32: { float x = static_cast<float>(h.f[k]); std::memcpy(p + 4 * k, &x, 4); break; }
      case DType::kF64: std::memcpy(p + 8 * k, &h.f[k], 8); break;
      case DType::kF16: { uint16_t x = float_to_half(static_cast<float>(h.f[k])); std::memcpy(p + 2 * k, &x, 2); break; }
      case DType::kI64: std::memcpy(p + 8 * k, &h.i[k], 8); break;
      case DType::kI32: { int32_t x = static_cast<int32_t>(h.i[k]); std::memcpy(p + 4 * k, &x, 4); break; }
      case DType::kBool: p[k] = std::byte(h.i[k] != 0); break;
      case DType::kU8:
      case DType::kI8: p[k] = std::byte(static_cast<uint8_t>(h.i[k])); break;
    }
  }
  return w;
}

HostTensor host_ints(const std::vector<int64_t>& v) {
  HostTensor h;
  h.dtype = DType::kI64;
  h.shape = Shape{static_cast<int64_t>(v.size())};
  h.i = v;
  return h;
}

std::vector<int64_t> host_to_ints(const HostTensor& h) {
  std::vector<int64_t> v(h.numel());
  for (int64_t k = 0; k < h.numel(); ++k) v[k] = h.get_i(k);
  return v;
}

Expected<Shape> shape_from_values(const std::vector<int64_t>& dims) {
  if (dims.size() > Shape::kMaxRank)
    return Error{"shape of rank " + std::to_string(dims.size()) + " exceeds the maximum rank " +
                 std::to_string(Shape::kMaxRank)};
  Shape s;
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel))
      return Error{"invalid shape " + to_string(Shape(std::span<const int64_t>(
                                          dims.data(), std::min<size_t>(dims.size(), 8))))};
    s.push_back(d);
  }
  return s;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int k = 0; k < rank; ++k) {
    int ia = k - (rank - a.rank()), ib = k - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

std::vector<int64_t> broadcast_map(const Shape& out, const Shape& in) {
  const int rank = out.rank(), off = rank - in.rank();
  std::vector<int64_t> in_stride(rank, 0);
  int64_t s = 1;
  for (int k = in.rank() - 1; k >= 0; --k) {
    in_stride[k + off] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
  std::vector<int64_t> map(out.numel());
  std::vector<int64_t> idx(rank, 0);
  int64_t pos = 0;
  for (int64_t& m : map) {
    m = pos;
    for (int k = rank - 1; k >= 0; --k) {
      pos += in_stride[k];
      if (++idx[k] < out[k]) break;
      pos -= in_stride[k] * out[k];
      idx[k] = 0;
    }
  }
  return map;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.rank(), 1);
  for (int k = s.rank() - 2; k >= 0; --k) st[k] = st[k + 1] * s[k + 1];
  return st;
}

void copy_element(const HostTensor& from, int64_t k, HostTensor* to, int64_t j) {
  if (to->is_float()) to->f[j] = round_to(to->dtype, from.get_f(k));
  else to->i[j] = wrap_int(to->dtype, from.get_i(k));
}

}  // namespace tso::onnx_frontend
