// Convolution and pooling over NCHW tensors. conv2d lowers each (image,
// group) to one GEMM through im2col, so float and double run at Eigen's GEMM
// speed and Mod reuses the same lowering with its exact product.
#include <algorithm>

#include "runtime/common/grid_sample.h"
#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

namespace {

// One spatial dimension of a sliding window: input extent, kernel, stride,
// dilation, the resolved leading and trailing padding, and the output extent.
struct Axis {
  int64_t in, k, stride, dil, pad_lo, pad_hi, out;
  int64_t span() const { return (k - 1) * dil + 1; }
};

// Resolves padding and output size for dimension `d` (0 = H, 1 = W), per the
// contract in core/ops.h: `same` gives ceil(in / stride) outputs with any odd
// padding at the end; ceil_mode rounds up but drops a last window that would
// start in the trailing padding.
Expected<Axis> resolve(std::string_view op, const Padding& p, int d, int64_t in, int64_t k,
                       int64_t stride, int64_t dil, bool ceil_mode) {
  if (k < 1 || stride < 1 || dil < 1)
    return shape_error(op, "kernel, stride and dilation must be positive");
  Axis a{in, k, stride, dil, 0, 0, 0};
  if (p.mode == Padding::kSame) {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + a.span() - in);
    a.pad_lo = total / 2;
    a.pad_hi = total - a.pad_lo;
  } else if (p.mode == Padding::kExplicit) {
    a.pad_lo = p.pads[d];
    a.pad_hi = p.pads[d + 2];
    if (a.pad_lo < 0 || a.pad_hi < 0) return shape_error(op, "negative padding");
  }
  int64_t room = in + a.pad_lo + a.pad_hi - a.span();
  if (room < 0)
    return shape_error(op, "window of " + std::to_string(a.span()) +
                               " is larger than the padded input of " +
                               std::to_string(in + a.pad_lo + a.pad_hi));
  a.out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (a.out - 1) * stride >= in + a.pad_lo) --a.out;
  return a;
}

Expected<std::pair<Axis, Axis>> resolve_hw(std::string_view op, const Shape& x, int64_t kh,
                                           int64_t kw, const Attrs& attrs, bool ceil_mode) {
  const std::vector<int64_t>& st = attrs.ints(AttrKey::stride);
  std::vector<int64_t> dil{1, 1};
  if (attrs.has(AttrKey::dilation)) dil = attrs.ints(AttrKey::dilation);
  if (st.size() != 2 || dil.size() != 2) return shape_error(op, "stride and dilation need 2 values");
  const Padding& p = attrs.pad(AttrKey::pad);
  Expected<Axis> h = resolve(op, p, 0, x[2], kh, st[0], dil[0], ceil_mode);
  if (!h) return h.error();
  Expected<Axis> w = resolve(op, p, 1, x[3], kw, st[1], dil[1], ceil_mode);
  if (!w) return w.error();
  return std::pair{*h, *w};
}

// Copies the receptive fields of one image's channels [c0, c0 + cg) into
// `col`, a [cg * kh * kw, oh * ow] row-major matrix, zeros where a window
// reaches into padding. The valid output columns of each row are computed
// once, so the inner loop is a plain strided copy.
template <class S>
void im2col(const S* x, int64_t cg, const Axis& h, const Axis& w, S* col) {
  const int64_t plane = h.in * w.in;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t i = 0; i < h.k; ++i)
      for (int64_t j = 0; j < w.k; ++j) {
        const int64_t off_w = j * w.dil - w.pad_lo;
        // ow in [lo, hi) reads iw = ow * stride + off_w inside [0, w.in).
        int64_t lo = off_w >= 0 ? 0 : std::min((-off_w + w.stride - 1) / w.stride, w.out);
        int64_t hi = std::clamp<int64_t>((w.in - off_w + w.stride - 1) / w.stride, lo, w.out);
        for (int64_t oh = 0; oh < h.out; ++oh, col += w.out) {
          int64_t ih = oh * h.stride + i * h.dil - h.pad_lo;
          if (ih < 0 || ih >= h.in) {
            std::fill(col, col + w.out, fn::zero<S>());
            continue;
          }
          const S* row = x + c * plane + ih * w.in + off_w;
          std::fill(col, col + lo, fn::zero<S>());
          for (int64_t ow = lo; ow < hi; ++ow) col[ow] = row[ow * w.stride];
          std::fill(col + hi, col + w.out, fn::zero<S>());
        }
      }
}

}  // namespace

