// The frontend on the shared real models (../shared/models) and on bad input:
// every model imports with static shapes, export passes the ONNX checker,
// import -> export -> import gives an equal graph, squeezenet matches ONNX
// Runtime, and every kind of bad file gives a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/checker.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "frontend/tensor_file.h"
#include "onnx/onnx_pb.h"
#include "tests/frontend_test_util.h"

namespace tso {
namespace {

using testing::floats_of;
using testing::relative_error;

const std::string kModels = "/work/shared/models/";

struct ModelCase {
  const char* file;
  std::map<std::string, int> opaque;  // ONNX op type -> count
};

const ModelCase kCases[] = {
    {"squeezenet1_1.onnx", {}},
    {"squeezenet1_1.graph.onnx", {}},
    {"resnet50.graph.onnx", {}},
    {"resnext50_32x4d.graph.onnx", {}},
    {"inception_v3.graph.onnx", {}},
    {"nasnetalarge.graph.onnx", {}},
    // BERT's attention guards softmax with IsNaN + Where: isnan and where in the IR.
    {"bert_base_seq128.graph.onnx", {}},
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Expected<ImportedModel> import_model(const std::string& file) {
  ImportOptions o;
  o.random_weights_seed = 7;
  return import_onnx(kModels + file, o);
}

class SharedModels : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModels + GetParam().file))
      GTEST_SKIP() << kModels << GetParam().file << " is not present on this machine";
  }
};

TEST_P(SharedModels, ImportsWithStaticShapesAndNoIdentities) {
  Expected<ImportedModel> m = import_model(GetParam().file);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(check(m->graph).ok());
  std::map<std::string, int> opaque;
  for (const OpaqueNodeInfo& n : m->opaque_nodes) ++opaque[n.op_type];
  EXPECT_EQ(opaque, GetParam().opaque);
  EXPECT_GT(m->stats.removed_identities, 0);
  for (const Node& n : m->graph.nodes()) {
    if (n.op == Op::Weight) {
      EXPECT_NE(n.data, nullptr) << n.name;
    }
  }
  EXPECT_EQ(m->info.opset, 17);
}

TEST_P(SharedModels, ExportThenImportGivesAnEqualGraph) {
  Expected<ImportedModel> m = import_model(GetParam().file);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto dir = testing::temp_dir("roundtrip");
  const std::string out = (dir / "model.onnx").string();
  Status s = export_onnx(*m, out);
  ASSERT_TRUE(s.ok()) << s.error().message;
  Expected<ImportedModel> again = import_onnx(out);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->graph == m->graph);
  EXPECT_EQ(again->info.opset, m->info.opset);
  EXPECT_EQ(again->info.ir_version, m->info.ir_version);
  ASSERT_EQ(again->graph.outputs().size(), m->graph.outputs().size());
  for (size_t k = 0; k < m->graph.outputs().size(); ++k)
    EXPECT_EQ(again->graph.outputs()[k].name, m->graph.outputs()[k].name);
  if (!testing::have_python_oracle()) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "checker part skipped: " << testing::kNoVenv;
  }
  std::string err;
  EXPECT_EQ(testing::run_oracle({"check", out}, &err), 0) << err;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Frontend, SharedModels, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string s = info.param.file;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
});

TEST(Frontend, SqueezenetMatchesOnnxRuntime) {
  const std::string model = kModels + "squeezenet1_1.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  Expected<ImportedModel> m = import_onnx(model);
  ASSERT_TRUE(m.ok()) << m.error().message;
  WeightData x;
  x.type = {DType::kF32, Shape{1, 3, 224, 224}};
  std::vector<float> v(x.type.shape.numel());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& f : v) f = dist(rng);
  x.bytes.resize(v.size() * 4);
  std::memcpy(x.bytes.data(), v.data(), x.bytes.size());
  auto dir = testing::temp_dir("squeezenet");
  ASSERT_TRUE(write_tensor_file((dir / "input_0.pb").string(), {"input", x}).ok());
  std::string err;
  ASSERT_EQ(testing::run_oracle({"ort", model, dir.string(), (dir / "ort").string()}, &err), 0)
      << err;
  Expected<NamedTensor> expected = read_tensor_file((dir / "ort" / "output_0.pb").string());
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto got = testing::run_reference(m->graph, {x});
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ((*got)[0].shape, expected->value.type.shape);
  double e = relative_error((*got)[0].data, floats_of(expected->value));
  std::printf("squeezenet1_1: relative error against ONNX Runtime %.3g\n", e);
  EXPECT_LE(e, 1e-4);
  std::filesystem::remove_all(dir);
}

