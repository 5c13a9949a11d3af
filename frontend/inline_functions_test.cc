// Model-local functions at import: calls become their bodies (attributes
// bound from the call or the function's defaults, nested calls, names that
// clash with the graph's, outputs that pass an input through, a missing
// optional input), compute what the body says on the reference executor, and
// malformed or runaway functions are errors naming the call or the function.
// A function holding a subgraph stays a call, and export writes it back.
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "runtime/reference/executor.h"

namespace tso {
namespace {

using testing::add_node;
using testing::declare;

onnx::ModelProto model_of(std::initializer_list<int64_t> dims) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(17);
  auto* local = m.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("functions");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, dims);
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, dims);
  return m;
}

onnx::FunctionProto* add_function(onnx::ModelProto* m, const std::string& name,
                                  const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs) {
  onnx::FunctionProto* f = m->add_functions();
  f->set_domain("local");
  f->set_name(name);
  for (const auto& i : inputs) f->add_input(i);
  for (const auto& o : outputs) f->add_output(o);
  f->add_opset_import()->set_version(17);
  auto* local = f->add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  return f;
}

onnx::NodeProto* add_body_node(onnx::FunctionProto* f, const std::string& type,
                               const std::vector<std::string>& inputs, const std::string& out,
                               const std::string& domain = "") {
  onnx::NodeProto* n = f->add_node();
  n->set_op_type(type);
  n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(out);
  return n;
}

onnx::NodeProto* add_call(onnx::GraphProto* g, const std::string& name, const std::string& fn,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(fn);
  n->set_domain("local");
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

// A Constant whose value_float refers to the function's attribute `ref`.
void add_constant_of(onnx::FunctionProto* f, const std::string& ref, const std::string& out) {
  onnx::AttributeProto* a = add_body_node(f, "Constant", {}, out)->add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name(ref);
}

void set_float(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// FunctionProto.attribute_proto (IR 9), which the ONNX library tso builds
// with predates: written as the field a newer writer puts on the wire.
void add_default(onnx::FunctionProto* f, const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  f->GetReflection()->MutableUnknownFields(f)->AddLengthDelimited(11, a.SerializeAsString());
}

Expected<ImportedModel> import_proto(const onnx::ModelProto& m) {
  return import_onnx_bytes(m.SerializeAsString(), "functions.onnx", ".");
}

std::vector<float> run(const ImportedModel& m, std::vector<float> x, const Shape& shape) {
  std::map<std::string, ref::Tensor<float>> feeds;
  feeds["x"] = ref::Tensor<float>(shape, std::move(x));
  auto y = ref::evaluate<float>(m.graph, feeds);
  EXPECT_TRUE(y.ok()) << y.error().message;
  return y.ok() ? (*y)[0].data : std::vector<float>{};
}

bool has_node(const Graph& g, const std::string& name) {
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).name == name) return true;
  return false;
}

// y = ScaledRelu(ScaledRelu(x, alpha 2), alpha -1, beta 0.5), where
// ScaledRelu(X) = relu(X * alpha + beta) and beta defaults to 1.
TEST(InlineFunctions, CallsBecomeTheBodyWithAttributesFromTheCallOrTheDefault) {
  onnx::ModelProto m = model_of({1, 4});
  onnx::FunctionProto* f = add_function(&m, "ScaledRelu", {"X"}, {"Y"});
  f->add_attribute("alpha");
  add_default(f, "beta", 1.0f);
  add_constant_of(f, "alpha", "a");
  add_constant_of(f, "beta", "b");
  add_body_node(f, "Mul", {"X", "a"}, "m");
  add_body_node(f, "Add", {"m", "b"}, "s");
  add_body_node(f, "Relu", {"s"}, "Y")->set_name("relu");
  set_float(add_call(m.mutable_graph(), "first", "ScaledRelu", {"x"}, {"h"}), "alpha", 2.0f);
  onnx::NodeProto* second = add_call(m.mutable_graph(), "second", "ScaledRelu", {"h"}, {"y"});
  set_float(second, "alpha", -1.0f);
  set_float(second, "beta", 0.5f);

  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->opaque_nodes.empty());
  EXPECT_EQ(r->stats.inlined_calls, 2);
  EXPECT_TRUE(r->info.functions.empty());
  EXPECT_TRUE(has_node(r->graph, "second/relu"));
  // relu(2x + 1) = {0, 0, 2, 5}; relu(-h + 0.5) = {0.5, 0.5, 0, 0}.
  EXPECT_EQ(run(*r, {-3.0f, -0.5f, 0.5f, 2.0f}, Shape{1, 4}),
            (std::vector<float>{0.5f, 0.5f, 0.0f, 0.0f}));
}

