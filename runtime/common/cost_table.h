// The measured cost table: what a runtime (runtime/cuda, runtime/cpu)
// measures and the optimizer's measured cost model reads. JSON, one entry
// per operator signature (core/signature.h), with the median and minimum
// times of what that runtime's plan runs for it (the optimizer costs the
// minimum); `device` names the machine it was
// measured on, `tf32` whether conv and matmul used TF32 (false where the
// device has no such mode).
//
//   {
//     "format": "tso-cost-table", "version": 1,
//     "device": "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90", "tf32": true,
//     "model": "resnet50.graph.onnx",
//     "entries": [
//       {"signature": "relu(f32[1,64,112,112])", "op": "relu", "kernel": "unary",
//        "median_ms": 0.0061, "min_ms": 0.0059, "samples": 200, "occurrences": 1,
//        "measurements": 1},
//       ...
//     ]
//   }
//
// Entries are sorted by signature, so a table is deterministic up to the
// measured times. Every field is required but `measurements` (1 when
// absent: tables written before it, experiments/ort_costs.py); a table of
// another format or version is refused.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace tso::rt {

struct CostEntry {
  std::string signature;
  std::string op;
  std::string kernel;  // what runs it, in the runtime's words (runtime/cuda: kernel_name)
  double median_ms = 0;
  double min_ms = 0;
  int samples = 0;      // timed repetitions behind the median
  int occurrences = 0;  // nodes of the model with this signature
  // Separate measurements min_ms is the least of: a cache times a signature
  // a second time, apart, before a prediction rests on it
  // (optimizer/cost_cache.h).
  int measurements = 1;
};

struct CostTable {
  std::string device;
  bool tf32 = true;
  std::string model;
  std::vector<CostEntry> entries;
};

constexpr int kCostTableVersion = 1;

std::string cost_table_json(const CostTable& table);
// Parses a table; errors name `source` and what is wrong.
Expected<CostTable> parse_cost_table(const std::string& text, const std::string& source);

// Writes the JSON to a temporary file beside `path` and renames it into
// place, so `path` appears only complete.
Status write_cost_table(const CostTable& table, const std::string& path);
Expected<CostTable> read_cost_table(const std::string& path);

}  // namespace tso::rt
