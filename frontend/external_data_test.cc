// External data is read only from regular files inside the model's folder:
// a location that is absolute, climbs out with "..", or is a link that
// resolves outside is an error naming the initializer, never read, and
// never taken for a missing file that random weights would fill.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"

namespace tso {
namespace {

namespace fs = std::filesystem;
using testing::declare;

// y = x @ w, w: f32[2, 2] read from external data at `location`.
onnx::ModelProto projection(const std::string& location, const std::string& offset = "0") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("proj");
  declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 2});
  declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 2});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"location", location}, {"offset", offset}}) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  testing::add_node(g, "MatMul", {"x", "w"}, "y");
  return m;
}

constexpr float kWeights[4] = {1, 2, 3, 4};

void write_weights(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(kWeights), 16);
}

// A folder "model/" for the model beside a folder "secret/" holding a
// weights file that it must not read.
class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("external_data_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    write_weights(root_ / "secret" / "w.bin");
    fs::create_directories(root_ / "model");
  }
  void TearDown() override { fs::remove_all(root_); }

  Expected<ImportedModel> import(const onnx::ModelProto& m, bool random_weights = false) {
    ImportOptions o;
    if (random_weights) o.random_weights_seed = 1;
    return import_onnx_bytes(m.SerializeAsString(), "proj.onnx", (root_ / "model").string(), o);
  }

  // Asserts the import fails naming the initializer and `words`.
  void expect_refused(const std::string& location, const std::string& words) {
    for (bool random : {false, true}) {
      Expected<ImportedModel> r = import(projection(location), random);
      ASSERT_FALSE(r.ok()) << location;
      EXPECT_NE(r.error().message.find("initializer 'w'"), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
    }
  }

  fs::path root_;
};

std::vector<float> weights_of(const ImportedModel& m) {
  for (int i = 0; i < m.graph.size(); ++i) {
    const Node& n = m.graph.node(i);
    if (n.op != Op::Weight || n.name != "w") continue;
    std::vector<float> v(n.data->bytes.size() / 4);
    std::memcpy(v.data(), n.data->bytes.data(), n.data->bytes.size());
    return v;
  }
  return {};
}

TEST_F(ExternalData, FilesInsideTheModelsFolderAreRead) {
  write_weights(root_ / "model" / "w.bin");
  write_weights(root_ / "model" / "data" / "w.bin");
  for (const char* location : {"w.bin", "data/w.bin", "./data/../w.bin"}) {
    Expected<ImportedModel> r = import(projection(location));
    ASSERT_TRUE(r.ok()) << location << ": " << r.error().message;
    EXPECT_EQ(weights_of(*r), std::vector<float>(kWeights, kWeights + 4)) << location;
  }
}

TEST_F(ExternalData, ALinkThatStaysInsideIsRead) {
  write_weights(root_ / "model" / "blobs" / "0001");
  fs::create_symlink("blobs/0001", root_ / "model" / "w.bin");
  Expected<ImportedModel> r = import(projection("w.bin"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(weights_of(*r), std::vector<float>(kWeights, kWeights + 4));
}

TEST_F(ExternalData, ALocationClimbingOutOfTheFolderIsRefused) {
  expect_refused("../secret/w.bin", "outside the model's folder");
  expect_refused("data/../../secret/w.bin", "outside the model's folder");
  // Refused before it is looked for: not a missing file for random weights.
  expect_refused("../secret/absent.bin", "outside the model's folder");
}

TEST_F(ExternalData, AnAbsoluteLocationIsRefused) {
  expect_refused((root_ / "secret" / "w.bin").string(), "by an absolute path");
  expect_refused((root_ / "model" / "absent.bin").string(), "by an absolute path");
}

TEST_F(ExternalData, ALinkResolvingOutsideIsRefused) {
  fs::create_symlink(root_ / "secret" / "w.bin", root_ / "model" / "w.bin");
  expect_refused("w.bin", "outside the model's folder");
  fs::create_directory_symlink(root_ / "secret", root_ / "model" / "data");
  expect_refused("data/w.bin", "outside the model's folder");
}

TEST_F(ExternalData, AFolderOrADeviceIsRefused) {
  fs::create_directories(root_ / "model" / "data");
  expect_refused("data", "not a regular file");
  expect_refused(".", "not a regular file");
  fs::create_symlink("/dev/zero", root_ / "model" / "zero");
  expect_refused("zero", "outside the model's folder");
}

TEST_F(ExternalData, AnOffsetPastTheFileIsAnErrorEvenNearTheLargestInteger) {
  write_weights(root_ / "model" / "w.bin");
  for (const char* offset : {"4", "9223372036854775807", "9223372036854775800", "-1"}) {
    Expected<ImportedModel> r = import(projection("w.bin", offset));
    ASSERT_FALSE(r.ok()) << offset;
    EXPECT_NE(r.error().message.find("cannot read 16 bytes"), std::string::npos)
        << r.error().message;
  }
}

}  // namespace
}  // namespace tso
