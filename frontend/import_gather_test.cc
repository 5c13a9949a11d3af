// The ONNX mapping of Gather (embedding lookups on token ids, ViT's class
// token): it imports as the IR's gather whether its indices are a graph input
// or a constant, computes what ONNX says on the reference executor, exports
// back as Gather, and a constant index out of range is an error naming the
// node.
#include <gtest/gtest.h>

#include "core/checker.h"
#include "core/text_format.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using testing::declare;

onnx::NodeProto* gather(onnx::GraphProto* g, const std::string& name, const char* data,
                        const char* indices, const std::string& out, int64_t axis) {
  auto* n = g->add_node();
  n->set_name(name);
  n->set_op_type("Gather");
  n->add_input(data);
  n->add_input(indices);
  n->add_output(out);
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
  return n;
}

// ids: i64[2,5] -> emb = table[ids] (f32[2,5,4]) -> cls = emb[:, first]
// along axis -2, as PyTorch exports `x[:, 0]`.
onnx::ModelProto embed_model(int64_t first = 0) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("embed");
  declare(g->add_input(), "ids", onnx::TensorProto::INT64, {2, 5});
  declare(g->add_output(), "emb", onnx::TensorProto::FLOAT, {2, 5, 4});
  declare(g->add_output(), "cls", onnx::TensorProto::FLOAT, {2, 4});
  auto* table = g->add_initializer();
  table->set_name("table");
  table->set_data_type(onnx::TensorProto::FLOAT);
  table->add_dims(6);
  table->add_dims(4);
  for (int k = 0; k < 24; ++k) table->add_float_data(0.5f * static_cast<float>(k));
  auto* index = g->add_initializer();
  index->set_name("first");
  index->set_data_type(onnx::TensorProto::INT64);
  index->add_int64_data(first);
  gather(g, "lookup", "table", "ids", "emb", 0);
  gather(g, "cls", "emb", "first", "cls", -2);
  return m;
}

Expected<ImportedModel> import_proto(const onnx::ModelProto& m) {
  return import_onnx_bytes(m.SerializeAsString(), "embed.onnx", ".");
}

constexpr const char* kEmbedText = R"(graph embed {
  input ids: i64[2,5]
  weight table: f32[6,4]
  %0: f32[2,5,4] = gather(table, ids, axis=0)
  weight first: i64[]
  %1: f32[2,4] = gather(%0, first, axis=1)
  output emb = %0
  output cls = %1
}
)";

TEST(ImportGather, LookupsBecomeGatherNodes) {
  Expected<ImportedModel> m = import_proto(embed_model());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->opaque_nodes.empty());
  EXPECT_TRUE(check(m->graph).ok());
  EXPECT_EQ(print(m->graph), kEmbedText);
}

TEST(ImportGather, ComputesWhatOnnxSays) {
  Expected<ImportedModel> m = import_proto(embed_model(-1));
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, ref::Tensor<float>> feeds;
  feeds["ids"] = ref::Tensor<float>(Shape{2, 5}, {0, 5, -1, 2, 1, -6, 3, 3, 4, 0});
  auto y = ref::evaluate<float>(m->graph, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  // Row r of the table is 2r, 2r + 0.5, 2r + 1, 2r + 1.5; the class token
  // is the last position (index -1) of each sequence.
  auto row = [](int r) {
    const float b = 2.0f * static_cast<float>(r);
    return std::vector<float>{b, b + 0.5f, b + 1, b + 1.5f};
  };
  std::vector<float> emb;
  for (int r : {0, 5, 5, 2, 1, 0, 3, 3, 4, 0})
    for (float v : row(r)) emb.push_back(v);
  EXPECT_EQ((*y)[0].data, emb);
  std::vector<float> cls = row(1);
  for (float v : row(0)) cls.push_back(v);
  EXPECT_EQ((*y)[1].data, cls);
  EXPECT_EQ((*y)[1].shape, Shape({2, 4}));
}

TEST(ImportGather, ExportWritesGatherBack) {
  Expected<ImportedModel> m = import_proto(embed_model());
  ASSERT_TRUE(m.ok()) << m.error().message;
  Expected<std::string> bytes = export_onnx_bytes(m->graph, m->info);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*bytes));
  ASSERT_EQ(out.graph().node_size(), 2);
  for (const auto& n : out.graph().node()) {
    EXPECT_EQ(n.op_type(), "Gather");
    ASSERT_EQ(n.attribute_size(), 1);
    EXPECT_EQ(n.attribute(0).name(), "axis");
  }
  EXPECT_EQ(out.graph().node(1).attribute(0).i(), 1);  // normalized from -2
  Expected<ImportedModel> again = import_onnx_bytes(*bytes, "again.onnx", ".");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->graph == m->graph) << print(again->graph);
}

// A constant index outside [-5, 5) for the sequence axis can never be looked
// up: the model is refused at import, naming the node and the index.
TEST(ImportGather, ConstantIndexOutOfRangeIsAnErrorNamingTheNode) {
  for (int64_t bad : {5, -6}) {
    Expected<ImportedModel> r = import_proto(embed_model(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("node 'cls' (Gather)"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("has index " + std::to_string(bad) +
                                     " out of range for axis 1 of [2,5,4]"),
              std::string::npos)
        << r.error().message;
  }
  EXPECT_TRUE(import_proto(embed_model(-5)).ok());
  EXPECT_TRUE(import_proto(embed_model(4)).ok());
}

TEST(ImportGather, MalformedGathersNameTheNode) {
  onnx::ModelProto float_ids = embed_model();
  float_ids.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  Expected<ImportedModel> r = import_proto(float_ids);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("node 'lookup' (Gather)"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("indices f32[2,5] must be i64 or i32"), std::string::npos)
      << r.error().message;

  onnx::ModelProto far_axis = embed_model();
  far_axis.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_i(3);
  r = import_proto(far_axis);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("node 'cls' (Gather): has axis 3 out of range for [2,5,4]"),
            std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace tso