// Outer(X) = Inner(Inner(X)), Inner(X) = X + X; the graph, Outer and Inner
// each name a value "t", which must stay three values.
TEST(InlineFunctions, NestedCallsKeepTheirValuesApartFromTheGraphs) {
  onnx::ModelProto m = model_of({3});
  onnx::FunctionProto* outer = add_function(&m, "Outer", {"X"}, {"Y"});
  add_body_node(outer, "Inner", {"X"}, "t", "local");
  add_body_node(outer, "Inner", {"t"}, "Y", "local");
  onnx::FunctionProto* inner = add_function(&m, "Inner", {"X"}, {"Y"});
  add_body_node(inner, "Add", {"X", "X"}, "t");
  add_body_node(inner, "Identity", {"t"}, "Y");
  add_node(m.mutable_graph(), "neg", "Neg", {"x"}, "t");
  add_call(m.mutable_graph(), "outer", "Outer", {"t"}, {"y"});

  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stats.inlined_calls, 3);
  EXPECT_EQ(run(*r, {1.0f, -2.0f, 0.25f}, Shape{3}), (std::vector<float>{-4.0f, 8.0f, -1.0f}));
}

// Pick(X, Unused) = (X, -X), called with its first input only: the first
// output passes the input through.
TEST(InlineFunctions, AnOutputMayBeAnInputAndATrailingInputMayBeMissing) {
  onnx::ModelProto m = model_of({2});
  onnx::FunctionProto* f = add_function(&m, "Pick", {"X", "Unused"}, {"X", "Z"});
  add_body_node(f, "Neg", {"X"}, "Z");
  add_call(m.mutable_graph(), "pick", "Pick", {"x"}, {"same", "negated"});
  add_node(m.mutable_graph(), "sum", "Sub", {"same", "negated"}, "y");

  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(run(*r, {1.5f, -3.0f}, Shape{2}), (std::vector<float>{3.0f, -6.0f}));
}

