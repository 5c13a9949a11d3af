// The measured cost table: what `tso profile` writes and the optimizer's
// measured cost model reads. JSON, one entry per operator signature
// (signature.h), with the median time of the kernel the CUDA plan runs for it.
//
//   {
//     "format": "tso-cost-table", "version": 1,
//     "device": "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90", "tf32": true,
//     "model": "resnet50.graph.onnx",
//     "entries": [
//       {"signature": "relu(f32[1,64,112,112])", "op": "relu", "kernel": "unary",
//        "median_ms": 0.0061, "min_ms": 0.0059, "samples": 200, "occurrences": 1},
//       ...
//     ]
//   }
//
// Entries are sorted by signature, so a table is deterministic up to the
// measured times. Plain C++ (nlohmann-json), tested without a GPU.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace tso::cuda {

struct CostEntry {
  std::string signature;
  std::string op;
  std::string kernel;   // the kernel family (dispatch.h kernel_name)
  double median_ms = 0;
  double min_ms = 0;
  int samples = 0;      // timed repetitions behind the median
  int occurrences = 0;  // nodes of the model with this signature
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

}  // namespace tso::cuda
