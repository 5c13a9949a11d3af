// ImportOptions::batch: which inputs take the new batch, which Reshape
// shapes are rewritten and which are refused (batch_override.h), and a
// hand-made attention-like model imported at batch 3 that computes, image by
// image, what the batch-1 model computes on the reference executor.
#include "frontend/batch_override.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/checker.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference/executor.h"

namespace tso::onnx_frontend {
namespace {

using testing::add_node;
using testing::set_ints;
using Ints = std::vector<int64_t>;
using Inputs = std::vector<std::pair<std::string, Shape>>;

TEST(ChangeBatch, InputsLedByTheModelsBatchTakeTheNewOne) {
  Inputs in = {{"s", Shape{}}, {"x", Shape{1, 4, 6}}, {"mask", Shape{1, 4}}, {"pos", Shape{6}}};
  Expected<std::optional<BatchChange>> c = change_batch(&in, 3);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->from, 1);  // the first input of rank >= 1 says what the batch is
  EXPECT_EQ((*c)->to, 3);
  EXPECT_EQ(in[0].second, Shape{});
  EXPECT_EQ(in[1].second, (Shape{3, 4, 6}));
  EXPECT_EQ(in[2].second, (Shape{3, 4}));
  EXPECT_EQ(in[3].second, Shape{6});
}

TEST(ChangeBatch, TheModelsOwnBatchChangesNothing) {
  Inputs in = {{"x", Shape{2, 5}}, {"y", Shape{2}}};
  Expected<std::optional<BatchChange>> c = change_batch(&in, 2);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->has_value());
  EXPECT_EQ(in[0].second, (Shape{2, 5}));
}

TEST(ChangeBatch, ABadBatchOrNoBatchDimensionIsAnError) {
  Inputs in = {{"x", Shape{1, 5}}};
  Expected<std::optional<BatchChange>> c = change_batch(&in, 0);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("must be positive, not 0"), std::string::npos);
  Inputs scalars = {{"s", Shape{}}};
  c = change_batch(&scalars, 4);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("no graph input has a batch dimension"), std::string::npos);
}

Expected<std::optional<Ints>> reshape(const Shape& input, const Ints& shape,
                                      bool allowzero = false) {
  return reshape_for_batch({1, 16}, input, shape, allowzero);
}

TEST(ReshapeForBatch, ALeadingOldBatchFollowsTheInputsBatch) {
  // BERT's heads split, as PyTorch writes it at batch 1.
  Expected<std::optional<Ints>> r = reshape(Shape{16, 128, 768}, {1, 128, -1, 64});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (Ints{16, 128, -1, 64}));
  r = reshape(Shape{16, 128, 12, 64}, {1, 128, 768});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (Ints{16, 128, 768}));
}

TEST(ReshapeForBatch, ShapesThatAdaptOrDoNotCarryTheBatchStay) {
  for (const Ints& shape :
       {Ints{-1, 128, 12, 64}, Ints{0, 128, 12, 64}, Ints{16, 128, 12, 64}, Ints{-1, 768}}) {
    Expected<std::optional<Ints>> r = reshape(Shape{16, 128, 768}, shape);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->has_value());
  }
  // An input that is not led by the new batch keeps a leading 1.
  Expected<std::optional<Ints>> r = reshape(Shape{4, 6}, {1, 24});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->has_value());
}

TEST(ReshapeForBatch, ABakedInBatchIsAnErrorShowingTheShapes) {
  // [1,128,768] flattened to [128,768] at batch 1.
  Expected<std::optional<Ints>> r = reshape(Shape{16, 128, 768}, {128, 768});
  ASSERT_FALSE(r.ok());
  for (const char* part :
       {"at batch 16 (the model's is 1)", "[128,768]", "[16,128,768]", "bakes the batch in"})
    EXPECT_NE(r.error().message.find(part), std::string::npos) << part << ": " << r.error().message;
  // A leading 16 that is not the batch: neither [1,16,12] nor [16,16,12] is
  // safe to pick.
  r = reshape(Shape{16, 3, 4}, {1, 16, 12});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("[1,16,12], or [16,16,12],"), std::string::npos)
      << r.error().message;
  // With allowzero a zero is an extent, not a copy.
  EXPECT_FALSE(reshape(Shape{16, 2}, {0, -1}, true).ok());
  EXPECT_TRUE(reshape(Shape{16, 2}, {0, -1}, false).ok());
}

// --- Import ---------------------------------------------------------------

void declare(onnx::ValueInfoProto* v, const std::string& name,
             std::initializer_list<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_ints(onnx::GraphProto* g, const std::string& name, const Ints& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

// Two inputs with the batch and one without; the heads split and merged as
// PyTorch writes them at batch 1. The split's shape constant also reshapes a
// weight, which stays at batch 1 and broadcasts. value_info states the batch-1
// type of the sum.
onnx::ModelProto attention_like() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("heads");
  declare(g->add_input(), "x", {1, 4, 6});
  declare(g->add_input(), "y", {1, 4, 6});
  declare(g->add_input(), "bias", {6});
  declare(g->add_output(), "out", {1, 4, 6});
  declare(g->add_value_info(), "sum", {1, 4, 6});
  add_ints(g, "split", {1, 4, -1, 3});
  add_ints(g, "merge", {1, 4, 6});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 6}) w->add_dims(d);
  for (int k = 0; k < 24; ++k) w->add_float_data(0.25f * static_cast<float>(k % 7) - 0.5f);
  add_node(g, "add", "Add", {"x", "y"}, "sum");
  add_node(g, "split_heads", "Reshape", {"sum", "split"}, "heads");
  add_node(g, "split_w", "Reshape", {"w", "split"}, "w_heads");
  add_node(g, "add_w", "Mul", {"heads", "w_heads"}, "scaled");
  set_ints(add_node(g, "to_heads", "Transpose", {"scaled"}, "t"), "perm", {0, 2, 1, 3});
  set_ints(add_node(g, "from_heads", "Transpose", {"t"}, "u"), "perm", {0, 2, 1, 3});
  add_node(g, "merge_heads", "Reshape", {"u", "merge"}, "merged");
  add_node(g, "add_bias", "Add", {"merged", "bias"}, "out");
  return m;
}

