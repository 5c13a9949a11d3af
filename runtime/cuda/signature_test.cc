#include "runtime/cuda/signature.h"

#include <gtest/gtest.h>

#include "runtime/cuda/test_graphs.h"

namespace tso::cuda {
namespace {

TEST(Signature, ListsInputTypesAndNonDefaultAttributes) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[1,3,224,224]
  weight w: f32[64,3,7,7]
  weight b: f32[64]
  %c = conv2d(x, w, b, stride=[2,2], pad=[3,3,3,3], act=relu)
  %r = relu(%c)
  %t = transpose(%r, perm=[0,2,3,1])
  output y = %t
})");
  EXPECT_EQ(op_signature(g, testing::node_named(g, "%c")),
            "conv2d(f32[1,3,224,224],f32[64,3,7,7],f32[64];stride=[2,2],pad=[3,3,3,3],act=relu)");
  EXPECT_EQ(op_signature(g, testing::node_named(g, "%r")), "relu(f32[1,64,112,112])");
  EXPECT_EQ(op_signature(g, testing::node_named(g, "%t")),
            "transpose(f32[1,64,112,112];perm=[0,2,3,1])");
}

TEST(Signature, EqualForNodesThatRunTheSameKernelOnTheSameShapes) {
  Graph g = testing::parse(R"(graph g {
  input x: f32[4,4]
  input z: f32[4,4]
  %a = add(x, z)
  %b = add(z, %a)
  %m = mul(x, z)
  output y = %b
  output w = %m
})");
  EXPECT_EQ(op_signature(g, testing::node_named(g, "%a")), op_signature(g, testing::node_named(g, "%b")));
  EXPECT_NE(op_signature(g, testing::node_named(g, "%a")), op_signature(g, testing::node_named(g, "%m")));
}

}  // namespace
}  // namespace tso::cuda
