#include "runtime/cuda/dispatch.h"

#include <gtest/gtest.h>

#include "runtime/cuda/test_graphs.h"

namespace tso::cuda {
namespace {

bool refused_on_gpu(Op op) {
  switch (op) {
    case Op::Opaque:
    case Op::Gather:
    case Op::GatherElements:
    case Op::Expand:
    case Op::Cast:
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
    case Op::Not:
    case Op::And:
    case Op::Or:
    case Op::CumSum:
    case Op::ArgMax:
    case Op::TopK:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::GridSample:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceL2:
      return true;
    default:
      return false;
  }
}

TEST(Dispatch, EveryOperatorHasAFamilyAndOnlyThoseWithoutKernelsAreUnsupported) {
  for (const OpInfo& info : all_ops()) {
    Kernel k = kernel_for(info.op);
    EXPECT_NE(kernel_name(k), "?") << info.name;
    const bool refused = refused_on_gpu(info.op);
    EXPECT_EQ(k == Kernel::kUnsupported, refused) << info.name;
    EXPECT_EQ(k == Kernel::kSource, is_source(info.op)) << info.name;
  }
}

TEST(Dispatch, HeavyOperatorsGoToTheVendorLibraries) {
  EXPECT_EQ(kernel_for(Op::Conv2d), Kernel::kConv);
  EXPECT_EQ(kernel_for(Op::Matmul), Kernel::kMatmul);
  EXPECT_EQ(kernel_for(Op::Gemm), Kernel::kGemm);
  EXPECT_EQ(kernel_for(Op::Reshape), Kernel::kView);
  EXPECT_EQ(kernel_for(Op::GlobalAvgPool), Kernel::kReduceMean);
  EXPECT_EQ(kernel_for(Op::IsNaN), Kernel::kIsNaN);
  EXPECT_EQ(kernel_for(Op::Where), Kernel::kWhere);
  EXPECT_EQ(kernel_for(Op::UpdateSlice), Kernel::kUpdateSlice);
}

TEST(Dispatch, OpaqueNodeIsAnErrorNamingOpTypeAndNode) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[2]
  %y: f32[2] = opaque(x, op_type="NonMaxSuppression")
  output y = %y
})");
  Expected<Kernel> k = kernel_for_node(g, testing::node_named(g, "%y"));
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().message,
            "node '%y' (opaque): the CUDA runtime cannot run opaque operator 'NonMaxSuppression' "
            "(not in the tso IR)");
}

TEST(Dispatch, GatherIsRefusedNamingTheNode) {
  Graph g = testing::parse(R"(graph g {
  input ids: i64[4]
  input table: f32[10,3]
  %e: f32[4,3] = gather(table, ids, axis=0)
  output y = %e
})");
  Expected<Kernel> k = kernel_for_node(g, testing::node_named(g, "%e"));
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().message,
            "node '%e' (gather): the CUDA runtime has no gather kernel (the CPU runtime and the "
            "reference executor run it)");
}

}  // namespace
}  // namespace tso::cuda
