// `--input-shape` through the binary: a model exported with a dynamic batch
// (as PyTorch and most exporters write one) is refused with the flag to use,
// and every model-loading command (inspect, run, profile, optimize) accepts it
// named or unnamed; the optimized model keeps its input and output names.
// Bad shapes are errors naming the input and exit 2.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

void declare(onnx::ValueInfoProto* v, const std::string& name,
             const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (const std::string& d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

// y = relu(x) + z with x, z: f32[batch,3,8] (z only when `two_inputs`).
fs::path write_model(const std::string& name, bool two_inputs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("dynamic");
  declare(g->add_input(), "x", {"batch", "3", "8"});
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("x");
  relu->add_output(two_inputs ? "r" : "y");
  if (two_inputs) {
    declare(g->add_input(), "z", {"batch", "3", "8"});
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("add");
    add->add_input("r");
    add->add_input("z");
    add->add_output("y");
  }
  declare(g->add_output(), "y", {"batch", "3", "8"});
  fs::path p = fs::path(::testing::TempDir()) / name;
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

// Output files in a folder of the test's own: ctest runs these tests as
// separate processes side by side, and one folder for all let one test
// remove or overwrite another's stderr (an empty message, seen in CI).
testing::RunResult tso(const std::vector<std::string>& args) {
  fs::path scratch =
      fs::path(::testing::TempDir()) /
      ("input_shape_cli_" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(scratch);
  return testing::run_binary(TSO_BINARY, args, scratch);
}

TEST(InputShapeCli, DynamicInputIsRefusedWithTheFlagToUse) {
  fs::path model = write_model("dyn1.onnx", false);
  testing::RunResult r = tso({"inspect", model.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("graph input 'x' has dynamic dimension 0 ('batch')"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--input-shape x:1,3,8"), std::string::npos) << r.err;
}

TEST(InputShapeCli, EveryModelCommandTakesTheShape) {
  fs::path model = write_model("dyn2.onnx", false);
  testing::RunResult r = tso({"inspect", model.string(), "--input-shape", "x:4,3,8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("f32[4,3,8]"), std::string::npos) << r.out;
  r = tso({"run", "--input-shape", "2,3,8", model.string(), "--device", "reference"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("f32[2,3,8]"), std::string::npos) << r.out;
  fs::path costs = fs::path(::testing::TempDir()) / "dyn2.costs.json";
  r = tso({"profile", model.string(), "--input-shape", "x:2,3,8", "--device", "cpu", "-o",
           costs.string()});
  // The CPU profiler refuses to time on a machine too busy to measure.
  if (r.exit_code == 2 && r.err.find("the machine is busy") != std::string::npos)
    GTEST_SKIP() << "tso profile: the machine was too busy to time on";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(testing::read_file(costs).find("relu(f32[2,3,8])"), std::string::npos);
}

TEST(InputShapeCli, OptimizedModelKeepsTheNamesAtTheGivenShapes) {
  fs::path model = write_model("dyn3.onnx", true);
  fs::path out = fs::path(::testing::TempDir()) / "dyn3.opt.onnx";
  fs::path cache = fs::path(::testing::TempDir()) / "dyn3.xdg";
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  testing::RunResult r =
      tso({"optimize", model.string(), "--input-shape", "x:2,3,8", "--input-shape", "z:2,3,8",
           "--device", TSO_SOURCE_DIR "/optimizer/devices/h100.json", "-o", out.string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto m;
  std::ifstream in(out, std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  ASSERT_EQ(m.graph().input_size(), 2);
  EXPECT_EQ(m.graph().input(0).name(), "x");
  EXPECT_EQ(m.graph().input(1).name(), "z");
  EXPECT_EQ(m.graph().output(0).name(), "y");
  EXPECT_EQ(m.graph().input(1).type().tensor_type().shape().dim(0).dim_value(), 2);
}

TEST(InputShapeCli, BadShapesAreErrorsNamingTheInput) {
  fs::path one = write_model("dyn4.onnx", false), two = write_model("dyn5.onnx", true);
  struct Case {
    fs::path model;
    std::string shape, message;
  };
  for (const Case& c : std::vector<Case>{
           {one, "x:2,4,8", "dimension 1 of graph input 'x' is 3 in the model"},
           {one, "x:2,3", "graph input 'x' has rank 3, the shape given for it rank 2"},
           {one, "w:2,3,8", "a shape is given for 'w', which is not a graph input (inputs: x)"},
           {two, "2,3,8", "needs a model with one input; this one has 2 (x, z)"},
           {two, "x:2,3,8", "graph input 'z' has dynamic dimension 0 ('batch')"},
           {one, "x:2,0,8", "extent 0 is below 1"},
           {one, "x:2,three,8", "'three' is not an extent"},
           {one, ":2,3,8", "the name is empty"},
       }) {
    testing::RunResult r = tso({"inspect", c.model.string(), "--input-shape", c.shape});
    EXPECT_EQ(r.exit_code, 2) << c.shape;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.shape << ": " << r.err;
  }
  testing::RunResult r =
      tso({"inspect", TSO_SOURCE_DIR "/tests/data/conv.tso", "--input-shape", "1,3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--input-shape applies to ONNX models only"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tso
