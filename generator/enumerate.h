// Internal to generator/: depth-first enumeration of every graph of up to N
// operators, each fingerprinted incrementally (a child reuses its parent's
// tensors and evaluates only its new operator).
//
// A graph's key is the sum of the value hashes of its live tensors (unused
// variables and unconsumed operator outputs), so it does not depend on the
// order of its outputs; graphs are enumerated in one canonical operator order
// (below), so independent operators are never enumerated twice in two
// orders. A graph whose new operator reproduces a tensor it already has
// is recorded (it is a candidate, e.g. transpose(transpose(x)) = x) but not
// extended.
//
// Canonical order: operators are letters of a trace (two commute when
// neither reads the other's output); only the lexicographically smallest
// word of each trace is enumerated, ordering letters by structural hash: a
// new operator must exceed every operator after its last dependency.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "generator/program.h"

namespace tso::gen {

struct Record {
  uint64_t key = 0;
  Code code{};
  friend bool operator==(const Record&, const Record&) = default;
};
inline bool operator<(const Record& a, const Record& b) {
  return a.key != b.key ? a.key < b.key : a.code < b.code;
}

// Counters the enumeration bumps while it runs; a caller may read them from
// another thread to show progress.
struct EnumProgress {
  std::array<std::atomic<uint64_t>, kMaxOps + 1> graphs{};  // by number of operators
  std::atomic<uint64_t> branches_done{0};
  std::atomic<uint64_t> branches_total{0};
};

// Takes a thread's records, sorted, and empties the vector; called from any
// thread (a job writes each call's records as a run file: job.h).
using RecordSink = std::function<void(std::vector<Record>&)>;

struct EnumerateOptions {
  int max_ops = 3;
  int sets = 2;
  uint64_t seed = 1;
  int shard = 0;  // enumerate the first-operator branches b with b % num_shards == shard
  int num_shards = 1;
  // With a sink, a thread hands its records to it whenever it holds
  // `sink_records` of them, and at the end; the result's records stay empty.
  RecordSink sink;
  size_t sink_records = 0;
};

struct EnumerateResult {
  std::vector<Record> records;  // sorted
  std::array<uint64_t, kMaxOps + 1> graphs_by_ops{};
  uint64_t repeated_tensor = 0;  // graphs recorded but not extended
  uint64_t not_first_use = 0;  // graphs visited but not recorded (variables not in first-use order)
};

EnumerateResult enumerate(const OpSet& set, const EnumerateOptions& opt, EnumProgress* progress);

}  // namespace tso::gen
