// Helpers shared by the frontend's cross-stage tests: the Python oracle
// (tests/onnx_oracle.py in the project's .venv), temporary directories,
// tensor comparison and reference execution of imported graphs.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/graph.h"
#include "core/half.h"
#include "runtime/reference/executor.h"

namespace tso::testing {

inline std::string venv_python() { return std::string(TSO_SOURCE_DIR) + "/.venv/bin/python"; }
inline bool have_python_oracle() { return std::filesystem::exists(venv_python()); }
inline const char* kNoVenv =
    "the Python venv with onnx and onnxruntime (.venv, made by ./setup.sh) is missing";

// Runs tests/onnx_oracle.py with `args`; returns its exit status, stderr in `*err`.
inline int run_oracle(const std::vector<std::string>& args, std::string* err) {
  static std::atomic<int> counter{0};
  std::string log = (std::filesystem::path(::testing::TempDir()) /
                     ("oracle_" + std::to_string(getpid()) + "_" + std::to_string(counter++)))
                        .string();
  std::string cmd = "'" + venv_python() + "' '" + std::string(TSO_SOURCE_DIR) + "/tests/onnx_oracle.py'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>'" + log + "'";
  int status = std::system(cmd.c_str());
  std::FILE* f = std::fopen(log.c_str(), "r");
  if (f) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) err->append(buf, n);
    std::fclose(f);
  }
  std::filesystem::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A fresh directory under the test's temporary directory.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto p = std::filesystem::path(::testing::TempDir()) /
           ("tso_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

// max|a-b| / max(max|b|, 1e-6), the policy of core/ops.h.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 1e-6;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (std::isnan(a[k]) != std::isnan(b[k])) return INFINITY;
    if (std::isnan(a[k])) continue;
    diff = std::max(diff, std::fabs(double(a[k]) - double(b[k])));
    scale = std::max(scale, std::fabs(double(b[k])));
  }
  return diff / scale;
}

// The values of an f32 or f16 tensor.
inline std::vector<float> floats_of(const WeightData& w) {
  if (w.type.dtype == DType::kF16) {
    std::vector<float> v(w.bytes.size() / 2);
    for (size_t k = 0; k < v.size(); ++k) {
      uint16_t h;
      std::memcpy(&h, w.bytes.data() + 2 * k, 2);
      v[k] = half_to_float(h);
    }
    return v;
  }
  std::vector<float> v(w.bytes.size() / sizeof(float));
  std::memcpy(v.data(), w.bytes.data(), v.size() * sizeof(float));
  return v;
}

// Evaluates `g` on the reference executor with one f32 tensor per input node.
inline Expected<std::vector<ref::Tensor<float>>> run_reference(
    const Graph& g, const std::vector<WeightData>& inputs) {
  std::map<std::string, ref::Tensor<float>> feeds;
  size_t k = 0;
  for (int i : g.input_nodes()) {
    if (g.node(i).op != Op::Input) continue;
    if (k >= inputs.size()) return Error{"too few inputs"};
    Expected<ref::Tensor<float>> t = ref::weight_value<float>(inputs[k++]);
    if (!t) return t.error();
    feeds.emplace(g.node(i).name, std::move(*t));
  }
  return ref::evaluate<float>(g, feeds);
}

}  // namespace tso::testing
