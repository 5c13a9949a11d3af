#include "frontend/csrnet.h"

#include <iterator>
#include <string>
#include <vector>

#include "frontend/random_weights.h"

namespace tso {

namespace {

// VGG-16's first ten convolutions by output channels; 0 is a 2x2 max pool.
constexpr int64_t kFrontEnd[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512};
// The dilated back end.
constexpr int64_t kBackEnd[] = {512, 512, 512, 256, 128, 64};

class CsrNetBuilder {
 public:
  explicit CsrNetBuilder(const CsrNetOptions& o) : o_(o), b_("csrnet") {}

  Expected<Graph> build() {
    const TensorType image{DType::kF32, Shape{o_.batch, 3, o_.height, o_.width}};
    Expected<TensorRef> x = b_.input("image", image);
    int convs = 0, pools = 0;
    for (int64_t c : kFrontEnd) {
      if (c == 0)
        x = max_pool(*x, "pool" + std::to_string(++pools));
      else
        x = conv(*x, "frontend." + std::to_string(++convs), c, 3, 1, true);
      if (!x) return x.error();
    }
    for (size_t k = 0; k < std::size(kBackEnd); ++k) {
      x = conv(*x, "backend." + std::to_string(k + 1), kBackEnd[k], 3, 2, true);
      if (!x) return x.error();
    }
    x = conv(*x, "output", 1, 1, 1, false);
    if (!x) return x.error();
    b_.output("density", *x);
    return b_.finish();
  }

 private:
  TensorRef weight(const std::string& name, Shape shape, int input) {
    TensorType type{DType::kF32, shape};
    return b_.weight(name, type,
                     onnx_frontend::random_weight(o_.seed, name, type, {"Conv", input, false}));
  }

  // A k x k convolution with bias, padded to keep the spatial size.
  Expected<TensorRef> conv(TensorRef x, const std::string& name, int64_t channels, int64_t k,
                           int64_t dilation, bool relu) {
    const int64_t in = b_.type(x).shape[1], p = dilation * (k - 1) / 2;
    TensorRef w = weight(name + ".weight", Shape{channels, in, k, k}, 1);
    TensorRef bias = weight(name + ".bias", Shape{channels}, 2);
    Attrs a;
    a.set(AttrKey::pad, Padding{Padding::kExplicit, {p, p, p, p}});
    a.set(AttrKey::dilation, std::vector<int64_t>{dilation, dilation});
    Expected<TensorRef> y = b_.add1(Op::Conv2d, {x, w, bias}, a, name);
    if (!y || !relu) return y;
    return b_.add1(Op::Relu, {*y}, {}, name + ".relu");
  }

  Expected<TensorRef> max_pool(TensorRef x, const std::string& name) {
    Attrs a;
    a.set(AttrKey::kernel, std::vector<int64_t>{2, 2});
    a.set(AttrKey::stride, std::vector<int64_t>{2, 2});
    return b_.add1(Op::MaxPool, {x}, a, name);
  }

  CsrNetOptions o_;
  GraphBuilder b_;
};

}  // namespace

Expected<Graph> build_csrnet(const CsrNetOptions& options) {
  const std::string what = "batch " + std::to_string(options.batch) + " of " +
                           std::to_string(options.height) + "x" + std::to_string(options.width);
  if (options.batch < 1 || options.height < 8 || options.width < 8)
    return Error{"csrnet: the batch must be positive and the image at least 8x8, not " + what};
  // The first two convolutions' outputs, [batch,64,height,width], are the
  // largest tensors; their element count must fit in int64.
  int64_t elements = 64;
  if (__builtin_mul_overflow(elements, options.batch, &elements) ||
      __builtin_mul_overflow(elements, options.height, &elements) ||
      __builtin_mul_overflow(elements, options.width, &elements))
    return Error{"csrnet: " + what + " is too large: its tensors would have over 2^63 elements"};
  return CsrNetBuilder(options).build();
}

}  // namespace tso