TEST(Frontend, MissingExternalDataIsAnErrorNamingTheFile) {
  const std::string model = kModels + "resnet50.graph.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  Expected<ImportedModel> m = import_onnx(model);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("resnet50.weights"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("--random-weights"), std::string::npos);
}

TEST(Frontend, RandomWeightsDependOnlyOnTheSeed) {
  const std::string model = kModels + "squeezenet1_1.graph.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  ImportOptions a, b;
  a.random_weights_seed = 1, b.random_weights_seed = 2;
  auto m1 = import_onnx(model, a), m2 = import_onnx(model, a), m3 = import_onnx(model, b);
  ASSERT_TRUE(m1.ok() && m2.ok() && m3.ok());
  int same = 0, differ = 0;
  for (int i : m1->graph.input_nodes()) {
    const Node& n = m1->graph.node(i);
    if (n.op != Op::Weight) continue;
    EXPECT_EQ(n.data->bytes, m2->graph.node(i).data->bytes) << n.name;
    (n.data->bytes == m3->graph.node(i).data->bytes ? same : differ)++;
  }
  EXPECT_GT(differ, 0);
}

// --- Another batch (ImportOptions::batch) ---------------------------------

Expected<ImportedModel> import_at_batch(const std::string& file, int64_t batch) {
  ImportOptions o;
  o.random_weights_seed = 7;
  o.batch = batch;
  return import_onnx(kModels + file, o);
}

// Inception-v3 carries its batch through convolutions, pools, a Flatten and
// a Gemm: shape inference alone takes it to 16.
TEST(FrontendAtBatch, InceptionImportsAtBatchSixteen) {
  const std::string file = "inception_v3.graph.onnx";
  if (!std::filesystem::exists(kModels + file)) GTEST_SKIP() << file << " is not present";
  Expected<ImportedModel> m = import_at_batch(file, 16);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(check(m->graph).ok());
  EXPECT_EQ(m->stats.rewritten_reshapes, 0);
  EXPECT_EQ(m->graph.type(TensorRef{m->graph.input_nodes()[0], 0}).shape, (Shape{16, 3, 299, 299}));
  EXPECT_EQ(m->graph.type(m->graph.outputs()[0].ref).shape, (Shape{16, 1000}));
  for (const Node& n : m->graph.nodes())
    if (n.op != Op::Weight) {
      EXPECT_EQ(n.outs[0].shape[0], 16) << n.name;
    }
}

// BERT's 48 head splits and merges are written [1,128,-1,64] and [1,128,768]
// at batch 1; at batch 16 all of them carry the batch, and the batch-1
// constants (position embeddings, the attention mask) broadcast.
TEST(FrontendAtBatch, BertImportsAtBatchSixteenWithEveryReshapeRewritten) {
  const std::string file = "bert_base_seq128.graph.onnx";
  if (!std::filesystem::exists(kModels + file)) GTEST_SKIP() << file << " is not present";
  Expected<ImportedModel> m = import_at_batch(file, 16);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(check(m->graph).ok());
  EXPECT_EQ(m->stats.rewritten_reshapes, 48);
  EXPECT_EQ(m->graph.type(TensorRef{m->graph.input_nodes()[0], 0}).shape, (Shape{16, 128, 768}));
  EXPECT_EQ(m->graph.type(m->graph.outputs()[0].ref).shape, (Shape{16, 128, 768}));
  int reshapes = 0;
  for (const Node& n : m->graph.nodes()) {
    if (n.op != Op::Reshape) continue;
    ++reshapes;
    EXPECT_EQ(n.outs[0].shape[0], 16) << n.name << " " << to_string(n.outs[0].shape);
  }
  EXPECT_EQ(reshapes, 48);
}

