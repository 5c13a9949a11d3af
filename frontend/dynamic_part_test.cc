// The dynamic part of an import: which nodes join it (control flow, shapes
// that ONNX's shape inference leaves to the data, and all they feed), what it
// reads of the graph (the names its subgraphs read from around them too),
// how export writes it back, and the errors of a model with nothing static
// or a subgraph that reads a name nothing defines.
#include "frontend/dynamic_part.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"

namespace tso {
namespace {

using testing::add_node;
using testing::declare;

onnx::ModelProto model() {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(17);
  m.mutable_graph()->set_name("dynamic");
  declare(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {2, 6});
  return m;
}

// A graph output of element type `elem` and unknown shape.
void declare_dynamic(onnx::ValueInfoProto* v, const std::string& name, int32_t elem) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

Expected<ImportedModel> import(const onnx::ModelProto& m) {
  return import_onnx_bytes(m.SerializeAsString(), "dynamic.onnx", ".");
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (const GraphOutput& o : g.outputs()) names.push_back(o.name);
  return names;
}

// A subgraph reads `x` and `y` of the graph around it; `t` is its own and `u`
// the input of a loop body inside it.
TEST(DynamicPart, OuterReadsAreWhatSubgraphsReadOfTheGraphsAroundThem) {
  onnx::NodeProto n;
  n.set_op_type("If");
  onnx::GraphProto* g = testing::add_subgraph(&n, "then_branch");
  add_node(g, "Relu", {"x"}, "t");
  onnx::GraphProto* body = testing::add_subgraph(add_node(g, "Loop", {"", ""}, "l"), "body");
  declare(body->add_input(), "u", onnx::TensorProto::FLOAT, {1});
  add_node(body, "Add", {"u", "t"}, "v");
  add_node(body, "Mul", {"v", "y"}, "w");
  add_node(body, "Sub", {"w", "x"}, "z");
  g->add_output()->set_name("t");
  EXPECT_EQ(onnx_frontend::outer_reads(n), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(onnx_frontend::has_subgraph(n));
}

// x -> Relu = r (an output) -> NonZero -> Cast = idx (an output); r ->
// TopK by a constant k = top (static: the IR's top_k); r ->
// ReduceSum = s, read only by the part's Mul with the constant `scale`,
// which only the part reads.
TEST(DynamicPart, NodesWhoseShapesDependOnTheDataAndWhatTheyFeedAreKeptAsOnnx) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  declare(g->add_output(), "r", onnx::TensorProto::FLOAT, {2, 6});
  declare_dynamic(g->add_output(), "idx", onnx::TensorProto::FLOAT);
  declare(g->add_output(), "top", onnx::TensorProto::FLOAT, {2, 3});
  testing::add_i64s(g, "k", {3});
  testing::add_scalar(g, "scale", 2.0f);
  testing::add_i64s(g, "sum_axes", {1});
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "nz", "NonZero", {"r"}, "nonzero");
  testing::set_int(add_node(g, "Cast", {"nonzero"}, "found"), "to", onnx::TensorProto::FLOAT);
  add_node(g, "ReduceSum", {"r", "sum_axes"}, "s");
  add_node(g, "Mul", {"found", "s"}, "scaled");
  add_node(g, "Mul", {"scaled", "scale"}, "idx");
  onnx::NodeProto* topk = add_node(g, "TopK", {"r", "k"}, "top");
  topk->add_output("top_indices");

  Expected<ImportedModel> im = import(m);
  ASSERT_TRUE(im.ok()) << im.error().message;
  ASSERT_TRUE(im->info.dynamic.has_value());
  const DynamicPart& d = *im->info.dynamic;
  EXPECT_EQ(d.nodes, 4);
  EXPECT_EQ(d.first, "node 'nz' (NonZero)");
  EXPECT_EQ(d.op_counts, (std::map<std::string, int>{{"NonZero", 1}, {"Cast", 1}, {"Mul", 2}}));
  EXPECT_EQ(d.reads, std::vector<std::string>{"s"});  // r is the model's output anyway
  EXPECT_EQ(output_names(im->graph), (std::vector<std::string>{"r", "top", "s"}));
  EXPECT_TRUE(im->opaque_nodes.empty());
  EXPECT_TRUE(std::any_of(im->graph.nodes().begin(), im->graph.nodes().end(),
                          [](const Node& n) { return n.op == Op::TopK; }));
  EXPECT_TRUE(std::any_of(im->warnings.begin(), im->warnings.end(), [](const std::string& w) {
    return w.find("4 nodes from node 'nz' (NonZero) on are kept as ONNX") != std::string::npos;
  })) << ::testing::PrintToString(im->warnings);
  EXPECT_FALSE(check_static(im->info, "dynamic.onnx").ok());

