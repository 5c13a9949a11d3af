// quantize_linear and dequantize_linear on the reference executor, by the
// shared formulas of runtime/common/quantize.h.
#include "runtime/common/quantize.h"

#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

namespace {

template <class S>
rt::QuantParams params_of(const Tensor<S>& x, const Tensor<S>& scale, int64_t axis) {
  rt::QuantParams p;
  if (scale.numel() == 1 || x.shape.rank() == 0) return p;
  p.extent = x.shape[static_cast<int>(axis)];
  for (int d = static_cast<int>(axis) + 1; d < x.shape.rank(); ++d) p.inner *= x.shape[d];
  return p;
}

}  // namespace

template <class S>
Expected<Tensor<S>> Quantize<S>::quantize(const Tensor<S>& x, const Tensor<S>& scale,
                                          const Tensor<S>& zero, int64_t axis, DType to) {
  if constexpr (fn::Real<S>) {
    const rt::QuantParams p = params_of(x, scale, axis);
    const rt::QuantRange r = to == DType::kU8 ? rt::kU8Range : rt::kI8Range;
    Tensor<S> y(x.shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = p.index(i);
      y.data[i] = static_cast<S>(
          rt::quantize_value(x.data[i], scale.data[c], static_cast<int>(zero.data[c]), r));
    }
    return y;
  } else {
    return shape_error("quantize_linear", "has no Mod image (the generator does not enumerate it)");
  }
}

template <class S>
Expected<Tensor<S>> Quantize<S>::dequantize(const Tensor<S>& x, const Tensor<S>& scale,
                                            const Tensor<S>& zero, int64_t axis) {
  if constexpr (fn::Real<S>) {
    const rt::QuantParams p = params_of(x, scale, axis);
    Tensor<S> y(x.shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = p.index(i);
      y.data[i] = rt::dequantize_value(static_cast<int64_t>(x.data[i]), scale.data[c],
                                       static_cast<int64_t>(zero.data[c]));
    }
    return y;
  } else {
    return shape_error("dequantize_linear",
                       "has no Mod image (the generator does not enumerate it)");
  }
}

template struct Quantize<float>;
template struct Quantize<double>;
template struct Quantize<Mod>;

}  // namespace tso::ref