template <class S>
Expected<Tensor<S>> ConvPool<S>::conv2d(const Tensor<S>& x, const Tensor<S>& w,
                                         const Tensor<S>* bias, const Attrs& a) {
  if (x.shape.rank() != 4 || w.shape.rank() != 4)
    return shape_error("conv2d", "input " + shape_text(x.shape) + " and kernel " +
                                     shape_text(w.shape) + " must both have rank 4");
  const int64_t n = x.shape[0], c = x.shape[1], co = w.shape[0], groups = a.i(AttrKey::groups);
  if (groups < 1 || c % groups != 0 || co % groups != 0 || w.shape[1] * groups != c)
    return shape_error("conv2d", "input " + shape_text(x.shape) + " and kernel " +
                                     shape_text(w.shape) + " do not match with groups = " +
                                     std::to_string(groups));
  Expected<std::pair<Axis, Axis>> hw = resolve_hw("conv2d", x.shape, w.shape[2], w.shape[3], a, false);
  if (!hw) return hw.error();
  const auto& [h, wd] = *hw;

  const int64_t cg = c / groups, cog = co / groups;
  const int64_t rows = cg * h.k * wd.k, cols = h.out * wd.out;
  // A 1x1 kernel with unit stride and no padding reads the input as it is.
  const bool direct = h.k == 1 && wd.k == 1 && h.stride == 1 && wd.stride == 1 &&
                      h.pad_lo + h.pad_hi + wd.pad_lo + wd.pad_hi == 0;
  std::vector<S> col(direct ? 0 : rows * cols);
  Tensor<S> y(Shape{n, co, h.out, wd.out});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const S* xg = x.data.data() + (b * c + g * cg) * h.in * wd.in;
      if (!direct) im2col(xg, cg, h, wd, col.data());
      Linalg<S>::product(cog, cols, rows, w.data.data() + g * cog * rows, false,
                         direct ? xg : col.data(), false,
                         y.data.data() + (b * co + g * cog) * cols);
    }
  if (bias) {
    if (bias->numel() != co)
      return shape_error("conv2d", "bias " + shape_text(bias->shape) + " must have " +
                                       std::to_string(co) + " elements");
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < co; ++o) {
        S* yo = y.data.data() + (b * co + o) * cols;
        for (int64_t i = 0; i < cols; ++i) yo[i] = yo[i] + bias->data[o];
      }
  }
  Elementwise<S>::activate(a, y.data);
  return y;
}

namespace {

// Visits every pooling window: f(plane, oh, ow, h0, h1, w0, w1, count_pad)
// where [h0,h1) x [w0,w1) is the window clipped to the input and count_pad
// the size of the window clipped to the padded input.
template <class S, class F>
Expected<Tensor<S>> pool(std::string_view op, const Tensor<S>& x, const Attrs& a, F f) {
  if (x.shape.rank() != 4) return shape_error(op, "input " + shape_text(x.shape) + " is not NCHW");
  const std::vector<int64_t>& k = a.ints(AttrKey::kernel);
  if (k.size() != 2) return shape_error(op, "kernel needs 2 values");
  Expected<std::pair<Axis, Axis>> hw = resolve_hw(op, x.shape, k[0], k[1], a, a.i(AttrKey::ceil_mode) != 0);
  if (!hw) return hw.error();
  const auto& [h, w] = *hw;
  Tensor<S> y(Shape{x.shape[0], x.shape[1], h.out, w.out});
  S* out = y.data.data();
  for (int64_t p = 0; p < x.shape[0] * x.shape[1]; ++p) {
    const S* plane = x.data.data() + p * h.in * w.in;
    for (int64_t oh = 0; oh < h.out; ++oh)
      for (int64_t ow = 0; ow < w.out; ++ow) {
        int64_t hs = oh * h.stride - h.pad_lo, ws = ow * w.stride - w.pad_lo;
        int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + h.k, h.in);
        int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + w.k, w.in);
        int64_t padded = (std::min(hs + h.k, h.in + h.pad_hi) - std::max(hs, -h.pad_lo)) *
                         (std::min(ws + w.k, w.in + w.pad_hi) - std::max(ws, -w.pad_lo));
        *out++ = f(plane, w.in, h0, h1, w0, w1, padded);
      }
  }
  return y;
}

}  // namespace

