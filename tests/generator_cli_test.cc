// `tso generate` as a user runs it: bad input (an unknown operator in an
// op-set file, --max-ops outside 1..6, an unwritable output, a bad shard,
// incomplete or foreign parts) fails with a clear message, a non-zero exit
// and no output file; parts of a sharded run merge into exactly the file a
// single run writes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Generate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tso_generate_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `tso generate ARGS...` in `cwd` (the source tree unless given).
  RunResult run(const std::vector<std::string>& args, const std::string& cwd = TSO_SOURCE_DIR) const {
    std::string cmd = "cd " + quote(cwd) + " && " + quote(TSO_BINARY) + " generate";
    for (const std::string& a : args) cmd += " " + quote(a);
    cmd += " >" + quote(path("stdout")) + " 2>" + quote(path("stderr"));
    int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(path("stdout"));
    r.err = read_file(path("stderr"));
    return r;
  }

  // No output file and no temporary (OUT.tmp-...) left beside it.
  void expect_no_output(const std::string& out) const {
    EXPECT_FALSE(fs::exists(out)) << out;
    const fs::path dir = fs::path(out).parent_path();
    if (!fs::exists(dir)) return;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
      EXPECT_FALSE(e.path().string().starts_with(out + ".tmp")) << e.path();
  }

  fs::path dir_;
};

// The default operator set is found from any working directory.
TEST_F(Generate, DefaultOpSetOutsideTheSourceTree) {
  RunResult r = run({"--max-ops", "1", "-o", "out.rules"}, dir_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(path("out.rules")).find("ops: taso,"), std::string::npos);
}

TEST_F(Generate, UnknownOperatorNamesFileAndLine) {
  std::ofstream(path("bad.ops")) << "name bad\ninput x1 x2 : f32[2,4]\nop relu\nop frobnicate\n";
  RunResult r = run({"--max-ops", "1", "--ops", path("bad.ops"), "-o", path("out.rules")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tso generate: " + path("bad.ops") + ":4: unknown operator 'frobnicate'\n");
  expect_no_output(path("out.rules"));
}

TEST_F(Generate, MissingOpSetIsAnIoError) {
  RunResult r = run({"--ops", path("none.ops"), "-o", path("out.rules")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(path("none.ops")), std::string::npos) << r.err;
  expect_no_output(path("out.rules"));
}

TEST_F(Generate, MaxOpsOutsideOneToSix) {
  for (const char* n : {"0", "7", "-1"}) {
    RunResult r = run({"--max-ops", n, "-o", path("out.rules")});
    EXPECT_EQ(r.exit_code, 2) << n;
    EXPECT_EQ(r.err, std::string("tso generate: --max-ops must be in 1..6, got ") + n + "\n");
    expect_no_output(path("out.rules"));
  }
}

TEST_F(Generate, UnwritableOutput) {
  const std::string out = path("no/such/dir/out.rules");
  RunResult r = run({"--max-ops", "1", "-o", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tso generate: " + out + ": cannot write: No such file or directory\n");
  expect_no_output(out);
}

TEST_F(Generate, BadShard) {
  for (const char* s : {"3/3", "1", "a/2", "1/0", "/2"}) {
    RunResult r = run({"--max-ops", "1", "--shard", s, "-o", path("p.part")});
    EXPECT_EQ(r.exit_code, 2) << s;
    EXPECT_EQ(r.err, std::string("tso generate: --shard must be i/n with 0 <= i < n, got '") + s +
                         "'\n");
    expect_no_output(path("p.part"));
  }
}

TEST_F(Generate, MergeRejectsMissingRepeatedAndForeignParts) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run({"--max-ops", "1", "--shard", std::to_string(i) + "/2", "-o",
                   path("p" + std::to_string(i))})
                  .exit_code,
              0);
  ASSERT_EQ(run({"--max-ops", "2", "--shard", "1/2", "-o", path("other")}).exit_code, 0);
  std::ofstream(path("junk")) << "hello\n";
  struct Case {
    std::vector<std::string> parts;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{path("p0")}, "part 1/2 is missing"},
           {{path("p0"), path("p0")}, "part 0/2 given twice"},
           {{path("p0"), path("other")},
            "part 1/2 comes from another run (operator set, max-ops, seed or shard count differ)"},
           {{path("p0"), path("junk")},
            path("junk") + ": not a part file of `tso generate --shard` (first line is not "
                           "'# tso generate part v2')"}}) {
    std::vector<std::string> args{"--merge"};
    args.insert(args.end(), c.parts.begin(), c.parts.end());
    args.insert(args.end(), {"-o", path("out.rules")});
    RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << c.error;
    EXPECT_EQ(r.err, "tso generate: " + c.error + "\n");
    expect_no_output(path("out.rules"));
  }
  // A truncated part.
  std::string p0 = read_file(path("p0"));
  std::ofstream(path("cut"), std::ios::binary) << p0.substr(0, p0.size() - 5);
  RunResult r = run({"--merge", path("cut"), path("p1"), "-o", path("out.rules")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path("cut") + ": truncated"), std::string::npos) << r.err;
  expect_no_output(path("out.rules"));
}

// N=3 over TASO's operator set in three parts, merged: byte for byte the
// file of a single run.
TEST_F(Generate, ThreePartsMergeIntoTheSingleRunFile) {
  RunResult single = run({"--max-ops", "3", "-o", path("single.rules")});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  std::vector<std::string> merge{"--merge"};
  for (const char* part : {"2/3", "0/3", "1/3"}) {
    const std::string file = path(std::string("part") + part[0]);
    RunResult r = run({"--max-ops", "3", "--shard", part, "-o", file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("part ") + part), std::string::npos) << r.out;
    merge.push_back(file);
  }
  merge.insert(merge.end(), {"-o", path("merged.rules")});
  RunResult m = run(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const std::string a = read_file(path("single.rules")), b = read_file(path("merged.rules"));
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == b) << "merged parts differ from the single run";
  // Both print the same counts.
  auto counts = [](const std::string& out) { return out.substr(0, out.find("seconds:")); };
  EXPECT_EQ(counts(single.out), counts(m.out));
}

}  // namespace
