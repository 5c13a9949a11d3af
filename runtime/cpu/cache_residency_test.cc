// The last-level cache's capacity probe and the residency rule; that an
// operator is timed with its weights cached (the times themselves are the
// machine's, printed by `tso optimize`, never asserted).
#include "runtime/cpu/cache_residency.h"

#include <gtest/gtest.h>

#include "core/signature.h"
#include "core/text_format.h"
#include "runtime/cpu/profiler.h"

namespace tso::cpu {
namespace {

constexpr int64_t kMB = int64_t{1} << 20;

TEST(CacheResidency, TheCapacityIsOneOfTheSizesTried) {
  const int64_t c = cached_capacity_bytes(0);
  EXPECT_GE(c, 8 * kMB);
  EXPECT_LE(c, 256 * kMB);
  EXPECT_EQ(c % (8 * kMB), 0) << c;
}

TEST(CacheResidency, WeightsStayCachedUpToThreeQuartersOfTheCapacity) {
  EXPECT_TRUE(weights_stay_cached(0, 8 * kMB));
  EXPECT_TRUE(weights_stay_cached(75 * kMB, 100 * kMB));
  EXPECT_FALSE(weights_stay_cached(75 * kMB + 1, 100 * kMB));
  EXPECT_FALSE(weights_stay_cached(84 * kMB, 96 * kMB));  // NasRNN in a lean hour
}

TEST(CacheResidency, AnOperatorIsTimedWithItsWeightsCached) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[1,512]
  weight w: f32[512,512]
  %y = matmul(x, w)
  output y = %y
})");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Node& n = g->node(2);
  const TensorType in[] = {g->type(n.args[0]), g->type(n.args[1])};
  ProfileOptions o;
  o.iters = 5;
  o.weights_cached = true;
  Expected<rt::CostEntry> e = profile_node(n, in, o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->signature, op_signature(*g, 2));
  EXPECT_EQ(e->samples, 5);
  EXPECT_GT(e->min_ms, 0);
  evict_private_caches(1);  // another thread count: its own scratch buffers
  evict_private_caches(0);
}

}  // namespace
}  // namespace tso::cpu
