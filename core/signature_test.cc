// Operator signatures, the cost tables' key: input types and non-default
// attributes; the node overload and the graph overload write the same text.
#include "core/signature.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/text_format.h"

namespace tso {
namespace {

Graph parse(std::string_view text) {
  Expected<Graph> g = parse_graph(text, "<test>");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

// The node whose first result is named `name` (e.g. "%c").
int node_named(const Graph& g, std::string_view name) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name == name) return i;
  ADD_FAILURE() << "no node " << name;
  return -1;
}

TEST(Signature, ListsInputTypesAndNonDefaultAttributes) {
  Graph g = parse(R"(graph g {
  input x: f32[1,3,224,224]
  weight w: f32[64,3,7,7]
  weight b: f32[64]
  %c = conv2d(x, w, b, stride=[2,2], pad=[3,3,3,3], act=relu)
  %r = relu(%c)
  %t = transpose(%r, perm=[0,2,3,1])
  output y = %t
})");
  EXPECT_EQ(op_signature(g, node_named(g, "%c")),
            "conv2d(f32[1,3,224,224],f32[64,3,7,7],f32[64];stride=[2,2],pad=[3,3,3,3],act=relu)");
  EXPECT_EQ(op_signature(g, node_named(g, "%r")), "relu(f32[1,64,112,112])");
  EXPECT_EQ(op_signature(g, node_named(g, "%t")), "transpose(f32[1,64,112,112];perm=[0,2,3,1])");
}

TEST(Signature, EqualForNodesThatRunTheSameKernelOnTheSameShapes) {
  Graph g = parse(R"(graph g {
  input x: f32[4,4]
  input z: f32[4,4]
  %a = add(x, z)
  %b = add(z, %a)
  %m = mul(x, z)
  output y = %b
  output w = %m
})");
  EXPECT_EQ(op_signature(g, node_named(g, "%a")), op_signature(g, node_named(g, "%b")));
  EXPECT_NE(op_signature(g, node_named(g, "%a")), op_signature(g, node_named(g, "%m")));
}

// smul and mul by a scalar are one kernel: one signature, so that two
// timings of it are not read as a gain.
TEST(Signature, ScalarMulIsWrittenAsMul) {
  Graph g = parse(R"(graph g {
  input x: f32[4,4]
  input s: f32[]
  %a = smul(x, s)
  %b = mul(x, s)
  output y = %a
  output z = %b
})");
  EXPECT_EQ(op_signature(g, node_named(g, "%a")), "mul(f32[4,4],f32[])");
  EXPECT_EQ(op_signature(g, node_named(g, "%a")), op_signature(g, node_named(g, "%b")));
}

// The search keys a node by its argument types before the node is in a graph.
TEST(Signature, NodeWithArgumentTypesMatchesTheGraphOverload) {
  Graph g = parse(R"(graph g {
  input x: f32[1,3,224,224]
  weight w: f32[64,3,7,7]
  weight b: f32[64]
  %a = conv2d(x, w, b, stride=[2,2], pad=[3,3,3,3], act=relu)
  %r = relu(%a)
  %s, %t = split(%r, axis=1, sizes=[32,32])
  output s = %s
  output t = %t
})");
  std::vector<TensorType> in{g.type(g.node(3).args[0]), g.type(g.node(3).args[1]),
                             g.type(g.node(3).args[2])};
  EXPECT_EQ(op_signature(g.node(3), in),
            "conv2d(f32[1,3,224,224],f32[64,3,7,7],f32[64];stride=[2,2],pad=[3,3,3,3],act=relu)");
  std::vector<TensorType> r{g.type(g.node(4).args[0])};
  EXPECT_EQ(op_signature(g.node(4), r), "relu(f32[1,64,112,112])");
  std::vector<TensorType> s{g.type(g.node(5).args[0])};
  EXPECT_EQ(op_signature(g.node(5), s), "split(f32[1,64,112,112];axis=1,sizes=[32,32])");
  for (int i = 3; i < g.size(); ++i) {
    std::vector<TensorType> args;
    for (TensorRef a : g.node(i).args) args.push_back(g.type(a));
    EXPECT_EQ(op_signature(g.node(i), args), op_signature(g, i)) << describe_node(g, i);
  }
}

// The rules write `same`, the frontends explicit pads: one convolution, one
// kernel, one signature (and one measurement).
TEST(Signature, SamePaddingIsWrittenAsThePadsItResolvesTo) {
  Graph g = parse(R"(graph g {
  input x: f32[1,8,28,28]
  weight w: f32[8,8,3,3]
  weight v: f32[8,8,1,1]
  %a = conv2d(x, w, pad=same)
  %b = conv2d(x, w, pad=[1,1,1,1])
  %c = conv2d(x, w, stride=[2,2], pad=same)
  %d = conv2d(x, w, dilation=[2,2], pad=same)
  %e = conv2d(x, v, pad=same)
  %f = conv2d(x, v)
  %m = maxpool(x, kernel=[3,3], stride=[1,1], pad=same)
  output a = %a
  output b = %b
  output c = %c
  output d = %d
  output e = %e
  output f = %f
  output m = %m
})");
  EXPECT_EQ(op_signature(g, node_named(g, "%a")), op_signature(g, node_named(g, "%b")));
  EXPECT_EQ(op_signature(g, node_named(g, "%a")), "conv2d(f32[1,8,28,28],f32[8,8,3,3];pad=[1,1,1,1])");
  // An odd amount puts its extra element at the end, as ONNX's SAME_UPPER.
  EXPECT_EQ(op_signature(g, node_named(g, "%c")),
            "conv2d(f32[1,8,28,28],f32[8,8,3,3];stride=[2,2],pad=[0,0,1,1])");
  EXPECT_EQ(op_signature(g, node_named(g, "%d")),
            "conv2d(f32[1,8,28,28],f32[8,8,3,3];pad=[2,2,2,2],dilation=[2,2])");
  EXPECT_EQ(op_signature(g, node_named(g, "%e")), op_signature(g, node_named(g, "%f")));
  EXPECT_EQ(op_signature(g, node_named(g, "%e")), "conv2d(f32[1,8,28,28],f32[8,8,1,1])");
  EXPECT_EQ(op_signature(g, node_named(g, "%m")),
            "maxpool(f32[1,8,28,28];pad=same,kernel=[3,3])");
}

}  // namespace
}  // namespace tso
