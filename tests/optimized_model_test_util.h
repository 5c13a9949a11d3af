// What the end-to-end tests of a rewrite share: a model built in the test is
// optimized by the binary, and the outputs of the file it writes, run by ONNX
// Runtime (tests/onnx_oracle.py) and by tso's runtimes, are read back from
// the tensor files the runs write (output_<k>.pb in a folder).
#pragma once

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "frontend/tensor_file.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"

namespace tso::testing {

// dir/input_0.pb: input `name` of shape `dims`, uniform in [-1, 1), as f32
// or (rounded) f16.
inline void write_random_input(const std::filesystem::path& dir, const std::string& name,
                               const Shape& dims, uint64_t seed, DType dtype = DType::kF32) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(dims.numel()));
  for (float& v : x) v = u(rng);
  WeightData w;
  w.type = {dtype, dims};
  w.bytes.resize(x.size() * dtype_bytes(dtype));
  for (size_t k = 0; k < x.size(); ++k) {
    if (dtype == DType::kF16) {
      const uint16_t h = float_to_half(x[k]);
      std::memcpy(w.bytes.data() + 2 * k, &h, 2);
    } else {
      std::memcpy(w.bytes.data() + 4 * k, &x[k], 4);
    }
  }
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_tensor_file((dir / "input_0.pb").string(), {name, w}).ok());
}

// One i64 input of a run: its name, shape and values.
struct I64Input {
  std::string name;
  Shape dims;
  std::vector<int64_t> values;
};

// dir/input_K.pb for each of `inputs`, in order (token ids, index pairs).
inline void write_i64_inputs(const std::filesystem::path& dir,
                             const std::vector<I64Input>& inputs) {
  std::filesystem::create_directories(dir);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<int64_t>& v = inputs[k].values;
    WeightData w;
    w.type = {DType::kI64, inputs[k].dims};
    w.bytes.resize(v.size() * sizeof(int64_t));
    std::memcpy(w.bytes.data(), v.data(), w.bytes.size());
    const std::string file = "input_" + std::to_string(k) + ".pb";
    ASSERT_TRUE(write_tensor_file((dir / file).string(), {inputs[k].name, w}).ok());
  }
}

// The same, every input of shape `dims` (token ids, attention masks).
inline void write_i64_inputs(
    const std::filesystem::path& dir, const Shape& dims,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& inputs) {
  std::vector<I64Input> all;
  for (const auto& [name, values] : inputs) all.push_back({name, dims, values});
  write_i64_inputs(dir, all);
}

// Output `k` of a run that wrote its outputs to `dir`, as floats.
inline std::vector<float> output_of(const std::filesystem::path& dir, int k) {
  Expected<NamedTensor> t =
      read_tensor_file((dir / ("output_" + std::to_string(k) + ".pb")).string());
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t ? floats_of(t->value) : std::vector<float>{};
}