Expected<ImportedModel> import_at(const onnx::ModelProto& m, std::optional<int64_t> batch) {
  ImportOptions o;
  o.batch = batch;
  return import_onnx_bytes(m.SerializeAsString(), "heads.onnx", ".", o);
}

const Node& node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.name == name) return n;
  ADD_FAILURE() << "no node " << name;
  return g.node(0);
}

TEST(ImportAtBatch, EveryBatchedInputAndReshapeTakesTheNewBatch) {
  Expected<ImportedModel> m = import_at(attention_like(), 3);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const Graph& g = m->graph;
  ASSERT_TRUE(check(g).ok());
  EXPECT_EQ(m->stats.rewritten_reshapes, 2);
  EXPECT_EQ(node_named(g, "x").outs[0].shape, (Shape{3, 4, 6}));
  EXPECT_EQ(node_named(g, "y").outs[0].shape, (Shape{3, 4, 6}));
  EXPECT_EQ(node_named(g, "bias").outs[0].shape, Shape{6});
  EXPECT_EQ(node_named(g, "split_heads").attrs.ints(AttrKey::shape), (Ints{3, 4, 2, 3}));
  EXPECT_EQ(node_named(g, "split_heads").outs[0].shape, (Shape{3, 4, 2, 3}));
  EXPECT_EQ(node_named(g, "merge_heads").attrs.ints(AttrKey::shape), (Ints{3, 4, 6}));
  // The weight's reshape read the constant as written: it folded at batch 1.
  EXPECT_EQ(g.type(node_named(g, "add_w").args[1]).shape, (Shape{1, 4, 2, 3}));
  EXPECT_EQ(g.type(g.outputs()[0].ref), (TensorType{DType::kF32, Shape{3, 4, 6}}));

  Expected<ImportedModel> same = import_at(attention_like(), 1);
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_EQ(same->stats.rewritten_reshapes, 0);
  Expected<ImportedModel> plain = import_at(attention_like(), std::nullopt);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(same->graph == plain->graph);
}

// Each image of the batch-3 model's output is the batch-1 model's output on
// that image: the batch passes through the rewritten reshapes untouched.
TEST(ImportAtBatch, ComputesWhatTheBatchOneModelComputesPerImage) {
  Expected<ImportedModel> one = import_at(attention_like(), std::nullopt);
  Expected<ImportedModel> three = import_at(attention_like(), 3);
  ASSERT_TRUE(one.ok() && three.ok());
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ref::Tensor<double> x(Shape{3, 4, 6}), y(Shape{3, 4, 6}), bias(Shape{6});
  for (auto* t : {&x, &y, &bias})
    for (double& v : t->data) v = u(rng);
  auto out = ref::evaluate<double>(three->graph, {{"x", x}, {"y", y}, {"bias", bias}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ((*out)[0].shape, (Shape{3, 4, 6}));
  for (int b = 0; b < 3; ++b) {
    ref::Tensor<double> xb(Shape{1, 4, 6}), yb(Shape{1, 4, 6});
    std::copy_n(x.data.begin() + 24 * b, 24, xb.data.begin());
    std::copy_n(y.data.begin() + 24 * b, 24, yb.data.begin());
    auto want = ref::evaluate<double>(one->graph, {{"x", xb}, {"y", yb}, {"bias", bias}});
    ASSERT_TRUE(want.ok()) << want.error().message;
    EXPECT_EQ(
        std::vector<double>((*out)[0].data.begin() + 24 * b, (*out)[0].data.begin() + 24 * (b + 1)),
        (*want)[0].data)
        << "image " << b;
  }
}

TEST(ImportAtBatch, AHardCodedReshapeIsAnErrorNamingTheNode) {
  onnx::ModelProto m = attention_like();
  // [1,4,6] flattened to [4,6]: the batch is gone from the shape.
  auto* g = m.mutable_graph();
  add_ints(g, "flat", {4, 6});
  g->mutable_node(g->node_size() - 1)->set_input(0, "flat_merged");
  add_node(g, "flatten_batch", "Reshape", {"merged", "flat"}, "flat_merged");
  ASSERT_TRUE(import_at(m, std::nullopt).ok());
  Expected<ImportedModel> r = import_at(m, 2);
  ASSERT_FALSE(r.ok());
  for (const char* part : {"heads.onnx: node 'flatten_batch' (Reshape)",
                           "at batch 2 (the model's is 1)", "[4,6]", "[2,4,6]"})
    EXPECT_NE(r.error().message.find(part), std::string::npos) << part << ": " << r.error().message;
}

TEST(ImportAtBatch, ABadBatchIsAnErrorNamingTheFile) {
  Expected<ImportedModel> r = import_at(attention_like(), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("heads.onnx: the batch must be positive"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace tso::onnx_frontend
