// update_slice has no ONNX operator: it exports as slices of the base and
// concats around the patch. Exported, then imported, a graph computes the
// same values on the reference executor (exactly: only data moves), for
// boxes inside the base, at its edges, covering some axes whole, and whole.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/text_format.h"
#include "frontend/onnx.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

std::map<std::string, ref::Tensor<float>> seeded_feeds(const Graph& g, uint64_t seed) {
  std::map<std::string, ref::Tensor<float>> feeds;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    std::vector<float> v(n.outs[0].shape.numel());
    for (float& x : v) x = dist(rng);
    feeds[n.name] = ref::Tensor<float>(n.outs[0].shape, std::move(v));
  }
  return feeds;
}

// The graph: relu(x) updated at `starts` by a patch of shape `patch`.
std::string graph_text(const std::string& patch, const std::string& starts) {
  return "graph g {\n  input x: f32[2,5,4,6]\n  input p: f32" + patch +
         "\n  %r = relu(x)\n  %u = update_slice(%r, p, starts=" + starts +
         ")\n  %y = neg(%u)\n  output y = %y\n}\n";
}

TEST(ExportUpdateSlice, RoundTripComputesTheSameValues) {
  const std::pair<const char*, const char*> boxes[] = {
      {"[1,2,2,3]", "[1,1,1,2]"},  // inside the base on every axis
      {"[2,5,1,6]", "[0,0,3,0]"},  // one axis partial: the last row
      {"[1,5,4,2]", "[0,0,0,4]"},  // first batch, last columns
      {"[2,3,4,6]", "[0,0,0,0]"},  // leading channels
      {"[2,5,4,6]", "[0,0,0,0]"},  // the whole base
  };
  for (const auto& [patch, starts] : boxes) {
    SCOPED_TRACE(std::string(patch) + " at " + starts);
    Expected<Graph> g = parse_graph(graph_text(patch, starts));
    ASSERT_TRUE(g.ok()) << g.error().message;
    Expected<std::string> bytes = export_onnx_bytes(*g, OnnxModelInfo{});
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(*bytes));
    std::set<std::string> types;
    for (const auto& n : proto.graph().node()) types.insert(n.op_type());
    for (const std::string& t : types)
      EXPECT_TRUE(t == "Relu" || t == "Neg" || t == "Slice" || t == "Concat" || t == "Identity")
          << t;
    Expected<ImportedModel> back = import_onnx_bytes(*bytes, "update.onnx", ".");
    ASSERT_TRUE(back.ok()) << back.error().message;
    const auto feeds = seeded_feeds(*g, 7);
    Expected<std::vector<ref::Tensor<float>>> want = ref::evaluate<float>(*g, feeds);
    Expected<std::vector<ref::Tensor<float>>> got = ref::evaluate<float>(back->graph, feeds);
    ASSERT_TRUE(want.ok()) << want.error().message;
    ASSERT_TRUE(got.ok()) << got.error().message << "\n" << print(back->graph);
    EXPECT_EQ((*got)[0].shape, (*want)[0].shape);
    EXPECT_EQ((*got)[0].data, (*want)[0].data) << print(back->graph);
  }
}

// A box partial along channels and rows only: two concats, each between a
// slice before and a slice after the box; batch and columns need none.
TEST(ExportUpdateSlice, OneConcatPerPartialAxis) {
  Expected<Graph> g = parse_graph(graph_text("[2,2,2,6]", "[0,1,1,0]"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  Expected<std::string> bytes = export_onnx_bytes(*g, OnnxModelInfo{});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  std::map<std::string, int> count;
  for (const auto& n : proto.graph().node()) ++count[n.op_type()];
  EXPECT_EQ(count["Concat"], 2);
  EXPECT_EQ(count["Slice"], 4);
}

}  // namespace
}  // namespace tso