  // Export writes the part after the graph, as it was, the constant it reads
  // as its own initializer, and the outputs in the file's order with s not
  // among them.
  Expected<std::string> bytes = export_onnx_bytes(im->graph, im->info);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*bytes));
  const onnx::GraphProto& og = out.graph();
  ASSERT_EQ(og.output_size(), 3);
  EXPECT_EQ(og.output(0).name(), "r");
  EXPECT_EQ(og.output(1).name(), "idx");
  EXPECT_EQ(og.output(2).name(), "top");
  EXPECT_EQ(og.output(1).type().tensor_type().shape().dim_size(), 0);
  ASSERT_GE(og.node_size(), 4);
  const int tail = og.node_size() - 4;
  EXPECT_EQ(og.node(tail).op_type(), "NonZero");
  EXPECT_EQ(og.node(tail).input(0), "r");
  EXPECT_EQ(og.node(og.node_size() - 1).output(0), "idx");
  EXPECT_TRUE(std::any_of(og.initializer().begin(), og.initializer().end(),
                          [](const onnx::TensorProto& t) { return t.name() == "scale"; }));
  for (int k = 0; k < tail; ++k) EXPECT_NE(og.node(k).op_type(), "NonZero");

  // The written file imports to the same part.
  Expected<ImportedModel> again = import_onnx_bytes(*bytes, "again.onnx", ".");
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_TRUE(again->info.dynamic.has_value());
  EXPECT_EQ(again->info.dynamic->nodes, 4);
  EXPECT_EQ(output_names(again->graph), output_names(im->graph));
}

// An If holds control flow: it joins the part with what its branch reads of
// the graph (m, computed only for it), though its shapes are static.
TEST(DynamicPart, ControlFlowIsKeptWithTheValuesItsBranchesRead) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 6});
  declare(g->add_output(), "chosen", onnx::TensorProto::FLOAT, {});
  testing::add_scalar(g, "zero", 0.0f);
  add_node(g, "Relu", {"x"}, "y");
  testing::set_int(add_node(g, "ReduceMean", {"y"}, "m"), "keepdims", 0);
  add_node(g, "Greater", {"m", "zero"}, "positive");
  onnx::NodeProto* branch = add_node(g, "pick", "If", {"positive"}, "chosen");
  for (const char* which : {"then_branch", "else_branch"}) {
    onnx::GraphProto* body = testing::add_subgraph(branch, which);
    const std::string out = std::string(which) + "_out";
    add_node(body, which[0] == 't' ? "Neg" : "Identity", {"m"}, out);
    declare(body->add_output(), out, onnx::TensorProto::FLOAT, {});
  }
  Expected<ImportedModel> im = import(m);
  ASSERT_TRUE(im.ok()) << im.error().message;
  ASSERT_TRUE(im->info.dynamic.has_value());
  EXPECT_EQ(im->info.dynamic->first, "node 'pick' (If)");
  EXPECT_EQ(im->info.dynamic->reads, (std::vector<std::string>{"positive", "m"}));
  EXPECT_EQ(output_names(im->graph), (std::vector<std::string>{"y", "positive", "m"}));
}

// The part keeps the model's batch (its Reshapes, its ConstantOfShapes), so
// importing at another one is an error naming the part.
TEST(DynamicPart, AnotherBatchIsAnError) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  declare(g->add_output(), "r", onnx::TensorProto::FLOAT, {2, 6});
  declare_dynamic(g->add_output(), "idx", onnx::TensorProto::INT64);
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "nz", "NonZero", {"r"}, "idx");
  ImportOptions options;
  options.batch = 4;
  Expected<ImportedModel> im =
      import_onnx_bytes(m.SerializeAsString(), "dynamic.onnx", ".", options);
  ASSERT_FALSE(im.ok());
  EXPECT_NE(im.error().message.find("a batch of 4 (--batch, batch=) changes the batch of a "
                                    "model whose node 'nz' (NonZero)"),
            std::string::npos)
      << im.error().message;
  options.batch = 2;  // the model's own: nothing changes
  EXPECT_TRUE(import_onnx_bytes(m.SerializeAsString(), "dynamic.onnx", ".", options).ok());
}

TEST(DynamicPart, AModelWhoseEveryOutputIsDynamicIsAnError) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  declare_dynamic(g->add_output(), "idx", onnx::TensorProto::INT64);
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "nz", "NonZero", {"x"}, "idx");
  Expected<ImportedModel> im = import(m);
  ASSERT_FALSE(im.ok());
  EXPECT_NE(im.error().message.find("every output depends on node 'nz' (NonZero)"),
            std::string::npos)
      << im.error().message;
}

TEST(DynamicPart, ASubgraphReadingANameNothingDefinesIsAnErrorNamingTheNode) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 6});
  declare(g->add_output(), "z", onnx::TensorProto::FLOAT, {});
  testing::add_scalar(g, "zero", 0.0f);
  add_node(g, "Relu", {"x"}, "y");
  add_node(g, "ReduceMax", {"y"}, "top");
  add_node(g, "Greater", {"top", "zero"}, "positive");
  onnx::NodeProto* branch = add_node(g, "pick", "If", {"positive"}, "z");
  for (const char* which : {"then_branch", "else_branch"}) {
    onnx::GraphProto* body = testing::add_subgraph(branch, which);
    add_node(body, "Neg", {"nowhere"}, "out");
    declare(body->add_output(), "out", onnx::TensorProto::FLOAT, {});
  }
  Expected<ImportedModel> im = import(m);
  ASSERT_FALSE(im.ok());
  EXPECT_NE(im.error().message.find("node 'pick' (If): a subgraph reads 'nowhere'"),
            std::string::npos)
      << im.error().message;
}

}  // namespace
}  // namespace tso
