#include "frontend/resnet18.h"

#include <string>
#include <vector>

#include "frontend/random_weights.h"

namespace tso {

namespace {

constexpr int64_t kStageChannels[] = {64, 128, 256, 512};
constexpr int64_t kClasses = 1000;

class ResNet18Builder {
 public:
  explicit ResNet18Builder(const ResNet18Options& o) : o_(o), b_("resnet18") {}

  Expected<Graph> build() {
    const TensorType image{DType::kF32, Shape{o_.batch, 3, o_.height, o_.width}};
    Expected<TensorRef> x = b_.input("input", image);
    x = conv_bn(*x, "conv1", "bn1", 64, 7, 2, true);
    if (!x) return x.error();
    x = max_pool(*x);
    for (int s = 0; s < 4 && x; ++s) {
      const std::string stage = "layer" + std::to_string(s + 1);
      x = basic_block(*x, stage + ".0", kStageChannels[s], s == 0 ? 1 : 2);
      if (x) x = basic_block(*x, stage + ".1", kStageChannels[s], 1);
    }
    if (x) x = b_.add1(Op::GlobalAvgPool, {*x}, {}, "avgpool");
    if (x) x = b_.add1(Op::Flatten, {*x}, Attrs().set(AttrKey::axis, int64_t{1}), "flatten");
    if (x) x = fc(*x);
    if (!x) return x.error();
    b_.output("output", *x);
    return b_.finish();
  }

 private:
  // `use` tells random_weight what the tensor feeds, as an importer would.
  TensorRef weight(const std::string& name, Shape shape, const onnx_frontend::WeightUse& use) {
    TensorType type{DType::kF32, shape};
    return b_.weight(name, type, onnx_frontend::random_weight(o_.seed, name, type, use));
  }

  // A k x k convolution without bias (padding k/2), then batchnorm and
  // optionally ReLU.
  Expected<TensorRef> conv_bn(TensorRef x, const std::string& conv, const std::string& bn,
                              int64_t channels, int64_t k, int64_t stride, bool relu) {
    const int64_t in = b_.type(x).shape[1], p = k / 2;
    TensorRef w = weight(conv + ".weight", Shape{channels, in, k, k}, {"Conv", 1, false});
    Attrs a;
    a.set(AttrKey::stride, std::vector<int64_t>{stride, stride});
    a.set(AttrKey::pad, Padding{Padding::kExplicit, {p, p, p, p}});
    Expected<TensorRef> y = b_.add1(Op::Conv2d, {x, w}, a, conv);
    if (!y) return y;
    std::vector<TensorRef> args = {*y};
    const char* params[] = {"weight", "bias", "running_mean", "running_var"};
    for (int i = 0; i < 4; ++i)
      args.push_back(
          weight(bn + "." + params[i], Shape{channels}, {"BatchNormalization", i + 1, false}));
    // torchvision's eps as ONNX stores it (a float), so the written model
    // imports back to this very graph.
    y = b_.add1(Op::BatchNorm, args, Attrs().set(AttrKey::epsilon, double(1e-5f)), bn);
    if (!y || !relu) return y;
    return b_.add1(Op::Relu, {*y}, {}, bn + ".relu");
  }

  Expected<TensorRef> max_pool(TensorRef x) {
    Attrs a;
    a.set(AttrKey::kernel, std::vector<int64_t>{3, 3});
    a.set(AttrKey::stride, std::vector<int64_t>{2, 2});
    a.set(AttrKey::pad, Padding{Padding::kExplicit, {1, 1, 1, 1}});
    return b_.add1(Op::MaxPool, {x}, a, "maxpool");
  }

  // Two 3x3 convolutions and the shortcut, which is a strided 1x1
  // convolution with batchnorm where the block changes the shape.
  Expected<TensorRef> basic_block(TensorRef x, const std::string& name, int64_t channels,
                                  int64_t stride) {
    Expected<TensorRef> y = conv_bn(x, name + ".conv1", name + ".bn1", channels, 3, stride, true);
    if (y) y = conv_bn(*y, name + ".conv2", name + ".bn2", channels, 3, 1, false);
    if (!y) return y;
    Expected<TensorRef> shortcut = x;
    if (stride != 1 || b_.type(x).shape[1] != channels)
      shortcut =
          conv_bn(x, name + ".downsample.0", name + ".downsample.1", channels, 1, stride, false);
    if (!shortcut) return shortcut;
    y = b_.add1(Op::Add, {*y, *shortcut}, {}, name + ".add");
    if (!y) return y;
    return b_.add1(Op::Relu, {*y}, {}, name + ".relu");
  }

  Expected<TensorRef> fc(TensorRef x) {
    TensorRef w = weight("fc.weight", Shape{kClasses, 512}, {"Gemm", 1, true});
    TensorRef bias = weight("fc.bias", Shape{kClasses}, {"Gemm", 2, true});
    return b_.add1(Op::Gemm, {x, w, bias}, Attrs().set(AttrKey::trans_b, int64_t{1}), "fc");
  }

  ResNet18Options o_;
  GraphBuilder b_;
};

}  // namespace

Expected<Graph> build_resnet18(const ResNet18Options& options) {
  const std::string what = "batch " + std::to_string(options.batch) + " of " +
                           std::to_string(options.height) + "x" + std::to_string(options.width);
  if (options.batch < 1 || options.height < 1 || options.width < 1)
    return Error{"resnet18: the batch and the image size must be positive, not " + what};
  // The first convolution's output, [batch,64,height/2,width/2] rounded up,
  // is the largest tensor besides the image; both must fit in int64.
  int64_t image = 3, conv1 = 64;
  if (__builtin_mul_overflow(image, options.batch, &image) ||
      __builtin_mul_overflow(image, options.height, &image) ||
      __builtin_mul_overflow(image, options.width, &image) ||
      __builtin_mul_overflow(conv1, options.batch, &conv1) ||
      __builtin_mul_overflow(conv1, (options.height + 1) / 2, &conv1) ||
      __builtin_mul_overflow(conv1, (options.width + 1) / 2, &conv1))
    return Error{"resnet18: " + what + " is too large: its tensors would have over 2^63 elements"};
  return ResNet18Builder(options).build();
}

}  // namespace tso
