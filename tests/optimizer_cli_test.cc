// `tso optimize` through the built binary on bad input: the output or the
// report naming the input file, a report name that is neither .md nor .json,
// missing or malformed rule files or cost tables, a missing or corrupt model. Each gives
// a clear error, its exit code and writes nothing. Unverified rules are not
// applied without --allow-unverified. The faster of the input and the
// optimized graph is written, and a second search is said. The lookahead's
// flags turn it off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/signature.h"
#include "optimizer/test_rules.h"
#include "runtime/common/cost_table.h"
#include "tests/binary_run.h"
#include "tests/cli_graphs.h"

namespace {

namespace fs = std::filesystem;

using tso::testing::read_file;
using tso::testing::RunResult;

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

const std::string kH100 = TSO_SOURCE_DIR "/optimizer/devices/h100.json";

using tso::testing::kConvRelu;

class OptimizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tso_optimize_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    model_ = (dir_ / "conv_relu.tso").string();
    write_file(model_, kConvRelu);
    // The default target measures costs on this CPU into the user's cache:
    // here, into the test's folder.
    setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"optimize"};
    all.insert(all.end(), args.begin(), args.end());
    return tso::testing::run_binary(TSO_BINARY, all, dir_);
  }

  // The files in the directory besides the model.
  std::vector<std::string> written() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().string() != model_) names.push_back(e.path().filename().string());
    return names;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string model_;
};

