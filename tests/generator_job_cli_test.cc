// `tso generate` as a job (generator/job.h) through the binary: under mpirun
// with 1, 2 and 3 ranks, and in one process with a memory budget small
// enough to spill, it writes byte for byte the single run's file (N=3 over
// bias.ops); a rank that fails names itself and its stage and leaves no
// output, and the rerun reuses the shards already finished. The mpirun tests
// skip where tso was built without MPI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/binary_run.h"

namespace {

namespace fs = std::filesystem;

using tso::testing::read_file;
using tso::testing::RunResult;

// The counts a run prints, without its timings.
std::string counts(const std::string& out) { return out.substr(0, out.find("seconds:")); }

// The checkpoint key a job prints ("key K in DIR").
std::string key_of(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex("key ([0-9a-f]{16}) in"))) << out;
  return m.size() > 1 ? m[1].str() : "";
}

class GenerateJob : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tso_generate_job_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // Open MPI refuses root (CI containers) unless told.
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `[mpirun -np RANKS] tso generate --max-ops 3 --ops generator/bias.ops ARGS...`
  // in the source tree (ranks 0: no mpirun).
  RunResult run(int ranks, const std::vector<std::string>& args) const {
    std::vector<std::string> argv;
    if (ranks > 0)
      argv = {"--oversubscribe",
              "--mca",
              "btl",
              "self,vader",
              "--mca",
              "btl_vader_single_copy_mechanism",
              "none",
              "-np",
              std::to_string(ranks),
              TSO_BINARY};
    argv.insert(argv.end(), {"generate", "--max-ops", "3", "--ops", "generator/bias.ops"});
    argv.insert(argv.end(), args.begin(), args.end());
    return tso::testing::run_binary(ranks > 0 ? TSO_MPIRUN : TSO_BINARY, argv, dir_);
  }

  // The single run's file and output, once per test.
  const RunResult& single() {
    if (single_.exit_code < 0) {
      single_ = run(0, {"-o", path("single.rules")});
      EXPECT_EQ(single_.exit_code, 0) << single_.err;
    }
    return single_;
  }

  void expect_same_as_single(const RunResult& r, const std::string& file) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string a = read_file(path("single.rules")), b = read_file(file);
    EXPECT_GT(a.size(), 10000u);
    EXPECT_TRUE(a == b) << file << " differs from the single run";
    EXPECT_EQ(counts(single().out), counts(r.out));
  }

  void expect_no_output(const std::string& out) const {
    EXPECT_FALSE(fs::exists(out)) << out;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_))
      EXPECT_FALSE(e.path().string().starts_with(out + ".tmp")) << e.path();
  }

  fs::path dir_;
  RunResult single_;
};

bool have_mpi() { return std::string(TSO_MPIRUN).size() > 0; }

TEST_F(GenerateJob, RanksWriteTheSingleRunFile) {
  if (!have_mpi()) GTEST_SKIP() << "tso built without MPI";
  single();
  for (int ranks : {1, 2, 3}) {
    const std::string out = path("ranks" + std::to_string(ranks) + ".rules");
    RunResult r = run(ranks, {"-o", out});
    expect_same_as_single(r, out);
    EXPECT_NE(r.out.find("job: " + std::to_string(ranks) + " ranks"), std::string::npos) << r.out;
    // Rank 0 shows every rank's memory, and the work directory is gone.
    EXPECT_NE(r.out.find("rank " + std::to_string(ranks - 1) + ": peak RSS"), std::string::npos);
    EXPECT_FALSE(fs::exists(out + ".work"));
  }
  // More shards than ranks, with a budget that spills on every rank.
  const std::string out = path("shards.rules");
  RunResult r = run(2, {"--shards", "5", "--memory-budget", "1M", "-o", out});
  expect_same_as_single(r, out);
  EXPECT_NE(r.out.find("job: 2 ranks, 5 shards (0 reused)"), std::string::npos) << r.out;
  // Rank 0's last progress line: the whole job's graphs, and each rank's
  // stage, shards and memory.
  EXPECT_NE(r.err.find("stage done, 45815 graphs ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; rank 1 done, shards 2/2, "), std::string::npos) << r.err;
}

TEST_F(GenerateJob, BudgetSpillsToSortedRunsInOneProcess) {
  single();
  const std::string out = path("budget.rules");
  RunResult r = run(0, {"--memory-budget", "1M", "-o", out});
  expect_same_as_single(r, out);
  // Received records went past the budget into sorted runs on disk.
  EXPECT_EQ(r.out.find(" 0 spilled runs"), std::string::npos) << r.out;
  for (const char* bad : {"1", "2X", "G", "-5M"}) {
    RunResult b = run(0, {"--memory-budget", bad, "-o", out + "2"});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(b.err, std::string("tso generate: --memory-budget must be a size of at least 1M "
                                 "(e.g. 2G), got '") +
                         bad + "'\n");
  }
}

// Shard 1 of 2 cannot be written (a directory stands at its path): the job
// fails in the enumerate stage and writes nothing; once the path is free,
// the rerun reuses shard 0.
TEST_F(GenerateJob, FailedShardLeavesNoOutputAndRerunReusesTheFinished) {
  single();
  const std::string out = path("job.rules"), work = path("work");
  RunResult first = run(0, {"--shards", "2", "--work-dir", work, "-o", out});
  expect_same_as_single(first, out);
  const std::string blocker = work + "/" + key_of(first.out) + "-shard-1-of-2.part";
  fs::remove(out);
  fs::create_directories(blocker);
  RunResult failed = run(0, {"--shards", "2", "--work-dir", work, "-o", out});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("tso generate: " + blocker), std::string::npos) << failed.err;
  expect_no_output(out);
  fs::remove(blocker);
  RunResult again = run(0, {"--shards", "2", "--work-dir", work, "-o", out});
  expect_same_as_single(again, out);
  EXPECT_NE(again.out.find("2 shards (1 reused)"), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(work));
}

// The same over two ranks: rank 1 fails on its second shard (3 of 4) after
// checkpointing its first (1 of 4); the message names the rank and stage.
TEST_F(GenerateJob, FailedRankStopsTheJobAndRerunReusesItsShards) {
  if (!have_mpi()) GTEST_SKIP() << "tso built without MPI";
  single();
  const std::string out = path("job.rules"), work = path("work");
  RunResult first = run(2, {"--shards", "4", "--work-dir", work, "-o", out});
  expect_same_as_single(first, out);
  const std::string blocker = work + "/" + key_of(first.out) + "-shard-3-of-4.part";
  fs::remove(out);
  fs::create_directories(blocker);
  RunResult failed = run(2, {"--shards", "4", "--work-dir", work, "-o", out});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("tso generate: rank 1 failed in stage enumerate: " + blocker),
            std::string::npos)
      << failed.err;
  expect_no_output(out);
  EXPECT_TRUE(fs::exists(work + "/" + key_of(first.out) + "-shard-1-of-4.part"));
  fs::remove(blocker);
  RunResult again = run(2, {"--shards", "4", "--work-dir", work, "-o", out});
  expect_same_as_single(again, out);
  EXPECT_EQ(again.out.find("4 shards (0 reused)"), std::string::npos) << again.out;
}

}  // namespace
