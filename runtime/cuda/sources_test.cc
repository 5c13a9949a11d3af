#include "runtime/cuda/sources.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/cuda/test_graphs.h"

namespace tso::cuda {
namespace {

std::vector<float> floats_at(const std::vector<std::byte>& image, int64_t offset, int64_t n) {
  std::vector<float> v(n);
  std::memcpy(v.data(), image.data() + offset, n * sizeof(float));
  return v;
}

TEST(StaticImage, ConstantsAndStoredWeightsLandAtTheirOffsets) {
  GraphBuilder b("g");
  auto data = std::make_shared<WeightData>();
  data->type = {DType::kF32, Shape{2}};
  const float values[2] = {1.5f, -2.0f};
  data->bytes.resize(sizeof values);
  std::memcpy(data->bytes.data(), values, sizeof values);
  TensorRef w = b.weight("w", data->type, data);
  Attrs eye;
  eye.set(AttrKey::shape, std::vector<int64_t>{2, 2});
  TensorRef e = *b.add1(Op::ConstEye, {}, eye);
  TensorRef s = *b.add1(Op::Add, {e, w});
  b.output("y", s);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;
  Expected<Plan> p = make_plan(*g);
  ASSERT_TRUE(p.ok());
  Expected<std::vector<std::byte>> image = static_image(*g, *p, {});
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(floats_at(*image, p->tensor(w).offset, 2), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(floats_at(*image, p->tensor(e).offset, 4), (std::vector<float>{1, 0, 0, 1}));
}

TEST(StaticImage, MoreThanTheMachineHasIsAnErrorBeforeAllocating) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[1099511627776]
  %r = relu(x)
  output y = %r
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  Expected<std::vector<std::byte>> image = static_image(g, *p, {});
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(
      image.error().message.rfind(
          "needs 4.0 TiB for the host image of the weights and inputs but the machine has ", 0),
      0u)
      << image.error().message;
}

TEST(StaticImage, WeightWithoutDataNeedsTheRandomOption) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[2,3]
  weight w: f32[3,4]
  %m = matmul(x, w)
  output y = %m
})");
  Expected<Plan> p = make_plan(g);
  ASSERT_TRUE(p.ok());
  Expected<std::vector<std::byte>> none = static_image(g, *p, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "node 'w' (weight): weight 'w' has no stored data (ask for random weights to run it "
            "anyway)");
  Expected<std::vector<std::byte>> a = static_image(g, *p, {.random_seed = 3});
  Expected<std::vector<std::byte>> b = static_image(g, *p, {.random_seed = 3});
  Expected<std::vector<std::byte>> c = static_image(g, *p, {.random_seed = 4});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b) << "seeded";
  EXPECT_NE(*a, *c);
  std::vector<float> w = floats_at(*a, p->tensor({1, 0}).offset, 12);
  for (float v : w) EXPECT_LE(std::abs(v), 1.0f / std::sqrt(3.0f) + 1e-6f);
}

}  // namespace
}  // namespace tso::cuda