// Each sequence of a batch of two gives what the batch-1 model gives on it
// (reference executor, f32, 1e-5 of the largest value).
TEST(FrontendAtBatch, BertAtBatchTwoComputesTheBatchOneModelPerSequence) {
  const std::string file = "bert_base_seq128.graph.onnx";
  if (!std::filesystem::exists(kModels + file)) GTEST_SKIP() << file << " is not present";
  Expected<ImportedModel> one = import_model(file), two = import_at_batch(file, 2);
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_TRUE(two.ok()) << two.error().message;
  const int64_t n = 128 * 768;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.f, 1.f);
  ref::Tensor<float> x(Shape{2, 128, 768});
  for (float& v : x.data) v = dist(rng);
  auto out = ref::evaluate<float>(two->graph, {{"input", x}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (int b = 0; b < 2; ++b) {
    ref::Tensor<float> xb(Shape{1, 128, 768});
    std::copy_n(x.data.begin() + n * b, n, xb.data.begin());
    auto want = ref::evaluate<float>(one->graph, {{"input", xb}});
    ASSERT_TRUE(want.ok()) << want.error().message;
    std::vector<float> got((*out)[0].data.begin() + n * b, (*out)[0].data.begin() + n * (b + 1));
    EXPECT_LE(relative_error(got, (*want)[0].data), 1e-5) << "sequence " << b;
  }
}

// --- Bad input -----------------------------------------------------------

onnx::ModelProto tiny_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  auto value = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
  };
  value(g->add_input(), "x");
  value(g->add_output(), "y");
  auto* n = g->add_node();
  n->set_name("r1");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

Expected<ImportedModel> import_proto(const onnx::ModelProto& m) {
  return import_onnx_bytes(m.SerializeAsString(), "bad.onnx", ".");
}

void expect_error(const Expected<ImportedModel>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  for (const std::string& p : parts)
    EXPECT_NE(r.error().message.find(p), std::string::npos)
        << "'" << p << "' not in: " << r.error().message;
}

TEST(FrontendErrors, TinyModelImports) { EXPECT_TRUE(import_proto(tiny_model()).ok()); }

TEST(FrontendErrors, TruncatedProtobuf) {
  const std::string model = kModels + "squeezenet1_1.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " is not present";
  std::string bytes = read_bytes(model);
  expect_error(import_onnx_bytes(bytes.substr(0, bytes.size() / 2), "cut.onnx", "."),
               {"cut.onnx", "not a valid ONNX protobuf"});
}

TEST(FrontendErrors, NotAnOnnxFile) {
  expect_error(import_onnx_bytes("graph g {\n  input x: f32[1]\n}\n", "g.onnx", "."), {"g.onnx"});
  expect_error(import_onnx("/nonexistent/model.onnx"), {"/nonexistent/model.onnx", "cannot open"});
}

TEST(FrontendErrors, Cycle) {
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "z");
  auto* n = g->add_node();
  n->set_name("r2");
  n->set_op_type("Relu");
  n->add_input("y");
  n->add_output("z");
  expect_error(import_proto(m), {"bad.onnx", "node 'r1' (Relu)", "cycle"});
}

// The node named is on the cycle, not merely behind it: r0 comes first in
// the file and reads the cycle r1 -> r2 -> r1.
TEST(FrontendErrors, CycleNamesANodeOnIt) {
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_name("r0");
  g->mutable_node(0)->set_input(0, "z");
  for (const char* name : {"r1", "r2"}) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type("Relu");
    n->add_input(name == std::string("r1") ? "w" : "z");
    n->add_output(name == std::string("r1") ? "z" : "w");
  }
  Expected<ImportedModel> r = import_proto(m);
  expect_error(r, {"bad.onnx", "node 'r1' (Relu)", "cycle"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find("r0"), std::string::npos) << r.error().message;
}

// Nodes out of order import producers first.
TEST(FrontendImport, UnsortedNodes) {
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "t");
  auto* n = g->add_node();
  n->set_name("r0");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("t");
  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Graph& out = r->graph;
  ASSERT_EQ(out.num_operators(), 2);
  EXPECT_EQ(out.node(out.outputs()[0].ref.node).name, "r1");
  EXPECT_EQ(out.node(out.node(out.outputs()[0].ref.node).args[0].node).name, "r0");
}

TEST(FrontendErrors, DanglingInput) {
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  expect_error(import_proto(m), {"bad.onnx", "node 'r1' (Relu)", "'nowhere'"});
}

TEST(FrontendErrors, UnsupportedOpset) {
  onnx::ModelProto m = tiny_model();
  m.mutable_opset_import(0)->set_version(0);
  expect_error(import_proto(m), {"bad.onnx", "opset 0 is not supported (supported: 1 to 28"});
}

