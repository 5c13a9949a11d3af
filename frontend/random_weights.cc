#include "frontend/random_weights.h"

#include <cmath>
#include <cstring>
#include <numbers>

#include "frontend/constant_folding.h"

namespace tso::onnx_frontend {

namespace {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// FNV-1a: a hash of the name that does not change between platforms.
uint64_t name_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double uniform() { return (splitmix64(&state_) >> 11) * 0x1.0p-53; }  // [0, 1)
  // Uniform with mean 0 and variance 1: as good as a normal for keeping
  // activations finite, and several times faster to draw (import speed
  // matters for graph-only models of 100M parameters).
  double unit() { return (2.0 * uniform() - 1.0) * std::numbers::sqrt3; }

 private:
  uint64_t state_;
};

int64_t fan_in(const Shape& s, const WeightUse& use) {
  const int r = s.rank();
  if (use.op_type == "Conv" || use.op_type == "ConvTranspose" || r > 2 || r < 2) {
    int64_t f = 1;
    for (int k = 1; k < r; ++k) f *= s[k];
    return std::max<int64_t>(f, 1);
  }
  if (use.op_type == "Gemm") return std::max<int64_t>(use.trans_b ? s[1] : s[0], 1);
  return std::max<int64_t>(s[0], 1);  // MatMul's B and embeddings: [K, N]
}

}  // namespace

std::shared_ptr<const WeightData> random_weight(uint64_t seed, std::string_view name,
                                                const TensorType& type, const WeightUse& use) {
  Rng rng(seed ^ name_hash(name));
  const bool norm_scale =
      (use.op_type == "BatchNormalization" || use.op_type == "LayerNormalization") &&
      use.input == 1;
  const bool variance = use.op_type == "BatchNormalization" && use.input == 4;
  const double he = std::sqrt(2.0 / static_cast<double>(fan_in(type.shape, use)));
  auto draw = [&]() {
    if (variance) return 0.5 + rng.uniform();
    if (norm_scale) return 1.0 + 0.01 * rng.unit();
    if (type.shape.rank() >= 2) return he * rng.unit();
    return 0.01 * rng.unit();
  };
  // f32, nearly every weight, is written in place: graph-only models hold
  // 100M of them, and a double per element on the way costs 3x the memory.
  if (type.dtype == DType::kF32) {
    auto w = std::make_shared<WeightData>();
    w->type = type;
    w->bytes.resize(byte_size(type));
    std::byte* out = w->bytes.data();
    for (int64_t k = 0, n = type.shape.numel(); k < n; ++k) {
      const float v = static_cast<float>(draw());
      std::memcpy(out + 4 * k, &v, 4);
    }
    return w;
  }
  HostTensor h = HostTensor::zeros(type.dtype, type.shape);
  if (h.is_float())
    for (double& v : h.f) v = draw();
  return std::make_shared<WeightData>(weight_from_host(h));
}

}  // namespace tso::onnx_frontend