std::string import_error(const onnx::ModelProto& m) {
  Expected<ImportedModel> r = import_proto(m);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

TEST(InlineFunctions, MalformedFunctionsAreErrorsNamingTheCallOrTheFunction) {
  {
    onnx::ModelProto m = model_of({2});
    onnx::FunctionProto* f = add_function(&m, "Loop", {"X"}, {"Y"});
    add_body_node(f, "Loop", {"X"}, "Y", "local");
    add_call(m.mutable_graph(), "call", "Loop", {"x"}, {"y"});
    EXPECT_EQ(import_error(m),
              "functions.onnx: function 'local.Loop' calls itself (local.Loop -> local.Loop)");
  }
  {
    onnx::ModelProto m = model_of({2});
    onnx::FunctionProto* f = add_function(&m, "Leak", {"X"}, {"Y"});
    add_body_node(f, "Add", {"X", "x"}, "Y");
    add_call(m.mutable_graph(), "call", "Leak", {"x"}, {"y"});
    EXPECT_EQ(import_error(m),
              "functions.onnx: node 'call' (local.Leak): function 'local.Leak' reads 'x', which it "
              "neither takes nor computes");
  }
  {
    onnx::ModelProto m = model_of({2});
    onnx::FunctionProto* f = add_function(&m, "One", {"X"}, {"Y"});
    add_body_node(f, "Neg", {"X"}, "Y");
    add_call(m.mutable_graph(), "call", "One", {"x", "x"}, {"y"});
    EXPECT_EQ(
        import_error(m),
        "functions.onnx: node 'call' (local.One): function 'local.One' takes 1 inputs, the call "
        "passes 2");
  }
  {
    onnx::ModelProto m = model_of({2});
    onnx::FunctionProto* f = add_function(&m, "Lazy", {"X"}, {"Y", "W"});
    add_body_node(f, "Neg", {"X"}, "Y");
    add_call(m.mutable_graph(), "call", "Lazy", {"x"}, {"y"});
    EXPECT_EQ(import_error(m),
              "functions.onnx: node 'call' (local.Lazy): function 'local.Lazy' never computes its "
              "output 'W'");
  }
  {
    onnx::ModelProto m = model_of({2});
    onnx::FunctionProto* f = add_function(&m, "Old", {"X"}, {"Y"});
    f->mutable_opset_import(0)->set_version(13);
    add_body_node(f, "Neg", {"X"}, "Y");
    add_call(m.mutable_graph(), "call", "Old", {"x"}, {"y"});
    EXPECT_EQ(import_error(m),
              "functions.onnx: function 'local.Old' imports version 13 of operator set "
              "'ai.onnx', the model version 17; tso inlines functions at the model's versions "
              "only");
  }
  {
    onnx::ModelProto m = model_of({2});
    add_body_node(add_function(&m, "Twice", {"X"}, {"Y"}), "Neg", {"X"}, "Y");
    add_body_node(add_function(&m, "Twice", {"X"}, {"Y"}), "Relu", {"X"}, "Y");
    add_call(m.mutable_graph(), "call", "Twice", {"x"}, {"y"});
    EXPECT_EQ(import_error(m), "functions.onnx: the model defines function 'local.Twice' twice");
  }
}

// F0(X) = relu(X); Fk(X) = F(k-1)(F(k-1)(X)): 2^30 nodes from 31 functions
// stop at a million, long before they fill memory.
TEST(InlineFunctions, CallsThatWouldExpandPastAMillionNodesAreAnError) {
  onnx::ModelProto m = model_of({2});
  add_body_node(add_function(&m, "F0", {"X"}, {"Y"}), "Relu", {"X"}, "Y");
  for (int k = 1; k <= 30; ++k) {
    onnx::FunctionProto* f = add_function(&m, "F" + std::to_string(k), {"X"}, {"Y"});
    const std::string inner = "F" + std::to_string(k - 1);
    add_body_node(f, inner, {"X"}, "t", "local");
    add_body_node(f, inner, {"t"}, "Y", "local");
  }
  add_call(m.mutable_graph(), "call", "F30", {"x"}, {"y"});
  EXPECT_EQ(import_error(m),
            "functions.onnx: inlining the model's functions makes more than 1000000 nodes");
}

// F0(X) = relu(X); Fk(X) = F(k-1)(X), 100,000 deep: an error at 64 nested
// calls, not a stack overflow (the check for subgraphs once recursed through
// every level).
TEST(InlineFunctions, CallsNestedPast64AreAnError) {
  onnx::ModelProto m = model_of({2});
  add_body_node(add_function(&m, "F0", {"X"}, {"Y"}), "Relu", {"X"}, "Y");
  for (int k = 1; k < 100000; ++k)
    add_body_node(add_function(&m, "F" + std::to_string(k), {"X"}, {"Y"}),
                  "F" + std::to_string(k - 1), {"X"}, "Y", "local");
  add_call(m.mutable_graph(), "call", "F99999", {"x"}, {"y"});
  const std::string message = import_error(m);
  EXPECT_NE(message.find("functions nest deeper than 64 calls"), std::string::npos) << message;
}

// Branch(X, C) = If(C, then X, else -X): the then-branch reads X from the
// function, so the call stays (opaque), and export writes the function back.
TEST(InlineFunctions, AFunctionHoldingASubgraphStaysACallThatExportKeeps) {
  onnx::ModelProto m = model_of({2});
  declare(m.mutable_graph()->add_input(), "c", onnx::TensorProto::BOOL, {1});
  onnx::FunctionProto* f = add_function(&m, "Branch", {"X", "C"}, {"Y"});
  onnx::NodeProto* branch = add_body_node(f, "If", {"C"}, "Y");
  for (const char* which : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = branch->add_attribute();
    a->set_name(which);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* sub = a->mutable_g();
    sub->set_name(which);
    add_node(sub, std::string(which) + "_op", which[0] == 't' ? "Identity" : "Neg", {"X"}, "out");
    declare(sub->add_output(), "out", onnx::TensorProto::FLOAT, {2});
  }
  add_call(m.mutable_graph(), "call", "Branch", {"x", "c"}, {"y"});

  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stats.inlined_calls, 0);
  ASSERT_EQ(r->opaque_nodes.size(), 1u);
  EXPECT_EQ(r->opaque_nodes[0].op_type, "Branch");
  ASSERT_EQ(r->info.functions.size(), 1u);
  Expected<std::string> bytes = export_onnx_bytes(r->graph, r->info);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*bytes));
  ASSERT_EQ(out.functions_size(), 1);
  EXPECT_EQ(out.functions(0).name(), "Branch");
  ASSERT_EQ(out.graph().node_size(), 1);
  EXPECT_EQ(out.graph().node(0).op_type(), "Branch");
  EXPECT_EQ(out.graph().node(0).domain(), "local");
}

}  // namespace
}  // namespace tso