// A model below opset 11 is upgraded by ONNX's version converter, which says
// so: opset 9's Upsample becomes a Resize, and computes what it did, nearest
// and linear (the converter alone changes linear's coordinates). A
// broadcast of opset 6 (Add with broadcast=1) whose operands' extents the
// file does not give cannot be upgraded (the adapter to opset 7 needs them):
// an error naming the opset and the converter's reason. So is a graph output
// that nothing computes, which would crash the converter.
TEST(FrontendOldOpsets, Opset9IsUpgradedAndComputesTheSame) {
  onnx::ModelProto m;
  m.set_ir_version(4);
  m.add_opset_import()->set_version(9);
  auto* g = m.mutable_graph();
  g->set_name("old");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  testing::add_f32s(g, "scales", {1, 1, 2, 2});
  testing::set_string(testing::add_node(g, "up", "Upsample", {"x", "scales"}, "y"), "mode",
                      "nearest");
  Expected<ImportedModel> r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->info.upgraded_from, 9);
  EXPECT_EQ(r->info.opset, 11);
  EXPECT_TRUE(r->opaque_nodes.empty());
  EXPECT_NE(std::find(r->warnings.begin(), r->warnings.end(),
                      "opset 9 upgraded to 11 by ONNX's version converter"),
            r->warnings.end());
  std::map<std::string, ref::Tensor<float>> feeds;
  feeds["x"] = ref::Tensor<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  auto y = ref::evaluate<float>(r->graph, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  EXPECT_EQ((*y)[0].data, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // Linear: output element o reads input coordinate o / 2 (Upsample's
  // mapping; the converter's Resize-11 alone would read (o + 0.5) / 2 - 0.5
  // and give 1.25, 1.75 where Upsample gives 1.5, 2).
  for (auto& a : *g->mutable_node(0)->mutable_attribute())
    if (a.name() == "mode") a.set_s("linear");
  r = import_proto(m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  y = ref::evaluate<float>(r->graph, feeds);
  ASSERT_TRUE(y.ok()) << y.error().message;
  EXPECT_EQ(std::vector<float>((*y)[0].data.begin(), (*y)[0].data.begin() + 4),
            (std::vector<float>{1, 1.5f, 2, 2}));

  onnx::ModelProto old = tiny_model();
  old.set_ir_version(3);
  old.mutable_opset_import(0)->set_version(6);
  // Shapes whose extents the file does not give.
  old.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_param("n");
  onnx::NodeProto* add = old.mutable_graph()->mutable_node(0);
  add->set_op_type("Add");
  add->add_input("b");
  testing::set_int(add, "broadcast", 1);
  onnx::ValueInfoProto* b = old.mutable_graph()->add_input();
  b->set_name("b");
  b->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  b->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");
  expect_error(import_proto(old),
               {"bad.onnx", "opset 6 cannot be upgraded to 11 by ONNX's version converter",
                "Dimension is a param instead of an int"});
  old.mutable_graph()->mutable_output(0)->set_name("nowhere");
  expect_error(import_proto(old),
               {"bad.onnx", "opset 6 cannot be upgraded: graph output 'nowhere' is not produced"});
}

TEST(FrontendErrors, UnresolvableDynamicDimension) {
  onnx::ModelProto m = tiny_model();
  auto* d = m.mutable_graph()
                ->mutable_input(0)
                ->mutable_type()
                ->mutable_tensor_type()
                ->mutable_shape()
                ->mutable_dim(0);
  d->set_dim_param("batch");
  expect_error(import_proto(m), {"bad.onnx", "'x'", "'batch'"});
  ImportOptions o;
  o.input_shapes["x"] = Shape{3};
  EXPECT_TRUE(import_onnx_bytes(m.SerializeAsString(), "bad.onnx", ".", o).ok());
}

TEST(FrontendErrors, BadShapeNamesTheNode) {
  onnx::ModelProto m = tiny_model();
  auto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("Concat");
  auto* axis = n->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(5);
  expect_error(import_proto(m), {"bad.onnx", "node 'r1' (Concat)", "axis"});
}

// A shape the graph builder rejects: the message names the ONNX node once,
// with its ONNX type, then says what is wrong.
TEST(FrontendErrors, ImpossibleShapeNamesTheNodeOnce) {
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) w->add_float_data(v);
  auto* n = g->mutable_node(0);
  n->set_op_type("Add");
  n->add_input("w");
  const Expected<ImportedModel> r = import_proto(m);
  expect_error(r, {"bad.onnx: node 'r1' (Add): add: shapes f32[2] and f32[3] do not broadcast"});
  if (!r) {
    const std::string& e = r.error().message;
    EXPECT_EQ(e.find("'r1'"), e.rfind("'r1'")) << e;
  }
}

}  // namespace
}  // namespace tso
