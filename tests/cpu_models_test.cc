// The CPU runtime on the shared real models (../shared/models, full random
// weights): every model's outputs match the reference executor's within the
// fp32 tolerance of core/ops.h (1e-4 relative; measured here: 2e-7 to 2e-6),
// with post-op fusion on and off and with every measured alternative forced.
#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/onnx.h"
#include "runtime/cpu/executor.h"
#include "runtime/reference/executor.h"
#include "runtime/reference/runtime_cases.h"
#include "tests/frontend_test_util.h"

namespace tso {
namespace {

const std::string kModels = "/work/shared/models/";

class CpuOnSharedModels : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModels + GetParam()))
      GTEST_SKIP() << kModels << GetParam() << " is not present on this machine";
  }
};

TEST_P(CpuOnSharedModels, MatchesTheReferenceExecutor) {
  ImportOptions io;
  io.random_weights_seed = 7;
  Expected<ImportedModel> m = import_onnx(kModels + GetParam(), io);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const Graph& g = m->graph;
  const std::map<std::string, ref::Tensor<float>> feeds = ref::testing::random_feeds(g, 11);
  Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(g, feeds);
  ASSERT_TRUE(want.ok()) << want.error().message;
  // Fused with the measured choices, unfused, and fused with Winograd,
  // pointwise inner products and the own grouped kernel wherever they apply
  // (their worst case).
  for (int config = 0; config < 3; ++config) {
    SCOPED_TRACE(config == 0 ? "fused" : config == 1 ? "unfused" : "alternatives forced");
    cpu::ExecutorOptions o;
    o.fuse = config != 1;
    if (config == 2) {
      o.winograd = cpu::ExecutorOptions::Choice::kAlways;
      o.pointwise_product = cpu::ExecutorOptions::Choice::kAlways;
      o.grouped = cpu::ExecutorOptions::Choice::kAlways;
    }
    Expected<std::unique_ptr<cpu::Executor>> ex = cpu::Executor::create(g, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message;
    for (const auto& [name, t] : feeds)
      ASSERT_TRUE((*ex)->set_input(name, std::span<const float>(t.data)).ok());
    Status s = (*ex)->run();
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      Expected<std::vector<float>> got = (*ex)->output(static_cast<int>(k));
      ASSERT_TRUE(got.ok()) << got.error().message;
      EXPECT_LE(testing::relative_error(*got, (*want)[k].data), 1e-4)
          << "output " << g.outputs()[k].name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CpuOnSharedModels,
                         ::testing::Values("squeezenet1_1.onnx", "resnet50.graph.onnx",
                                           "resnext50_32x4d.graph.onnx", "inception_v3.graph.onnx",
                                           "nasnetalarge.graph.onnx",
                                           "bert_base_seq128.graph.onnx"),
                         [](const auto& info) {
                           std::string s = info.param;
                           return s.substr(0, s.find('.'));
                         });

}  // namespace
}  // namespace tso
