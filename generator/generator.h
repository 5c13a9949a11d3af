// The substitution generator (TASO's offline step): enumerates every graph of
// up to N operators over an operator set's inputs, fingerprints each exactly
// on random inputs, pairs graphs whose fingerprints and values agree into
// candidate substitutions, prunes redundant ones, re-tests the rest in double
// and returns them as rules with status `unverified`. Deterministic: the
// same operator set, N and seed give the same rules whatever the number of
// threads. The library never prints; progress is read from `EnumProgress`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "generator/enumerate.h"
#include "generator/op_set.h"
#include "substitutions/rules.h"

namespace tso::gen {

inline constexpr const char* kGeneratorVersion = "0.2";

struct GenerateOptions {
  int max_ops = 3;  // 1..6
  uint64_t seed = 1;
  int sets = 2;   // random input sets per fingerprint (t >= 2)
  int shard = 0;  // enumerate part `shard` of `num_shards` (split by first operators)
  int num_shards = 1;
  // Where the records go, sorted runs at a time, instead of the Part (enumerate.h).
  RecordSink sink;
  size_t sink_records = 0;
};

// Counts at every stage, in order.
struct GenerateCounts {
  uint64_t not_first_use = 0;  // graphs visited but not recorded: variables not in first-use order
  uint64_t graphs = 0;         // graphs enumerated (the empty graph included)
  uint64_t fingerprints = 0;   // distinct keys
  uint64_t candidates = 0;     // pairs with equal keys (each graph with its key's first graph)
  uint64_t common = 0;         // after dropping pairs that share an operator on identical inputs
  uint64_t values = 0;         // after dropping pairs whose stored values differ (key collisions)
  uint64_t renaming = 0;       // after keeping one pair per variable-renaming class
  uint64_t bindable = 0;       // after dropping pairs no orientation of which binds its variables
  uint64_t independent = 0;    // after dropping pairs made of independent smaller parts
  uint64_t float_ok = 0;       // after the double re-test
  uint64_t implied = 0;        // after dropping rules implied by a smaller rule
  uint64_t lifted = 0;         // lifted copies written besides them (`lift`; generator/lift.h)
  std::vector<uint64_t> graphs_by_ops;
  // "not-first-use=... graphs=... ... written=..." (" lifted=..." before
  // written when there are lifted copies; written counts them).
  std::string text() const;
};

struct GenerateResult {
  RuleSet rules;
  GenerateCounts counts;
  // Wall seconds of each step after the enumeration, in order (printed, never
  // written to the rule file).
  std::vector<std::pair<std::string, double>> seconds;
};

// The enumeration of one part (all of it when num_shards is 1): its sorted
// records and counts, and what identifies the run it belongs to.
struct Part {
  std::string ops_name;
  uint64_t op_set_hash = 0;
  int max_ops = 0;
  int sets = 0;
  uint64_t seed = 0;
  int shard = 0;
  int num_shards = 1;
  std::vector<uint64_t> graphs_by_ops;  // max_ops + 1 entries
  uint64_t not_first_use = 0;
  std::vector<Record> records;  // sorted
};

// Checks N, the shard and the operator set's size limits.
Status check_generate_options(const OpSet& set, const GenerateOptions& opt);

// A hash of everything in an operator set (names, types, classes, templates).
uint64_t op_set_hash(const OpSet& set);

Expected<Part> enumerate_part(const OpSet& set, const GenerateOptions& opt,
                              EnumProgress* progress = nullptr);
// Combines the parts 0..n-1 of one run (any order) into the whole; errors
// name what is missing, repeated or inconsistent.
Expected<Part> merge_parts(std::vector<Part> parts);
// Pairs, prunes, re-tests and writes the rules of a whole enumeration.
Expected<GenerateResult> rules_from(const OpSet& set, Part whole);
// enumerate_part (all of it) then rules_from.
Expected<GenerateResult> generate(const OpSet& set, const GenerateOptions& opt,
                                  EnumProgress* progress = nullptr);

}  // namespace tso::gen