template <class S>
Expected<Tensor<S>> ConvPool<S>::avgpool(const Tensor<S>& x, const Attrs& a) {
  const bool include_pad = a.i(AttrKey::count_include_pad) != 0;
  return pool("avgpool", x, a,
              [include_pad](const S* p, int64_t ld, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                            int64_t padded) {
                S sum = fn::zero<S>();
                for (int64_t i = h0; i < h1; ++i)
                  for (int64_t j = w0; j < w1; ++j) sum += p[i * ld + j];
                int64_t count = include_pad ? padded : (h1 - h0) * (w1 - w0);
                return fn::div(sum, fn::constant<S>(double(count)));
              });
}

template <class S>
Expected<Tensor<S>> ConvPool<S>::maxpool(const Tensor<S>& x, const Attrs& a) {
  return pool("maxpool", x, a,
              [](const S* p, int64_t ld, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t) {
                if (h0 >= h1 || w0 >= w1) return fn::zero<S>();  // window entirely in padding
                S best = p[h0 * ld + w0];
                for (int64_t i = h0; i < h1; ++i)
                  for (int64_t j = w0; j < w1; ++j)
                    if (fn::less(best, p[i * ld + j])) best = p[i * ld + j];
                return best;
              });
}

template <class S>
Expected<Tensor<S>> ConvPool<S>::global_avgpool(const Tensor<S>& x) {
  if (x.shape.rank() < 3)
    return shape_error("global_avgpool", "input " + shape_text(x.shape) + " has no spatial dims");
  Shape out{x.shape[0], x.shape[1]};
  for (int i = 2; i < x.shape.rank(); ++i) out.push_back(1);
  Tensor<S> y(out);
  const int64_t count = out.numel() == 0 ? 0 : x.numel() / out.numel();
  const S scale = fn::constant<S>(double(count));
  for (int64_t p = 0; p < out.numel(); ++p) {
    S sum = fn::zero<S>();
    for (int64_t i = 0; i < count; ++i) sum += x.data[p * count + i];
    y.data[p] = fn::div(sum, scale);
  }
  return y;
}

template <class S>
Expected<Tensor<S>> ConvPool<S>::grid_sample(const Tensor<S>& x, const Tensor<S>& grid,
                                             const Attrs& a) {
  if constexpr (fn::Real<S>) {
    const Shape& xs = x.shape;
    const Shape& gs = grid.shape;
    rt::GridSampling s;
    if (!rt::parse_grid_sampling(a.str(AttrKey::mode), a.str(AttrKey::padding_mode),
                                 a.i(AttrKey::align_corners), xs[2], xs[3], &s))
      return shape_error("grid_sample", "unknown mode or padding_mode");
    const int64_t channels = xs[1], plane = xs[2] * xs[3], positions = gs[1] * gs[2];
    Tensor<S> y(Shape{xs[0], channels, gs[1], gs[2]});
    for (int64_t n = 0; n < xs[0]; ++n)
      for (int64_t p = 0; p < positions; ++p) {
        const S* g = grid.data.data() + (n * positions + p) * 2;
        const rt::GridTaps t =
            rt::grid_taps(s, static_cast<double>(g[0]), static_cast<double>(g[1]));
        for (int64_t c = 0; c < channels; ++c) {
          const S* in = x.data.data() + (n * channels + c) * plane;
          S v = 0;
          for (int k = 0; k < t.count; ++k) v += static_cast<S>(t.weight[k]) * in[t.index[k]];
          y.data[(n * channels + c) * positions + p] = v;
        }
      }
    return y;
  } else {
    return shape_error("grid_sample", "has no Mod image (the generator does not enumerate it)");
  }
}

template struct ConvPool<float>;
template struct ConvPool<double>;
template struct ConvPool<Mod>;

}  // namespace tso::ref
