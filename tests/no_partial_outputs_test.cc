// Every `tso` command that writes a file writes it whole or not at all, also
// when interrupted (issue 17, "No partial outputs"): optimize (the model, its
// report, the cost cache), generate (rules and part files), verify (-o and
// --regions), profile, zoo and run --outputs. Each is interrupted at exact
// moments by a preloaded shim (tests/interrupt_shim.cc): just before a
// temporary is renamed over its target, and while it is being written; and
// by a signal from outside mid-run. A write that fails halfway (the file size
// limit standing for a full disk) is tested the same way. Afterwards every
// target holds its previous contents (or is absent, as before) or, where the
// interruption came after its rename, the complete new contents, and the
// folder holds no temporary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime/common/cost_table.h"
#include "tests/binary_run.h"
#include "tests/cli_graphs.h"

namespace {

namespace fs = std::filesystem;

using tso::testing::read_file;

const std::string kSource = TSO_SOURCE_DIR;
// One rule file of the shipped ones, which fuses conv_relu's relu: loaded in
// a fraction of the time all of them take.
const std::string kRules = kSource + "/substitutions/bias_n4.rules";

using tso::testing::kConvRelu;

const char* kTwoOutputs = R"(graph two_outputs {
  input x: f32[4,64]
  %r = relu(x)
  %s = sigmoid(x)
  output y = %r
  output z = %s
}
)";

// Each file's name, size and hash, one a line: what failures print.
std::string listing(const std::map<std::string, std::string>& files) {
  std::string text;
  for (const auto& [name, contents] : files)
    text += name + ": " + std::to_string(contents.size()) + " bytes, hash " +
            std::to_string(std::hash<std::string>{}(contents)) + "\n";
  return text;
}

// How a run of `tso` is disturbed.
struct Disturbance {
  std::string interrupt_at;   // "rename:N" or "write:N" (the shim), or none
  int signal = SIGINT;        // raised by the shim, or sent from outside
  double signal_after_s = 0;  // > 0: sent from outside after this long
  rlim_t file_size_limit = RLIM_INFINITY;
};

// At the shim's moment ("rename:N" or "write:N").
Disturbance at(const std::string& moment, int signal = SIGINT) {
  Disturbance d;
  d.interrupt_at = moment;
  d.signal = signal;
  return d;
}

// Writes past `bytes` fail (EFBIG), as on a full disk.
Disturbance file_size_limit(rlim_t bytes) {
  Disturbance d;
  d.file_size_limit = bytes;
  return d;
}

// From outside, after `seconds`.
Disturbance after(double seconds, int signal) {
  Disturbance d;
  d.signal = signal;
  d.signal_after_s = seconds;
  return d;
}

struct Outcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string err;
  double seconds = 0;  // wall time from fork to exit
};

class NoPartialOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path root =
        fs::path(::testing::TempDir()) / ("tso_no_partial_" + std::to_string(getpid()));
    fs::remove_all(root);
    dir_ = root / "out";
    scratch_ = root / "scratch";
    fs::create_directories(dir_);
    fs::create_directories(scratch_);
    std::ofstream(scratch_ / "conv_relu.tso") << kConvRelu;
    std::ofstream(scratch_ / "two_outputs.tso") << kTwoOutputs;
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  std::string out(const std::string& name) const { return (dir_ / name).string(); }
  std::string in(const std::string& name) const { return (scratch_ / name).string(); }

  // Runs tso with `args`; its output and the cost cache stay in the scratch
  // folder, so `dir_` holds only what the command writes.
  Outcome run(const std::vector<std::string>& args, const Disturbance& d = {}) const {
    std::vector<std::string> argv = {TSO_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.push_back("XDG_CACHE_HOME=" + (scratch_ / "cache").string());
    if (!d.interrupt_at.empty()) {
      env.push_back("LD_PRELOAD=" + std::string(TSO_INTERRUPT_SHIM));
      env.push_back("TSO_INTERRUPT_AT=" + d.interrupt_at);
      env.push_back("TSO_INTERRUPT_SIGNAL=" + std::to_string(d.signal));
      env.push_back("TSO_INTERRUPT_UNDER=" + dir_.string());
      // A sanitizer build's runtime would refuse a library preloaded before it.
      env.push_back("ASAN_OPTIONS=verify_asan_link_order=0");
    }
    std::vector<char*> c_argv, c_env;
    for (std::string& a : argv) c_argv.push_back(a.data());
    for (std::string& e : env) c_env.push_back(e.data());
    c_argv.push_back(nullptr);
    c_env.push_back(nullptr);
    const std::string err_path = (scratch_ / "stderr").string();
    const std::string out_path = (scratch_ / "stdout").string();

    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      // Signals at their defaults whatever the test runner ignores; the
      // size limit fails writes (EFBIG) instead of killing the process.
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{d.file_size_limit, d.file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
      const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, STDOUT_FILENO);
      dup2(e, STDERR_FILENO);
      execve(c_argv[0], c_argv.data(), c_env.data());
      _exit(127);
    }
    if (d.signal_after_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(d.signal_after_s));
      kill(pid, d.signal);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome o;
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    o.err = read_file(err_path);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return o;
  }

  // Every file under dir_ with its contents, by path relative to dir_.
  std::map<std::string, std::string> files() const {
    std::map<std::string, std::string> all;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file()) all[fs::relative(e.path(), dir_).string()] = read_file(e.path());
    return all;
  }

  void put(const std::string& name, const std::string& text) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  // Whether a run ended, or renamed a target into place, before its signal.
  bool came_late(const Outcome& o, const std::map<std::string, std::string>& before) const {
    if (o.exit_code == 0) return true;
    const std::map<std::string, std::string> now = files();
    if (now == before || now.size() != before.size()) return false;
    for (const auto& [name, contents] : now)
      if (!before.count(name)) return false;
    return true;
  }

  // dir_ holds exactly `files`, as `files()` listed them.
  void put_back(const std::map<std::string, std::string>& files) const {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const auto& [name, contents] : files) put(name, contents);
  }

  // `run` with `d` ends by its signal and changes nothing under dir_: each
  // target as it was, no temporary. A signal sent from outside may come too
  // late, the run being faster than the one it was timed on: after the run
  // ended, or after it renamed a target into place (a file changed, no
  // temporary beside it). Then the folder is put back and the run repeated
  // with half the delay.
  void expect_interrupted_leaving_all(const std::vector<std::string>& args, Disturbance d) const {
    const std::map<std::string, std::string> before = files();
    Outcome o = run(args, d);
    for (int retry = 0; d.signal_after_s > 0 && retry < 4 && came_late(o, before); ++retry) {
      put_back(before);
      d.signal_after_s /= 2;
      o = run(args, d);
    }
    SCOPED_TRACE(args[0] + " interrupted " +
                 (d.interrupt_at.empty() ? "after " + std::to_string(d.signal_after_s) + " s"
                                         : "at " + d.interrupt_at));
    if (refused_as_busy(o)) return;
    EXPECT_EQ(o.signal, d.signal) << "exit " << o.exit_code << ": " << o.err;
    EXPECT_EQ(listing(files()), listing(before));
  }

  // `run` with writes failing halfway exits with code 1 (a file could not
  // be written) and changes nothing under dir_.
  void expect_failed_leaving_all(const std::vector<std::string>& args) const {
    SCOPED_TRACE(args[0] + " with writes failing past 100 bytes");
    const std::map<std::string, std::string> before = files();
    const Outcome o = run(args, file_size_limit(100));
    if (refused_as_busy(o)) return;
    EXPECT_EQ(o.exit_code, 1) << "signal " << o.signal << ": " << o.err;
    EXPECT_EQ(listing(files()), listing(before));
  }

  // The CPU profiler refuses to time on a machine too busy to measure (exit
  // code 2, before writing anything): such a run tests nothing here.
  bool refused_as_busy(const Outcome& o) const {
    const bool busy = o.exit_code == 2 && o.err.find("the machine is busy") != std::string::npos;
    busy_ = busy_ || busy;
    return busy;
  }

  fs::path dir_, scratch_;
  mutable bool busy_ = false;
};

TEST_F(NoPartialOutputs, OptimizeKeepsTheModelAndReportOrWritesEachWhole) {
  const std::vector<std::string> args = {"optimize",
                                         in("conv_relu.tso"),
                                         "-o",
                                         out("model.tso"),
                                         "--report",
                                         out("report.md"),
                                         "--device",
                                         kSource + "/optimizer/devices/h100.json",
                                         "--random-weights",
                                         "1",
                                         "--rules",
                                         kRules,
                                         "--no-verify-speed",
                                         "-q"};
  const Outcome complete = run(args);
  ASSERT_EQ(complete.exit_code, 0) << complete.err;
  const std::string model = read_file(out("model.tso"));
  put("model.tso", "previous model\n");
  put("report.md", "previous report\n");
  // Before the model's rename, while the model is written: nothing changes.
  expect_interrupted_leaving_all(args, at("rename:1"));
  expect_interrupted_leaving_all(args, at("write:1", SIGTERM));
  // Before the report's rename: the model is whole and new, the report old.
  const Outcome o = run(args, at("rename:2", SIGTERM));
  EXPECT_EQ(o.signal, SIGTERM) << o.err;
  EXPECT_EQ(files(), (std::map<std::string, std::string>{{"model.tso", model},
                                                         {"report.md", "previous report\n"}}));
  // Mid-run, from outside: a third of the complete run in, loading the rules
  // (how long that takes depends on the machine).
  put("model.tso", "previous model\n");
  expect_interrupted_leaving_all(args, after(complete.seconds / 3, SIGINT));
  expect_failed_leaving_all(args);
}

