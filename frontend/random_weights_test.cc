// Graph-only models: initializers whose external data file is missing get
// seeded random weights, within the bytes the import may spend on them (the
// machine's available memory, or ImportOptions::max_random_weight_bytes);
// past that the import fails naming the initializer, before allocating.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"

namespace tso {
namespace {

using testing::declare;

// y = x @ w, w: f32[k, n] stored in "w.bin", which does not exist.
onnx::ModelProto graph_only(int64_t k, int64_t n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("proj");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, k});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, n});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(k);
  w->add_dims(n);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  auto* mm = g->add_node();
  mm->set_name("proj");
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("w");
  mm->add_output("y");
  return m;
}

Expected<ImportedModel> import_with(const onnx::ModelProto& m, std::optional<int64_t> budget) {
  ImportOptions o;
  o.random_weights_seed = 1;
  o.max_random_weight_bytes = budget;
  return import_onnx_bytes(m.SerializeAsString(), "proj.onnx", "/nonexistent-dir", o);
}

std::vector<float> weights_of(const ImportedModel& m) {
  for (int i = 0; i < m.graph.size(); ++i) {
    const Node& n = m.graph.node(i);
    if (n.op != Op::Weight || n.name != "w") continue;
    std::vector<float> v(n.data->bytes.size() / 4);
    std::memcpy(v.data(), n.data->bytes.data(), n.data->bytes.size());
    return v;
  }
  return {};
}

TEST(RandomWeights, SeededHeScaledAndTheSameOnEveryImport) {
  Expected<ImportedModel> a = import_with(graph_only(8, 4), std::nullopt);
  ASSERT_TRUE(a.ok()) << a.error().message;
  Expected<ImportedModel> b = import_with(graph_only(8, 4), int64_t{128});  // exactly 8*4*4
  ASSERT_TRUE(b.ok()) << b.error().message;
  const std::vector<float> w = weights_of(*a);
  ASSERT_EQ(w.size(), 32u);
  EXPECT_EQ(w, weights_of(*b));
  // He scale for fan-in 8 (MatMul's B: [K, N]): uniform on +-sqrt(3 * 2 / 8).
  const float bound = std::sqrt(6.0f / 8.0f);
  int nonzero = 0;
  for (float v : w) {
    EXPECT_LE(std::abs(v), bound);
    nonzero += v != 0.0f;
  }
  EXPECT_EQ(nonzero, 32);
}

TEST(RandomWeights, PastTheBudgetIsAnErrorNamingTheInitializer) {
  Expected<ImportedModel> m = import_with(graph_only(8, 4), int64_t{127});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("initializer 'w' (f32[8,4]): needs 128 B for random weights "
                                   "but the import's budget has 127 B available"),
            std::string::npos)
      << m.error().message;
}

TEST(RandomWeights, MoreThanTheMachineHasIsAnErrorBeforeAllocating) {
  // 2^21 x 2^21 floats: 16 TiB.
  Expected<ImportedModel> m =
      import_with(graph_only(int64_t{1} << 21, int64_t{1} << 21), std::nullopt);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("initializer 'w' (f32[2097152,2097152]): needs 16.0 TiB for "
                                   "random weights but the machine has"),
            std::string::npos)
      << m.error().message;
}

}  // namespace
}  // namespace tso
