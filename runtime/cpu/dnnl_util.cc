#include "runtime/cpu/dnnl_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <optional>

#include "core/quantized.h"

namespace tso::cpu {

Dims dims_of(const Shape& s) {
  if (s.rank() == 0) return {1};
  return Dims(s.begin(), s.end());
}

memory::data_type dnnl_type(DType t) {
  switch (t) {
    case DType::kF32:
      return memory::data_type::f32;
    case DType::kF16:
      return memory::data_type::f16;
    case DType::kI32:
      return memory::data_type::s32;
    case DType::kU8:
      return memory::data_type::u8;
    case DType::kI8:
      return memory::data_type::s8;
    default:
      return memory::data_type::undef;
  }
}

memory::desc plain_desc(const Dims& dims, memory::data_type dt) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<memory::dim>(dims[i + 1], 1);
  return memory::desc(dims, dt, strides);
}

memory::desc plain_desc(const TensorType& type) {
  return plain_desc(dims_of(type.shape), dnnl_type(type.dtype));
}

bool is_plain(const memory::desc& md) {
  if (md.get_inner_nblks() != 0) return false;
  // Strides of dimensions of extent 1 do not matter: [1,C,1,1] in NHWC is
  // the same bytes as in NCHW.
  const Dims dims = md.get_dims(), strides = md.get_strides();
  const Dims plain = plain_desc(dims, md.get_data_type()).get_strides();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != 1 && strides[i] != plain[i]) return false;
  return md.get_size() == plain_desc(dims, md.get_data_type()).get_size();
}

memory::desc same_order(const memory::desc& md, const Dims& dims) {
  const Dims st = md.get_strides();
  std::vector<int> order(dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return st[a] > st[b]; });
  Dims out(dims.size());
  int64_t stride = 1;
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
    out[order[k]] = stride;
    stride *= std::max<int64_t>(dims[order[k]], 1);
  }
  return memory::desc(dims, md.get_data_type(), out);
}

std::string impl_name(const char* kind, const dnnl::primitive_desc_base& pd) {
  return std::string(kind) + " " + pd.impl_info_str();
}

bool int8_sums_exact() {
  using dnnl::cpu_isa;
  static const bool exact = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case cpu_isa::avx2_vnni:
      case cpu_isa::avx2_vnni_2:
      case cpu_isa::avx512_core_vnni:
      case cpu_isa::avx512_core_bf16:
      case cpu_isa::avx512_core_fp16:
      case cpu_isa::avx512_core_amx:
      case cpu_isa::avx512_core_amx_fp16:
        return true;
      default:
        return false;
    }
  }();
  return exact;
}

bool int8_kernel_exact(const Graph& g, const Node& n) {
  constexpr int kMostWeight = 64;
  if (int8_sums_exact()) return true;
  const std::optional<Int8Form> f = int8_form(g, n);
  if (!f || f->x_type != DType::kU8) return false;
  if (n.op == Op::Conv2d && n.attrs.i(AttrKey::groups) != 1) return false;
  const Node& w = g.node(f->wq.node);
  if (!w.data) return false;
  return std::all_of(w.data->bytes.begin(), w.data->bytes.end(), [](std::byte b) {
    return std::abs(static_cast<int>(static_cast<int8_t>(b))) <= kMostWeight;
  });
}

}  // namespace tso::cpu