// The measured costs are saved at the end of the run, as is the model:
// interrupted before the second rename, the first file is whole and the
// other absent, as before.
TEST_F(NoPartialOutputs, OptimizeWritesTheCostCacheWholeOrNotAtAll) {
  const std::vector<std::string> args = {"optimize",
                                         in("conv_relu.tso"),
                                         "-o",
                                         out("model.tso"),
                                         "--device",
                                         "cpu",
                                         "--cost-cache",
                                         out("cache.json"),
                                         "--random-weights",
                                         "1",
                                         "--rules",
                                         kRules,
                                         "--no-verify-speed",
                                         "-q"};
  const Outcome o = run(args, at("rename:2", SIGTERM));
  // The CPU profiler refuses to time on a machine too busy to measure.
  if (o.exit_code == 0 && o.err.find(" 0 signatures measured") != std::string::npos)
    GTEST_SKIP() << "nothing measured, no cache written: " << o.err;
  EXPECT_EQ(o.signal, SIGTERM) << o.err;
  const std::map<std::string, std::string> after = files();
  ASSERT_EQ(after.size(), 1u) << listing(after);
  if (after.count("model.tso")) {
    EXPECT_TRUE(after.at("model.tso").starts_with("graph conv_relu {\n"));
    EXPECT_TRUE(after.at("model.tso").ends_with("}\n"));
  } else {
    tso::Expected<tso::rt::CostTable> cache = tso::rt::read_cost_table(out("cache.json"));
    ASSERT_TRUE(cache.ok()) << cache.error().message;
    EXPECT_FALSE(cache->entries.empty());
  }
}

TEST_F(NoPartialOutputs, GenerateRulesAndParts) {
  const std::string ops = kSource + "/generator/taso.ops";
  const std::vector<std::string> rules = {"generate", "--ops",        ops, "--max-ops", "2",
                                          "-o",       out("n2.rules")};
  const std::vector<std::string> part = {"generate", "--ops", ops,  "--max-ops",   "2",
                                         "--shard",  "0/2",   "-o", out("p0.part")};
  put("n2.rules", "previous rules\n");
  for (const std::vector<std::string>& args : {rules, part}) {
    expect_interrupted_leaving_all(args, at("rename:1"));
    expect_interrupted_leaving_all(args, at("write:1", SIGTERM));
    expect_failed_leaving_all(args);
  }
  // From outside, while it enumerates (a run of several seconds).
  const std::vector<std::string> long_run = {"generate", "--ops",        ops, "--max-ops", "3",
                                             "-o",       out("n2.rules")};
  expect_interrupted_leaving_all(long_run, after(0.5, SIGTERM));
}

TEST_F(NoPartialOutputs, VerifyAndVerifyRegions) {
  const Outcome g = run({"generate", "--ops", kSource + "/generator/taso.ops", "--max-ops", "2",
                         "-o", in("n2.rules")});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  put("verified.rules", "previous\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"verify", in("n2.rules"), "-o", out("verified.rules")},
        std::vector<std::string>{"verify", "--regions", in("n2.rules"), "-o",
                                 out("regions.rules")}}) {
    expect_interrupted_leaving_all(args, at("rename:1"));
    expect_interrupted_leaving_all(args, at("write:1"));
    expect_failed_leaving_all(args);
  }
}

TEST_F(NoPartialOutputs, Profile) {
  const std::vector<std::string> args = {"profile",
                                         in("conv_relu.tso"),
                                         "--random-weights",
                                         "1",
                                         "--device",
                                         "cpu",
                                         "--iters",
                                         "2",
                                         "--threads",
                                         "1",
                                         "-o",
                                         out("costs.json")};
  put("costs.json", "previous\n");
  expect_interrupted_leaving_all(args, at("rename:1"));
  expect_interrupted_leaving_all(args, at("write:1"));
  expect_failed_leaving_all(args);
  if (busy_) GTEST_SKIP() << "the machine was too busy to profile on";
}

TEST_F(NoPartialOutputs, Zoo) {
  const std::vector<std::string> args = {"zoo",   "resnet18", "--size",
                                         "32x32", "-o",       out("resnet18.onnx")};
  expect_interrupted_leaving_all(args, at("rename:1"));
  put("resnet18.onnx", "previous\n");
  expect_interrupted_leaving_all(args, at("write:1", SIGTERM));
  expect_failed_leaving_all(args);
}

// The outputs are all written before the first is renamed: interrupted
// while the second is written, or at the first rename, neither changed.
TEST_F(NoPartialOutputs, RunOutputs) {
  const std::vector<std::string> args = {"run",       in("two_outputs.tso"), "--device",
                                         "reference", "--outputs",           out("outputs")};
  put("outputs/output_0.pb", "previous 0\n");
  put("outputs/output_1.pb", "previous 1\n");
  expect_interrupted_leaving_all(args, at("rename:1"));
  expect_interrupted_leaving_all(args, at("write:2"));
  expect_failed_leaving_all(args);
  const Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(files().size(), 2u);
  EXPECT_NE(files()["outputs/output_1.pb"], "previous 1\n");
}

}  // namespace
