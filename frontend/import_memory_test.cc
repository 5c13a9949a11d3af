// import_onnx holds a model about once: it parses from the file stream and
// frees each initializer's bytes in the protobuf once the graph holds them.
// Measured as the peak resident memory of a child process that imports a
// model of 64 MiB of weights; holding the bytes twice (the protobuf's and the
// graph's) would need 128 MiB, reading the file into memory first 192.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/testing/peak_memory.h"
#include "core/testing/sanitizers.h"
#include "frontend/onnx.h"
#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {
namespace {

constexpr int kWeights = 16;
constexpr int64_t kSide = 1024;  // each weight: 1024 x 1024 floats, 4 MiB
constexpr int64_t kMiB = 1 << 20;

// y = x + w0 + w1 + ... + w15, every w a distinct 4 MiB initializer.
onnx::ModelProto sum_of_weights() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {kSide, kSide});
  std::string prev = "x";
  for (int i = 0; i < kWeights; ++i) {
    const std::string w = "w" + std::to_string(i), s = "s" + std::to_string(i);
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(w);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(kSide);
    t->add_dims(kSide);
    t->mutable_raw_data()->assign(kSide * kSide * sizeof(float), static_cast<char>(i + 1));
    onnx::NodeProto* n = g->add_node();
    n->set_name(s);
    n->set_op_type("Add");
    n->add_input(prev);
    n->add_input(w);
    n->add_output(s);
    prev = s;
  }
  testing::declare(g->add_output(), prev, onnx::TensorProto::FLOAT, {kSide, kSide});
  return m;
}

// The peak resident memory, in MiB, that importing `path` adds to a fresh
// child process; -1 when the child could not measure it or the import failed.
int64_t import_peak_mib(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    bool ok = false;
    const std::optional<int64_t> peak =
        tso::testing::added_peak_bytes([&] { ok = import_onnx(path).ok(); });
    if (!peak || !ok) _exit(255);
    _exit(static_cast<int>(std::min<int64_t>(*peak / kMiB, 254)));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}

TEST(ImportMemory, AModelsWeightsAreHeldAboutOnceWhileItIsImported) {
  if (TSO_UNDER_ASAN) GTEST_SKIP() << "AddressSanitizer holds freed memory in quarantine";
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("tso_import_memory_" + std::to_string(getpid()) + ".onnx");
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(sum_of_weights().SerializeToOstream(&out));
  }
  const int64_t weights_mib = kWeights * kSide * kSide * int64_t{sizeof(float)} / kMiB;
  const int64_t peak = import_peak_mib(path.string());
  std::filesystem::remove(path);
  ASSERT_GE(peak, 0) << "the child process could not import the model or read its peak memory";
  EXPECT_GE(peak, weights_mib) << "the graph holds the weights once";
  EXPECT_LT(peak, weights_mib + weights_mib / 2)
      << "import held " << peak << " MiB at its peak for " << weights_mib << " MiB of weights";
}

}  // namespace
}  // namespace tso::onnx_frontend