// How many times an optimize report (JSON) says `rule` was applied.
inline int times_applied(const nlohmann::json& report, const std::string& rule) {
  int n = 0;
  for (const nlohmann::json& a : report["rules_applied"])
    if (a["rule"] == rule) n += a["count"].get<int>();
  return n;
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// dir/costs.json: a cost table (runtime/common/cost_table.h) of `device` in
// which each of `signatures` costs 1 ms; every other signature costs what
// the analytic model says (--cost's fallback), so that removing one of them
// pays.
inline std::filesystem::path write_dear_cost_table(const std::filesystem::path& dir,
                                                   const std::string& device,
                                                   const std::string& model,
                                                   const std::vector<std::string>& signatures) {
  nlohmann::json entries = nlohmann::json::array();
  for (const std::string& sig : signatures)
    entries.push_back({{"signature", sig},
                       {"op", sig.substr(0, sig.find('('))},
                       {"kernel", "dear"},
                       {"median_ms", 1.0},
                       {"min_ms", 1.0},
                       {"samples", 10},
                       {"occurrences", 1}});
  const nlohmann::json table = {{"format", "tso-cost-table"},
                                {"version", 1},
                                {"device", device},
                                {"tf32", false},
                                {"model", model},
                                {"entries", entries}};
  const std::filesystem::path p = dir / "costs.json";
  std::ofstream(p) << table.dump(2);
  return p;
}

// `tso inspect model`'s listing, after checking that it ran and found no
// opaque node.
inline std::string inspect_without_opaque_nodes(const std::filesystem::path& model,
                                                const std::filesystem::path& dir) {
  RunResult r = run_binary(TSO_BINARY, {"inspect", model.string()}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("opaque"), std::string::npos) << r.out;
  return r.out;
}

// `tso optimize model out` for the analytic H100 model with the shipped
// rules, no speed check; its report (dir/report.json), after checking that
// it ran and checked the whole graph numerically to 1e-4.
inline nlohmann::json optimize_checked_for_h100(const std::filesystem::path& model,
                                                const std::filesystem::path& out,
                                                const std::filesystem::path& dir) {
  const std::filesystem::path report = dir / "report.json";
  RunResult r = run_binary(TSO_BINARY,
                           {"optimize", model.string(), out.string(), "--report", report.string(),
                            "-q", "--no-verify-speed", "--device",
                            std::string(TSO_SOURCE_DIR) + "/optimizer/devices/h100.json"},
                           dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  nlohmann::json j = read_json(report);
  EXPECT_EQ(j["check"]["performed"], true) << j["check"].dump();
  EXPECT_LE(j["check"]["max_relative_error"].get<double>(), 1e-4);
  return j;
}

// `tso optimize model out` with handwritten.rules only, under the cost
// table `costs`, no speed check, its report in dir/report.json.
inline RunResult optimize_with_handwritten_rules(const std::filesystem::path& model,
                                                 const std::filesystem::path& out,
                                                 const std::filesystem::path& costs,
                                                 const std::filesystem::path& dir) {
  return run_binary(
      TSO_BINARY,
      {"optimize", model.string(), out.string(), "--report", (dir / "report.json").string(), "-q",
       "--no-verify-speed", "--cost", costs.string(), "--rules",
       std::string(TSO_SOURCE_DIR) + "/substitutions/handwritten.rules"},
      dir);
}

// Runs `original` and `optimized` (`outputs` outputs each) on `inputs` in ONNX
// Runtime, and `optimized` on tso's CPU runtime and reference executor, in
// folders under `dir`; every output of each matches ONNX Runtime's on the
// original to a relative error of `tolerance`.
inline void expect_outputs_match_onnx_runtime(const std::filesystem::path& original,
                                              const std::filesystem::path& optimized,
                                              const std::filesystem::path& inputs, int outputs,
                                              const std::filesystem::path& dir,
                                              double tolerance = 1e-5) {
  std::string err;
  for (const auto& [model, to] :
       {std::pair{original, dir / "ort_input"}, std::pair{optimized, dir / "ort_optimized"}})
    ASSERT_EQ(run_oracle({"ort", model.string(), inputs.string(), to.string()}, &err), 0) << err;
  for (const char* device : {"cpu", "reference"}) {
    RunResult run =
        run_binary(TSO_BINARY,
                   {"run", optimized.string(), "--device", device, "--iters", "1", "--inputs",
                    inputs.string(), "--outputs", (dir / (std::string("tso_") + device)).string()},
                   dir);
    ASSERT_EQ(run.exit_code, 0) << device << ": " << run.err;
  }
  for (int k = 0; k < outputs; ++k) {
    const std::vector<float> want = output_of(dir / "ort_input", k);
    for (const char* got : {"ort_optimized", "tso_cpu", "tso_reference"})
      EXPECT_LE(relative_error(output_of(dir / got, k), want), tolerance)
          << got << ", output " << k;
  }
}

}  // namespace tso::testing