void expect_in(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST_F(OptimizeCli, OutputEqualToInputIsRefused) {
  RunResult r = run({model_, "-o", model_, "-q"});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "is the input file");
  EXPECT_EQ(read_file(model_), kConvRelu);
  // The same file under another spelling.
  r = run({model_, "-o", (dir_ / "." / "conv_relu.tso").string(), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(model_), kConvRelu);
  EXPECT_TRUE(written().empty());
}

TEST_F(OptimizeCli, ReportNamingTheInputIsRefused) {
  RunResult r = run({model_, "-o", path("out.tso"), "--report", model_, "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(model_), kConvRelu);
  EXPECT_TRUE(written().empty());
}

TEST_F(OptimizeCli, BadReportExtensionIsRefused) {
  RunResult r = run({model_, "-o", path("out.tso"), "--report", path("report.txt"), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "report.txt");
  expect_in(r.err, ".md, .json or .html");
  EXPECT_TRUE(written().empty());
}

TEST_F(OptimizeCli, MissingRuleFileIsAnError) {
  RunResult r = run({model_, "-o", path("out.tso"), "--rules", path("none.rules"), "-q"});
  EXPECT_EQ(r.exit_code, 1);
  expect_in(r.err, "cannot read rule file");
  expect_in(r.err, "none.rules");
  EXPECT_TRUE(written().empty());
}

TEST_F(OptimizeCli, MalformedRuleFileNamesFileAndLine) {
  write_file(path("bad.rules"), "rule r1 {\n  input x: f32[2]\n  source { %0 = frobnicate(x) }\n");
  RunResult r = run({model_, "-o", path("out.tso"), "--rules", path("bad.rules"), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "bad.rules:");
  std::vector<std::string> files = written();
  EXPECT_EQ(files, std::vector<std::string>{"bad.rules"});
}

// The files are parsed in parallel; the error is still the first failing
// file's, in the order given, whichever finishes first.
TEST_F(OptimizeCli, OfSeveralBadRuleFilesTheFirstGivenIsReported) {
  write_file(path("a.rules"), "rule r1 {\n  input x: f32[2]\n  source { %0 = frobnicate(x) }\n");
  write_file(path("b.rules"), "rule r1 {\n  input x: f32[2]\n  source { %0 = relux(x) }\n");
  for (const auto& [first, second, third] : {std::tuple{"a.rules", "b.rules", "none.rules"},
                                             {"b.rules", "a.rules", "none.rules"},
                                             {"none.rules", "b.rules", "a.rules"}}) {
    RunResult r = run({model_, "-o", path("out.tso"), "--rules", path(first), "--rules",
                       path(second), "--rules", path(third), "-q"});
    SCOPED_TRACE(first);
    expect_in(r.err, first);
    EXPECT_EQ(r.err.find(second), std::string::npos) << r.err;
    EXPECT_EQ(r.exit_code, std::string(first) == "none.rules" ? 1 : 2);
    EXPECT_EQ(std::string(first) == "none.rules", r.err.find("cannot read") != std::string::npos);
  }
}

TEST_F(OptimizeCli, NegativeStallIsRefused) {
  RunResult r = run({model_, "-o", path("out.tso"), "--stall", "-1", "-q"});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "--stall");
  EXPECT_TRUE(written().empty());
}

// On the H100 model the fusion halves the graph's cost (5 -> 2.5 us): a
// minimum gain of 50% keeps the input and says so, 40% takes the fusion, and
// a minimum over 50% is refused naming the flag.
TEST_F(OptimizeCli, AResultGainingLessThanTheMinimumKeepsTheInput) {
  RunResult r = run({model_, "-o", path("kept.tso"), "--device", kH100, "--min-gain", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "operators       2 -> 2");
  expect_in(r.out,
            "min gain        kept the input: the best graph, 2.50 us, gains less than 50% "
            "of its cost");
  r = run({model_, "-o", path("fused.tso"), "--device", kH100, "--min-gain", "0.4", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "operators       2 -> 1");
  EXPECT_EQ(r.out.find("min gain"), std::string::npos) << r.out;
  r = run({model_, "-o", path("bad.tso"), "--device", kH100, "--min-gain", "0.6", "-q"});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "--min-gain: Value 0.6 not in range");
  EXPECT_FALSE(fs::exists(path("bad.tso")));
}

TEST_F(OptimizeCli, MissingModelIsAnError) {
  RunResult r = run({path("absent.tso"), "-o", path("out.tso"), "-q"});
  EXPECT_EQ(r.exit_code, 1);
  expect_in(r.err, "absent.tso");
  EXPECT_TRUE(written().empty());
}

// A model that cannot be read is an error naming the file, and only that:
// no line about the cost cache (nothing was measured) and no cache folder.
TEST_F(OptimizeCli, CorruptModelIsItsOnlyError) {
  write_file(path("cut.onnx"), std::string("\x08\x07\x12\x05", 4));
  RunResult r = run({path("cut.onnx"), "-o", path("out.onnx")});
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "cut.onnx: not a valid ONNX protobuf");
  EXPECT_EQ(r.err.find("cost cache"), std::string::npos) << r.err;
  EXPECT_EQ(written(), std::vector<std::string>{"cut.onnx"});
}

// A graph no rule rewrites, on a fresh cache: confirming its measured costs
// leaves the result no cheaper, so the search runs again, and the summary
// says so with the first search's time, as the report does. With the cache
// filled (nothing measured again) or on an analytic model (nothing
// measured) it does not.
TEST_F(OptimizeCli, ASecondSearchIsPrintedWithTheFirstOnesTime) {
  write_file(path("relu.tso"),
             "graph relu {\n  input x: f32[1,64,28,28]\n  %r = relu(x)\n  output y = %r\n}\n");
  RunResult r =
      run({path("relu.tso"), "-o", path("out.tso"), "-q", "--report", path("report.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json c =
      nlohmann::json::parse(read_file(path("report.json")))["cost_confirmation"];
  // The profiler refuses to time on a machine too busy to measure.
  if (c["remeasured"] == 0) GTEST_SKIP() << "nothing measured a second time: " << r.err;
  EXPECT_EQ(c["searched_again"], true) << c;
  expect_in(r.out, "searched again  after a first search of ");
  r = run({path("relu.tso"), "-o", path("out.tso"), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("searched again"), std::string::npos) << r.out;
  r = run({path("relu.tso"), "-o", path("out.tso"), "-q", "--device", kH100});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("searched again"), std::string::npos) << r.out;
}

// A --cost file that is not a tso cost table of this version, or is
// malformed, is an error naming the file; nothing is written.
TEST_F(OptimizeCli, BadCostTableIsAnErrorNamingTheFile) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{ not json", "not valid JSON"},
      {R"({"format": "tso-device", "name": "x"})", "not a tso cost table"},
      {R"({"format": "tso-cost-table", "version": 2})", "cost table version 2"},
      {R"json({"format": "tso-cost-table", "version": 1, "device": "d", "tf32": false,
               "model": "m", "entries": [{"signature": "relu(f32[1])"}]})json",
       "malformed cost table"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    write_file(path("costs.json"), text);
    RunResult r = run({model_, "-o", path("out.tso"), "--cost", path("costs.json"), "-q"});
    EXPECT_EQ(r.exit_code, 2);
    expect_in(r.err, path("costs.json") + ": " + message);
    EXPECT_EQ(written(), std::vector<std::string>{"costs.json"});
  }
}

const char* kUnverifiedFusion = R"(rule fuse_conv_relu {
  origin handwritten
  status unverified
  input x: f32[1,4,8,8]
  input w: f32[6,4,3,3]
  input b: f32[6]
  param ?p = same
  source {
    %0 = conv2d(x, w, b, pad=?p)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(x, w, b, pad=?p, act=relu)
    output %0
  }
}
)";

TEST_F(OptimizeCli, UnverifiedRulesAreNotAppliedWithoutTheFlag) {
  const std::string hw = path("unverified.rules");
  write_file(hw, kUnverifiedFusion);
  RunResult r = run({model_, "-o", path("out.tso"), "--rules", hw, "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.err, "no usable rule");
  expect_in(r.out, "operators       2 -> 2");
  EXPECT_EQ(r.out.find("fuse_conv_relu"), std::string::npos) << r.out;

  r = run({model_, "-o", path("fused.tso"), "--rules", hw, "--allow-unverified", "--device", kH100,
           "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "operators       2 -> 1");
  expect_in(r.out, "rule            fuse_conv_relu x1");
  expect_in(read_file(path("fused.tso")), "act=relu");
}

// A search that changes nothing writes the user's file byte for byte (here
// with blank lines the printer would not write), not the graph exported
// again, and says so.
TEST_F(OptimizeCli, AnUnchangedGraphWritesTheUsersFile) {
  const std::string model = path("spaced.tso"), hw = path("unverified.rules");
  write_file(model, std::string("\n\n") + kConvRelu + "\n\n");
  write_file(hw, kUnverifiedFusion);
  RunResult r = run({model, "-o", path("out.tso"), "--rules", hw, "-q", "--device", kH100,
                     "--report", path("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "measured        not run (the graph is unchanged); wrote the input graph");
  expect_in(read_file(path("r.json")), "\"written\": \"input\"");
  EXPECT_TRUE(read_file(path("out.tso")) == read_file(model));
}

TEST_F(OptimizeCli, RefutedRulesInANamedFileAreRefusedAloud) {
  std::string text = kUnverifiedFusion;
  text.replace(text.find("status unverified"), 17, "status refuted model=\"x=0\"");
  const std::string bad = path("refuted.rules");
  write_file(bad, text);
  RunResult r = run({model_, "-o", path("out.tso"), "--rules", bad, "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.err, "refuted.rules: refusing 1 refuted rule (not equivalences");
  expect_in(r.out, "operators       2 -> 2");

  r = run({model_, "-o", path("loose.tso"), "--rules", bad, "--allow-unverified", "--device", kH100,
           "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("refusing"), std::string::npos) << r.err;
  expect_in(r.out, "rule            fuse_conv_relu x1");
}

// The shipped files hold refuted rules as the verifier's record: skipped
// quietly (the report lists them), and the default run fuses by itself.
TEST_F(OptimizeCli, ShippedRefutedRulesAreSkippedQuietly) {
  RunResult r =
      run({model_, "-o", path("out.tso"), "-q", "--report", path("r.json"), "--device", kH100});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("refusing"), std::string::npos) << r.err;
  expect_in(r.out, "operators       2 -> 1");
  expect_in(read_file(path("r.json")), "status refuted");
}

// Never slower: the input and the optimized graph are timed on the CPU
// runtime and the optimized one is written only when faster by its minimum
// and its median; the report gives both figures of both.
TEST_F(OptimizeCli, TheFasterOfInputAndOptimizedGraphIsWritten) {
  const std::string shared = "/work/shared/models/squeezenet1_1.onnx";
  if (!fs::exists(shared)) GTEST_SKIP() << shared << " is not present on this machine";
  const std::string model = path("squeezenet1_1.onnx");
  fs::copy_file(shared, model);
  RunResult r = run({model, "-o", path("out.onnx"), "--report", path("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // SqueezeNet's 131 signatures, measured from an empty cache, show progress.
  expect_in(r.err, "measuring: 25 signatures in ");
  expect_in(r.out, "measured        ");
  // Whether its weights stay cached, measured on the model itself, and so
  // how its operators were timed (where the two runs differ, what the
  // operators sum to either way, before the cache's name).
  expect_in(r.out, "4.9 MB, the model ");
  expect_in(r.out, " ms with them evicted");
  expect_in(r.out, "; cache ");
  const std::string report = read_file(path("r.json"));
  expect_in(report, "\"speed_check\"");
  expect_in(report, "\"cost_confirmation\"");
  // Whether the search finds a graph cheaper by the measured costs depends
  // on this machine's timings (the clean clone of fbb0ded found none); the
  // speed check runs exactly when it does.
  if (r.out.find("measured        not run (the graph is unchanged)") != std::string::npos) {
    expect_in(r.out, "operators       65 -> 65");
    expect_in(report, "\"ran\": false");
    // Nothing changed: the user's file is written.
    expect_in(report, "\"written\": \"input\"");
  } else {
    expect_in(r.out, "alternating rounds");
    expect_in(r.out, " ms, medians ");
    expect_in(report, "\"ran\": true");
    expect_in(report, "\"optimized_median_ms\"");
  }
  const bool kept_input = report.find("\"written\": \"input\"") != std::string::npos;
  EXPECT_EQ(kept_input, r.out.find("wrote the input graph") != std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(path("out.onnx")));
  // A kept input is the user's file, byte for byte.
  if (kept_input) {
    EXPECT_TRUE(read_file(path("out.onnx")) == read_file(model));
  }
  // At another batch the written model, kept input or not, is at that batch:
  // the user's file is not.
  r = run({model, "-o", path("out2.onnx"), "-q", "--batch", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult inspect = tso::testing::run_binary(TSO_BINARY, {"inspect", path("out2.onnx")}, dir_);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  expect_in(inspect.out, "input   f32[2,3,224,224]");
}

TEST_F(OptimizeCli, TheSpeedCheckCanBeTurnedOffAndSaysWhyItDidNotRun) {
  RunResult r = run({model_, "-o", path("out.tso"), "-q", "--no-verify-speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "measured        not run (--no-verify-speed)");
  // A device file has no runtime here to time the result on.
  r = run({model_, "-o", path("out1.tso"), "-q", "--device", kH100});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "measured        not run (the target is the device file " + kH100);
  // A table this machine's CPU runtime measured (tso profile), in which the
  // fused convolution is the cheaper: the result is timed there, and the
  // text model has no stored weights, so the CPU runtime cannot time it.
  // Without post-op entries (a table with them costs conv2d(act=relu) as the
  // convolution plus the relu's post-op, the same either way).
  r = run({model_, "-o", path("fused.tso"), "-q", "--device", kH100});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "operators       2 -> 1");
  for (const char* m : {"conv_relu.tso", "fused.tso"}) {
    RunResult p = tso::testing::run_binary(
        TSO_BINARY, {"profile", path(m), "-o", path(std::string(m) + ".json"), "--iters", "2"},
        dir_);
    ASSERT_EQ(p.exit_code, 0) << p.err;
  }
  tso::Expected<tso::rt::CostTable> table = tso::rt::read_cost_table(path("conv_relu.tso.json"));
  tso::Expected<tso::rt::CostTable> fused = tso::rt::read_cost_table(path("fused.tso.json"));
  ASSERT_TRUE(table.ok() && fused.ok());
  std::erase_if(table->entries,
                [](const tso::rt::CostEntry& e) { return tso::is_post_op_signature(e.signature); });
  for (tso::rt::CostEntry& e : table->entries) e.median_ms = e.min_ms = 1;
  for (tso::rt::CostEntry e : fused->entries) {
    e.median_ms = e.min_ms = 0.001;
    table->entries.push_back(e);
  }
  ASSERT_TRUE(tso::rt::write_cost_table(*table, path("costs.json")).ok());
  // The fully equivalent rules only: the partial ones' operators are not in
  // this table, and their analytic costs are below its 1 us.
  r = run({model_, "-o", path("out2.tso"), "-q", "--cost", path("costs.json"), "--rules",
           TSO_SOURCE_DIR "/substitutions/bias_n4.rules"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "operators       2 -> 1");
  expect_in(r.out, "measured        not run (the CPU runtime cannot run it: weight 'w'");
}

// The search's lookahead past plateaus (optimizer/search.h) through its
// flags. On this device a convolution of an 8x8x8 input costs a launch of 44
// us plus 1 us per output channel and kernel position (2 * 8 * 8 * 8 FLOPs
// each at 1024 FLOP/us; memory never binds), so a 1x1 and a 3x3 convolution
// of 4 channels each cost 128 us and the 1x1 kernel enlarged 160 us (+25%),
// as in optimizer/search_test.cc (PlateauTest), where the lookahead then
// merges them. Here the flags turn it off; with it on the merged graph would
// need the weights' data to fold, which a text graph does not carry.
TEST_F(OptimizeCli, TheLookaheadFlagsTurnItOffAndRefuseBadValues) {
  write_file(path("units.json"), R"({"format": "tso-device", "name": "conv units",
    "matmul_tflops": 0.001024, "vector_tflops": 1, "memory_gb_per_s": 1e9,
    "kernel_launch_us": 44})");
  write_file(path("plateau.rules"), tso::opt::testing::kPlateauRules);
  write_file(path("pair.tso"), R"(graph pair {
  input x: f32[1,8,8,8]
  weight w: f32[4,8,1,1]
  weight v: f32[4,8,3,3]
  %a = conv2d(x, w, pad=same)
  %b = conv2d(x, v, pad=same)
  output a = %a
  output b = %b
}
)");
  auto optimize = [&](const std::string& out, std::vector<std::string> flags) {
    std::vector<std::string> args = {
        path("pair.tso"),      "-o",       path(out),          "--rules",
        path("plateau.rules"), "--device", path("units.json"), "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    return run(args);
  };
  for (const std::vector<std::string>& off :
       {std::vector<std::string>{"--lookahead-budget", "0"}, {"--lookahead", "1.05"}}) {
    SCOPED_TRACE(off[0]);
    RunResult r = optimize("off.tso", off);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_in(r.out, "predicted cost  128.00 us -> 128.00 us");
    expect_in(r.out, "lookahead       0 of 0 found a cheaper graph, 0 graphs expanded");
  }
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--lookahead", "0.5"}, {"--lookahead-budget", "-1"}}) {
    SCOPED_TRACE(bad[0]);
    RunResult r = optimize("bad.tso", bad);
    EXPECT_EQ(r.exit_code, 2);
    expect_in(r.err, bad[0]);
    EXPECT_FALSE(fs::exists(path("bad.tso")));
  }
}

// Without a GPU the target is this CPU: costs measured on demand into the
// user's cache (here the test's), the result timed on the CPU runtime.
TEST_F(OptimizeCli, WithoutAGpuTheTargetIsThisCpu) {
  RunResult r = run({model_, "-o", path("out.tso"), "-q", "--no-verify-speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_in(r.out, "(measured on demand (cpu: ");
  expect_in(r.err, path("cache/tso/costs-"));
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "tso"));
  r = run({model_, "-o", path("out.tso"), "-q", "--device", "cuda"});
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is visible";
  EXPECT_EQ(r.exit_code, 2);
  expect_in(r.err, "--device cuda: ");
}

}  // namespace
