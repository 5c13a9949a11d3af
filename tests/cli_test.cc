// Runs the built `tso` binary as a user would and asserts its output, its
// error messages and its exit codes; also runs every example in README.md and
// compares the output with the README's text.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/testing/sanitizers.h"
#include "frontend/tensor_file.h"

namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `tso ARGS...` in the source tree (so fixture paths are relative, as in
// the README) and captures stdout, stderr and the exit code. `limit_kib`,
// when set, caps tso's address space (ulimit -v).
RunResult run_tso(const std::vector<std::string>& args, int64_t limit_kib = 0) {
  static std::atomic<int> counter{0};
  const std::filesystem::path tmp =
      std::filesystem::path(::testing::TempDir()) /
      ("tso_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::string cmd = "cd " + shell_quote(TSO_SOURCE_DIR) + " && ";
  if (limit_kib > 0) cmd += "ulimit -v " + std::to_string(limit_kib) + " && ";
  cmd += shell_quote(TSO_BINARY);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(tmp.string() + ".out") + " 2>" + shell_quote(tmp.string() + ".err");
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(tmp.string() + ".out");
  r.err = read_file(tmp.string() + ".err");
  std::filesystem::remove(tmp.string() + ".out");
  std::filesystem::remove(tmp.string() + ".err");
  return r;
}

// The first line of `text` that starts (after indentation) with `prefix`.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, prefix.size(), prefix) == 0)
      return line.substr(start);
  }
  return "";
}

// The cells of `line`, split at runs of two or more blanks (table columns).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::regex sep("  +");
  for (std::sregex_token_iterator it(line.begin(), line.end(), sep, -1), end; it != end; ++it)
    if (!it->str().empty()) out.push_back(*it);
  return out;
}

TEST(Cli, HelpListsTheSubcommands) {
  RunResult r = run_tso({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("inspect"), std::string::npos) << r.out;
}

TEST(Cli, VersionPrintsTheProjectVersionRuleHashesAndLibraries) {
  RunResult r = run_tso({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("tso " TSO_VERSION "\n", 0), 0u) << r.out;
  // Every default rule file, with a 16-digit hash of its text.
  for (const auto& e : std::filesystem::directory_iterator(TSO_SOURCE_DIR "/substitutions")) {
    if (e.path().extension() != ".rules") continue;
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex("\n  [0-9a-f]{16}  " + e.path().filename().string() + "\n")))
        << e.path() << " in\n"
        << r.out;
  }
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nspecs [0-9a-f]{16} "))) << r.out;
  for (const char* lib : {"oneDNN ", "Z3 ", "ONNX ", "protobuf "})
    EXPECT_NE(r.out.find(lib), std::string::npos) << lib << " in\n" << r.out;
}

// libcublasLt is opened when the CUDA runtime first needs it
// (runtime/cuda/cublaslt_loader.h): loading it at start cost every command
// 0.08 s and 210 MB. The dynamic loader's trace lists what a command loads.
TEST(Cli, ACommandThatUsesNoGpuDoesNotLoadCublasLt) {
  setenv("LD_DEBUG", "files", 1);
  RunResult r = run_tso({"inspect", "tests/data/conv.tso"});
  unsetenv("LD_DEBUG");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("libdnnl.so"), std::string::npos) << "no loader trace:\n" << r.err;
  EXPECT_EQ(r.err.find("libcublasLt"), std::string::npos) << r.err;
}

