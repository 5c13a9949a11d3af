// revision.cmake, run as the build runs it, on a folder of sources made
// here: the revision follows the sources and the kernel sets, and nothing
// else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tso::rt {
namespace {

namespace fs = std::filesystem;

class RevisionScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tso_revision_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "src");
    write("kernel.cc", "int kernel() { return 1; }\n");
    write("kernel.h", "int kernel();\n");
    write("kernel_test.cc", "// a test\n");
    write("README.md", "# kernels\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "src" / name) << text;
  }

  fs::path out() const { return dir_ / "revision.cc"; }

  // Runs the script and returns the revision it wrote.
  std::string revision(const std::string& kernels = "avx2 avx512") {
    const std::string cmd = std::string(TSO_CMAKE_COMMAND) + " -DDIR=" + (dir_ / "src").string() +
                            " -DNAMESPACE=cuda \"-DKERNELS=" + kernels +
                            "\" -DOUT=" + out().string() + " -P " + TSO_REVISION_SCRIPT;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::stringstream text;
    text << std::ifstream(out()).rdbuf();
    const std::string s = text.str(), before = "return \"";
    EXPECT_NE(s.find("namespace tso::cuda {"), std::string::npos) << s;
    const size_t at = s.find(before);
    if (at == std::string::npos) return "no revision in: " + s;
    return s.substr(at + before.size(), 12);
  }

  fs::path dir_;
};

TEST_F(RevisionScript, FollowsTheSourcesAndTheKernelSetsOnly) {
  const std::string first = revision();
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos) << first;
  // The same sources keep the file as it was, so nothing relinks.
  const fs::file_time_type written = fs::last_write_time(out());
  EXPECT_EQ(revision(), first);
  EXPECT_EQ(fs::last_write_time(out()), written);

  write("kernel_test.cc", "// another test\n");
  write("README.md", "# the kernels\n");
  write("conv_bench.cc", "int main() {}\n");
  write("gemm_test.cu", "// a GPU test\n");
  EXPECT_EQ(revision(), first) << "tests, benchmarks and READMEs are not the kernels";

  EXPECT_NE(revision("portable"), first);

  write("kernel.h", "int kernel(int);\n");
  const std::string header = revision();
  EXPECT_NE(header, first);
  write("kernel.cc", "int kernel(int x) { return x; }\n");
  const std::string source = revision();
  EXPECT_NE(source, header);
  write("winograd.cc", "\n");
  const std::string added = revision();
  EXPECT_NE(added, source) << "a new source is part of the runtime";
  write("gemm.cu", "\n");
  EXPECT_NE(revision(), added) << "CUDA sources are part of the runtime";
}

}  // namespace
}  // namespace tso::rt
