// The measured cost table: what a runtime (runtime/cuda, runtime/cpu)
// measures and the optimizer's measured cost model reads. JSON, one entry
// per operator signature (core/signature.h), with the median and minimum
// times of what that runtime's plan runs for it (the optimizer costs
// `typical_ms`, the median); `device` names the machine it was
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
  // Separate measurements behind the entry, which keeps the one of the
  // lesser median: a cache times a signature a second time, apart, before a
  // prediction rests on it (optimizer/cost_cache.h).
  int measurements = 1;
};

// What the operator takes in a model: the median of its timed runs (the CPU
// profiler drops the runs another task disturbed). Not the minimum: a model
// runs each operator once per run, so its fastest run is a sum of typical
// operator times, not of each one's luckiest. Products by weights read from
// memory vary most: NasRNN's 1x512 by 512x512 products took 29 us at the
// least and 39 us by the median, timed alone (AMD EPYC, 32 MB L3), and the
// model, 72 such products, was predicted at 2.11 ms by minimums and 2.84 ms
// by medians against 2.87 ms measured end to end.
inline double typical_ms(const CostEntry& e) { return e.median_ms; }

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

// Whether device strings `a` and `b` differ only in the runtime's revision
// (", runtime <hex digits>", runtime/common/revision.h): the same machine
// and libraries, measured by another build of tso's kernels.
bool differ_in_runtime_only(const std::string& a, const std::string& b);

}  // namespace tso::rt
