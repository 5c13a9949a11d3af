#include "runtime/cuda/sources.h"

#include <cmath>
#include <cstring>
#include <random>

#include "runtime/common/memory.h"

namespace tso::cuda {
namespace {

void fill_constant(const Node& n, float* y) {
  const Shape s(std::span<const int64_t>(n.attrs.ints(AttrKey::shape)));
  const int64_t count = s.numel();
  std::fill(y, y + count, n.op == Op::ConstOnes || n.op == Op::ConstPool ? 1.0f : 0.0f);
  if (n.op == Op::ConstEye)
    for (int64_t i = 0; i < s[0]; ++i) y[i * s[1] + i] = 1.0f;
  if (n.op == Op::ConstEyeConv)
    for (int64_t i = 0; i < s[0]; ++i) y[((i * s[1] + i) * s[2] + s[2] / 2) * s[3] + s[3] / 2] = 1;
}

uint64_t name_hash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::vector<float> random_values(const TensorType& type, const std::string& name, uint64_t seed) {
  std::mt19937_64 rng(seed ^ name_hash(name));
  const Shape& s = type.shape;
  std::vector<float> v(static_cast<size_t>(s.numel()));
  if (s.rank() >= 2) {
    const double fan_in = s[0] == 0 ? 1.0 : std::max<double>(1.0, double(s.numel()) / s[0]);
    std::uniform_real_distribution<float> d(-1.0f / std::sqrt(fan_in), 1.0f / std::sqrt(fan_in));
    for (float& x : v) x = d(rng);
  } else {
    std::uniform_real_distribution<float> d(0.5f, 1.5f);
    for (float& x : v) x = d(rng);
  }
  return v;
}

Expected<std::vector<std::byte>> static_image(const Graph& g, const Plan& plan,
                                              const SourceOptions& options) {
  TSO_RETURN_IF_ERROR(
      rt::check_allocation(plan.static_bytes, "the host image of the weights and inputs"));
  std::vector<std::byte> image(static_cast<size_t>(plan.static_bytes));
  for (int i : plan.sources) {
    const Node& n = g.node(i);
    const TensorPlan& t = plan.tensors[plan.first_tensor[i]];
    std::byte* dst = image.data() + t.offset;
    if (n.op == Op::Weight && n.data) {
      if (static_cast<int64_t>(n.data->bytes.size()) != t.bytes)
        return Error{describe_node(g, i) + ": stored data has " +
                     std::to_string(n.data->bytes.size()) + " bytes, " + to_string(t.type) +
                     " needs " + std::to_string(t.bytes)};
      std::memcpy(dst, n.data->bytes.data(), n.data->bytes.size());
    } else if (n.op == Op::Weight || n.op == Op::Input) {
      if (n.op == Op::Weight && !options.random_seed)
        return Error{describe_node(g, i) + ": weight '" + n.name +
                     "' has no stored data (ask for random weights to run it anyway)"};
      if (t.type.dtype != DType::kF32) {
        if (n.op == Op::Weight)
          return Error{describe_node(g, i) + ": cannot make random values of " + to_string(t.type)};
        continue;  // a non-f32 input starts zeroed; it is fed before a run
      }
      if (!options.random_seed) continue;
      std::vector<float> v = random_values(t.type, n.name, *options.random_seed);
      std::memcpy(dst, v.data(), v.size() * sizeof(float));
    } else {
      if (t.type.dtype != DType::kF32)
        return Error{describe_node(g, i) + ": constants are f32 only, got " + to_string(t.type)};
      fill_constant(n, reinterpret_cast<float*>(dst));
    }
  }
  return image;
}

}  // namespace tso::cuda