TEST(Optimize, TakesTheOutputAsSecondArgumentAndCheckN) {
  const std::string out =
      (std::filesystem::path(::testing::TempDir()) / "conv.positional.tso").string();
  const std::string device = TSO_SOURCE_DIR "/optimizer/devices/h100.json";
  RunResult r =
      run_tso({"optimize", "tests/data/conv.tso", out, "--device", device, "--check", "3", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
  r = run_tso({"optimize", "tests/data/conv.tso", "--device", device});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no output: give it as a second argument or with -o FILE"),
            std::string::npos)
      << r.err;
  r = run_tso({"optimize", "tests/data/conv.tso", out, "-o", out, "--device", device});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
  r = run_tso({"optimize", "tests/data/conv.tso", out, "--device", device, "--check", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--check"), std::string::npos) << r.err;
}

TEST(Cli, NoSubcommandIsAUsageError) {
  RunResult r = run_tso({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("subcommand"), std::string::npos) << r.err;
}

TEST(Cli, UnknownFlagIsAUsageError) {
  RunResult r = run_tso({"inspect", "--frobnicate", "tests/data/conv.tso"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
}

TEST(Inspect, HelpDescribesTheCommand) {
  RunResult r = run_tso({"inspect", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("FILE"), std::string::npos) << r.out;
}

TEST(Inspect, CountsConvFlopsAndParameterBytes) {
  RunResult r = run_tso({"inspect", "tests/data/conv.tso"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // The operator row: 2*1*4*8*8 * 3*3*3 FLOPs, and the 4x3x3x3 f32 weight.
  std::string row = line_starting(r.out, "2  %conv");
  ASSERT_NE(row, "") << r.out;
  EXPECT_EQ(cells(row), (std::vector<std::string>{"2", "%conv", "conv2d", "pad=same",
                                                  "f32[1,3,8,8], f32[4,3,3,3]", "f32[1,4,8,8]",
                                                  "13824", "432"}))
      << row;
  EXPECT_EQ(line_starting(r.out, "FLOPs"), "FLOPs        13824 (13.8 K)") << r.out;
  EXPECT_EQ(line_starting(r.out, "param bytes"), "param bytes  432") << r.out;
  EXPECT_EQ(line_starting(r.out, "operators  "), "operators    1 (conv2d 1)") << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

TEST(Inspect, ListsSourcesAndOutputs) {
  RunResult r = run_tso({"inspect", "tests/data/conv.tso"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(cells(line_starting(r.out, "0  x")),
            (std::vector<std::string>{"0", "x", "input", "f32[1,3,8,8]", "-"}));
  EXPECT_EQ(cells(line_starting(r.out, "1  w")),
            (std::vector<std::string>{"1", "w", "weight", "f32[4,3,3,3]", "432"}));
  EXPECT_EQ(cells(line_starting(r.out, "y ")),
            (std::vector<std::string>{"y", "node '%conv' (conv2d)", "f32[1,4,8,8]"}));
}

TEST(Inspect, WarnsAboutOpaqueNodes) {
  RunResult r = run_tso({"inspect", "tests/data/opaque.tso"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(cells(line_starting(r.out, "opaque ")),
            (std::vector<std::string>{"opaque", "LpNormalization 2"}))
      << r.out;
  EXPECT_NE(r.out.find("opaque:LpNormalization"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("payload=\"axis=1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nwarning: 2 opaque nodes (LpNormalization 2)"), std::string::npos)
      << r.out;
}

TEST(Inspect, MalformedTextIsBadInputWithLineAndColumn) {
  RunResult r = run_tso({"inspect", "tests/data/malformed.tso"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^tests/data/malformed\\.tso:5:[0-9]+: ")))
      << r.err;
}

// The issue-17 reproduction: an input of 2^68 bytes was accepted with 0
// FLOPs; it is an error at its type, naming it.
TEST(Inspect, AnInputWhoseSizeOverflowsIsAnErrorNamingIt) {
  RunResult r = run_tso({"inspect", "tests/data/overflow_input.tso"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("tests/data/overflow_input.tso:3:12: input 'x': "
                       "f32[4294967296,4294967296,16] does not fit in memory: its size in bytes "
                       "overflows int64\n"),
            std::string::npos)
      << r.err;
}

TEST(Inspect, ShapeMismatchNamesTheNodeAndBothShapes) {
  RunResult r = run_tso({"inspect", "tests/data/shape_mismatch.tso"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^tests/data/shape_mismatch\\.tso:5:[0-9]+: ")))
      << r.err;
  EXPECT_NE(r.err.find("%sum"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("f32[2,3]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("f32[4,3]"), std::string::npos) << r.err;
}

TEST(Inspect, UnknownOperatorListsTheNearestNames) {
  RunResult r = run_tso({"inspect", "tests/data/unknown_op.tso"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^tests/data/unknown_op\\.tso:5:[0-9]+: ")))
      << r.err;
  EXPECT_NE(r.err.find("conv2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("conv2d"), std::string::npos) << r.err;
}

TEST(Inspect, MissingFileIsAnIoErrorNamingTheFile) {
  RunResult r = run_tso({"inspect", "tests/data/no_such_graph.tso"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("tests/data/no_such_graph.tso"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;
}

TEST(Inspect, DirectoryIsAnIoError) {
  RunResult r = run_tso({"inspect", "tests/data"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'tests/data': is a directory"), std::string::npos) << r.err;
}

TEST(Inspect, MissingFileArgumentIsAUsageError) {
  RunResult r = run_tso({"inspect"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("FILE"), std::string::npos) << r.err;
}

// README.md's ```console blocks: each `$ tso ...` line is run from the source
// root and its output must equal the lines after it, up to the next `$` line
// or the end of the block. Keeps every README example true.
struct ReadmeExample {
  std::string command;
  std::string expected;
};

std::vector<ReadmeExample> readme_examples() {
  std::istringstream in(read_file(std::filesystem::path(TSO_SOURCE_DIR) / "README.md"));
  std::vector<ReadmeExample> examples;
  bool in_console = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_console = !in_console && line == "```console";
      continue;
    }
    if (!in_console) continue;
    if (line.rfind("$ ", 0) == 0) {
      examples.push_back({line.substr(2), ""});
    } else if (!examples.empty()) {
      examples.back().expected += line + "\n";
    }
  }
  return examples;
}

TEST(Readme, ExamplesPrintWhatTheReadmeShows) {
  std::vector<ReadmeExample> examples = readme_examples();
  int tso_examples = 0;
  for (const ReadmeExample& ex : examples) {
    if (ex.command.rfind("tso ", 0) != 0) continue;
    ++tso_examples;
    std::vector<std::string> args;
    std::istringstream words(ex.command.substr(4));
    for (std::string w; words >> w;) args.push_back(w);
    RunResult r = run_tso(args);
    EXPECT_EQ(r.exit_code, 0) << ex.command << "\n" << r.err;
    EXPECT_EQ(r.out, ex.expected) << "README example `" << ex.command
                                  << "` prints something else; update README.md";
  }
  EXPECT_GE(tso_examples, 1) << "README.md should show at least one `$ tso ...` example";
}

TEST(Run, CpuRuntimePrintsLatencyMemoryAndOutputs) {
  RunResult r = run_tso(
      {"run", "tests/data/softmax_rows.tso", "--device", "cpu", "--iters", "3", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(line_starting(r.out, "device       cpu, 1 threads, oneDNN 3."), "") << r.out;
  EXPECT_NE(line_starting(r.out, "latency      median "), "") << r.out;
  EXPECT_NE(r.out.find("over 3 runs"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "memory       peak "), "") << r.out;
  EXPECT_NE(line_starting(r.out, "y  f32[3,100]"), "") << r.out;
}

TEST(Run, ProfileListsEveryStep) {
  RunResult r = run_tso({"run", "tests/data/softmax_rows.tso", "--iters", "2", "--profile", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(line_starting(r.out, "steps "), "") << r.out;
  EXPECT_NE(r.out.find("softmax"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(relu)"), std::string::npos) << r.out;
  // No product in this graph: every step is among the others.
  EXPECT_NE(line_starting(r.out, "products     0.000 ms per run (0.0%), 0.000 GFLOP"), "") << r.out;
  EXPECT_NE(line_starting(r.out, "other steps  "), "") << r.out;
}

TEST(Run, AnInputLargerThanTheMachineIsRefusedBeforeAllocating) {
  for (const char* device : {"cpu", "reference"}) {
    RunResult r = run_tso({"run", "tests/data/huge_input.tso", "--device", device});
    EXPECT_EQ(r.exit_code, 2) << device << ": " << r.err;
    EXPECT_NE(r.err.find("needs"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("available"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << r.out;
  }
}

TEST(Run, AnInputWhoseSizeOverflowsIsAnErrorNamingIt) {
  for (const char* device : {"cpu", "reference"}) {
    RunResult r = run_tso({"run", "tests/data/overflow_input.tso", "--device", device});
    EXPECT_EQ(r.exit_code, 2) << device << ": " << r.out;
    EXPECT_NE(r.err.find("'x'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("overflows"), std::string::npos) << r.err;
  }
}

// An allocation no check foresaw (the input fits the machine, not the
// address space tso is given) throws std::bad_alloc: the last-resort handler
// in main reports it with exit code 3 and nothing on stdout.
TEST(Run, OutOfMemoryIsExitCode3WithNoPartialOutput) {
#if TSO_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory; a 1 GiB address space "
                  "(ulimit -v) cannot start it";
#endif
  RunResult r = run_tso({"run", "tests/data/oom_input.tso"}, int64_t{1} << 20);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "tso: out of memory\n");
  EXPECT_EQ(r.out, "");
}

TEST(Run, AnOpaqueNodeIsAnErrorNamingTheOnnxOperator) {
  RunResult r = run_tso({"run", "tests/data/opaque.tso", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'LpNormalization'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("%n"), std::string::npos) << r.err;
}

// `tso zoo csrnet`: PET's CSRNet at the batch and size asked for; a bad
// size, or a flag the model does not take, is a usage error naming it.
TEST(Zoo, CsrNetAtBatchAndSize) {
  const std::string out = (std::filesystem::path(::testing::TempDir()) /
                           ("csrnet_" + std::to_string(getpid()) + ".onnx"))
                              .string();
  RunResult r = run_tso({"zoo", "csrnet", "-o", out, "--batch", "2", "--size", "40x56"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("csrnet"), std::string::npos) << r.out;
  RunResult i = run_tso({"inspect", out});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_NE(i.out.find("f32[2,1,5,7]"), std::string::npos) << i.out;
  std::filesystem::remove(out);
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"zoo", "csrnet", "-o", out, "--size", "7x224"},
        std::vector<std::string>{"zoo", "csrnet", "-o", out, "--size", "22"},
        std::vector<std::string>{"zoo", "csrnet", "-o", out, "--batch", "0"},
        std::vector<std::string>{"zoo", "nasrnn", "-o", out, "--batch", "2"}}) {
    RunResult b = run_tso(bad);
    EXPECT_EQ(b.exit_code, 2) << bad.back() << ": " << b.err;
    EXPECT_FALSE(b.err.empty());
    EXPECT_FALSE(std::filesystem::exists(out)) << bad.back();
  }
}

// `tso zoo resnet18`: torchvision's ResNet-18 at the batch and size asked
// for; `tso run` executes it on the CPU runtime and its logits match the
// reference executor's on the same seeded input within the fp32 tolerance
// of core/ops.h (1e-4 relative to the largest logit).
TEST(Zoo, ResNet18RunsOnTheCpuRuntimeAsOnTheReferenceExecutor) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("resnet18_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "resnet18.onnx").string();
  RunResult r =
      run_tso({"zoo", "resnet18", "-o", model, "--batch", "2", "--size", "64x48", "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(resnet18, 69 operators)"), std::string::npos) << r.out;
  RunResult i = run_tso({"inspect", model});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_NE(i.out.find("f32[2,3,64,48]"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("f32[2,1000]"), std::string::npos) << i.out;

  std::vector<float> logits[2];
  const char* devices[] = {"cpu", "reference"};
  for (int d = 0; d < 2; ++d) {
    SCOPED_TRACE(devices[d]);
    const std::string out = (dir / devices[d]).string();
    RunResult run = run_tso({"run", model, "--device", devices[d], "--seed", "5", "--iters", "1",
                             "--threads", "1", "--outputs", out});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    tso::Expected<tso::NamedTensor> t = tso::read_tensor_file(out + "/output_0.pb");
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_EQ(t->value.type.shape, (tso::Shape{2, 1000}));
    logits[d].resize(2000);
    std::memcpy(logits[d].data(), t->value.bytes.data(), 2000 * sizeof(float));
  }
  double scale = 0, diff = 0;
  for (size_t k = 0; k < 2000; ++k) {
    scale = std::max(scale, std::fabs(double(logits[1][k])));
    diff = std::max(diff, std::fabs(double(logits[0][k]) - logits[1][k]));
  }
  EXPECT_GT(scale, 0);
  EXPECT_LE(diff, 1e-4 * scale);
  std::filesystem::remove_all(dir);
}

// `--batch N` imports an ONNX model at batch N for every command that loads
// one: the zoo's batch-1 ResNet-18 runs at batch 3, BERT inspects at batch
// 16; a text graph or a batch below 1 is an error.
TEST(ModelFile, BatchImportsAnOnnxModelAtAnotherBatch) {
  const std::string model = (std::filesystem::path(::testing::TempDir()) /
                             ("resnet18_b1_" + std::to_string(getpid()) + ".onnx"))
                                .string();
  ASSERT_EQ(run_tso({"zoo", "resnet18", "-o", model, "--size", "32x32"}).exit_code, 0);
  RunResult r = run_tso({"run", model, "--batch", "3", "--device", "reference"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output  f32[3,1000]"), std::string::npos) << r.out;
  RunResult zero = run_tso({"inspect", model, "--batch", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find(model + ": the batch must be positive, not 0"), std::string::npos)
      << zero.err;
  std::filesystem::remove(model);

  RunResult text = run_tso({"inspect", "tests/data/conv.tso", "--batch", "2"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("--batch applies to ONNX models only, not 'tests/data/conv.tso'"),
            std::string::npos)
      << text.err;

  const std::string bert = "/work/shared/models/bert_base_seq128.graph.onnx";
  if (!std::filesystem::exists(bert)) GTEST_SKIP() << bert << " is not present";
  RunResult i = run_tso({"inspect", bert, "--random-weights", "1", "--batch", "16"});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_NE(i.out.find("input   f32[16,128,768]"), std::string::npos) << i.out.substr(0, 400);
  EXPECT_NE(i.out.find("shape=[16,128,12,64]"), std::string::npos);
  EXPECT_EQ(i.out.find("shape=[1,128,"), std::string::npos);
}

}  // namespace
