// Whether a model's weights stay cached, measured on the model, and that an
// operator is timed with its weights cached (the times themselves are the
// machine's, printed by `tso optimize`, never asserted).
#include "runtime/cpu/cache_residency.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/signature.h"
#include "core/signature_graph.h"
#include "core/text_format.h"
#include "runtime/cpu/profiler.h"
#include "runtime/cpu/run_model.h"

namespace tso::cpu {
namespace {

// NasRNN's shape in small: a chain of products of a row by 1 MB matrices,
// timed both ways (the figures are the host's); the weight bytes are
// counted exactly.
TEST(CacheResidency, AModelIsTimedRunAfterRunAndWithItsWeightsEvicted) {
  const TensorType m{DType::kF32, Shape({512, 512})};
  GraphBuilder b("chain");
  TensorRef x = b.input("x", TensorType{DType::kF32, Shape({1, 512})});
  for (int i = 0; i < 2; ++i) {
    auto data = std::make_shared<WeightData>();
    data->type = m;
    data->bytes = random_tensor_bytes(m, i);
    Expected<TensorRef> p = b.add1(Op::Matmul, {x, b.weight("w" + std::to_string(i), m, data)});
    ASSERT_TRUE(p.ok()) << p.error().message;
    Expected<TensorRef> t = b.add1(Op::Tanh, {*p});
    ASSERT_TRUE(t.ok()) << t.error().message;
    x = *t;
  }
  b.output("y", x);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;
  Expected<WeightResidency> r = measure_weight_residency(*g, 0, "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weight_bytes, 2 * 512 * 512 * 4);
  EXPECT_GT(r->warm_ms, 0);
  EXPECT_GT(r->evicted_ms, 0);
  EXPECT_EQ(r->cached(), r->warm_ms < 0.9 * r->evicted_ms);
}

TEST(CacheResidency, AModelThatCannotRunIsAnError) {
  Expected<Graph> g = parse_graph(R"(graph g {
  input x: f32[2,3]
  %a: f32[2,3] = opaque(x, op_type="Foo")
  output y = %a
})");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_FALSE(measure_weight_residency(*g, 0, "").ok());
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
