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
#include <vector>

#include "core/error.h"
#include "generator/enumerate.h"
#include "generator/op_set.h"
#include "substitutions/rules.h"

namespace tso::gen {

inline constexpr const char* kGeneratorVersion = "0.1";

struct GenerateOptions {
  int max_ops = 3;   // 1..6
  uint64_t seed = 1;
  int sets = 2;      // random input sets per fingerprint (t >= 2)
};

// Counts at every stage, in order.
struct GenerateCounts {
  uint64_t graphs = 0;        // graphs enumerated (the empty graph included)
  uint64_t fingerprints = 0;  // distinct keys
  uint64_t candidates = 0;    // pairs with equal keys (each graph with its key's first graph)
  uint64_t common = 0;        // after dropping pairs that share an operator on identical inputs
  uint64_t values = 0;        // after dropping pairs whose stored values differ (key collisions)
  uint64_t renaming = 0;      // after keeping one pair per variable-renaming class
  uint64_t bindable = 0;      // after dropping pairs no orientation of which binds its variables
  uint64_t float_ok = 0;      // after the double re-test
  uint64_t implied = 0;       // after dropping rules implied by a smaller rule
  std::vector<uint64_t> graphs_by_ops;
  std::string text() const;   // "graphs=... fingerprints=... ... written=..."
};

struct GenerateResult {
  RuleSet rules;
  GenerateCounts counts;
};

Expected<GenerateResult> generate(const OpSet& set, const GenerateOptions& opt,
                                  EnumProgress* progress = nullptr);

}  // namespace tso::gen
