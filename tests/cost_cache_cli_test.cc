// Measured costs through the built binary: `tso profile --device cpu` writes
// a cost table that parses, and `tso optimize --device cpu` measures missing
// signatures into its cache, so a second run of the same model measures
// nothing; a cache from another device is an error naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/signature.h"
#include "runtime/common/cost_table.h"
#include "tests/binary_run.h"
#include "tests/cli_graphs.h"

namespace {

namespace fs = std::filesystem;

using tso::testing::read_file;
using tso::testing::RunResult;

using tso::testing::kConvRelu;

class CostCacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tso_cost_cache_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    model_ = (dir_ / "conv_relu.tso").string();
    std::ofstream(model_) << kConvRelu;
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const std::vector<std::string>& args) {
    return tso::testing::run_binary(TSO_BINARY, args, dir_);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string model_;
};

// "N signatures measured, M found in the cache" from the optimize output.
std::pair<int, int> cache_counts(const std::string& err) {
  std::smatch m;
  static const std::regex re(R"((\d+) signatures measured, (\d+) found in the cache)");
  if (!std::regex_search(err, m, re)) {
    ADD_FAILURE() << "no cost cache line in: " << err;
    return {-1, -1};
  }
  return {std::stoi(m[1]), std::stoi(m[2])};
}

TEST_F(CostCacheCli, ProfileOnCpuWritesATableThatParses) {
  RunResult r = run({"profile", model_, "--random-weights", "1", "--device", "cpu", "-o",
                     path("costs.json"), "--iters", "3", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // conv2d and relu alone, and relu as the convolution's post-op.
  EXPECT_NE(r.out.find("3 operator signatures"), std::string::npos) << r.out;
  tso::Expected<tso::rt::CostTable> t = tso::rt::read_cost_table(path("costs.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->device.rfind("cpu: ", 0), 0u) << t->device;
  EXPECT_NE(t->device.find(", 1 thread, oneDNN "), std::string::npos) << t->device;
  ASSERT_EQ(t->entries.size(), 3u);
  for (const tso::rt::CostEntry& e : t->entries) {
    if (!tso::is_post_op_signature(e.signature)) {
      EXPECT_GT(e.median_ms, 0) << e.signature;
    }
    EXPECT_EQ(e.samples, 3) << e.signature;
  }
}

TEST_F(CostCacheCli, SecondOptimizeMeasuresNothingNew) {
  const std::string cache = path("cache/costs.json");
  const std::vector<std::string> args = {
      "optimize", model_, "--random-weights", "1",   "-o", path("out.tso"),
      "--device", "cpu",  "--cost-cache",     cache, "-q"};
  RunResult first = run(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto [measured1, found1] = cache_counts(first.err);
  EXPECT_GT(measured1, 0);
  EXPECT_EQ(found1, 0);
  ASSERT_TRUE(fs::exists(cache));
  tso::Expected<tso::rt::CostTable> t = tso::rt::read_cost_table(cache);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(static_cast<int>(t->entries.size()), measured1);
  EXPECT_NE(first.out.find("measured on demand"), std::string::npos) << first.out;

  const auto written = fs::last_write_time(cache);
  RunResult second = run(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  auto [measured2, found2] = cache_counts(second.err);
  EXPECT_EQ(measured2, 0);
  EXPECT_GT(found2, 0);
  EXPECT_EQ(fs::last_write_time(cache), written) << "nothing new, so not rewritten";
}

TEST_F(CostCacheCli, CacheOfAnotherDeviceIsAnErrorNamingIt) {
  tso::rt::CostTable other;
  other.device = "cpu: some other machine, 64 threads, oneDNN 9.9.9, avx512";
  ASSERT_TRUE(tso::rt::write_cost_table(other, path("other.json")).ok());
  RunResult r = run({"optimize", model_, "--random-weights", "1", "-o", path("out.tso"), "--device",
                     "cpu", "--cost-cache", path("other.json"), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path("other.json")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("some other machine"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.tso")));
}

}  // namespace
