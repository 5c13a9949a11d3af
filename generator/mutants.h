// PET's partially equivalent mutants. The multilinear programs of an
// operator set (one conv2d or matmul over its variables, two in a chain, or
// two siblings) are rewritten by families of layout transformations (batch
// stacked along H or W, H or W tiled into the batch with and without halos,
// dilation as interleaved sub-images, odd extents padded to even, siblings
// merged: generator/mutant_families.h), and each mutant is compared with its
// program position by position on random inputs in the prime field. A mutant
// equal on every position is an exact candidate, equal on some a partial
// one; both are written as rules with status `unverified` for the verifier,
// which decides the regions and the correction. Deterministic: the same
// operator set and seed give the same rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "generator/op_set.h"
#include "runtime/reference/tensor.h"
#include "substitutions/rules.h"

namespace tso::gen {

struct MutantOptions {
  uint64_t seed = 1;
  int sets = 2;  // random input sets per comparison (t >= 2)
};

// A family's count at every stage: mutants built, duplicates of an earlier
// mutant up to variable renaming (dropped), shape-valid at the example
// types with the program's output types, equal everywhere, equal somewhere,
// and equal nowhere (dropped; valid = exact + partial + dropped).
struct FamilyCounts {
  std::string family;
  uint64_t built = 0, duplicates = 0, valid = 0, exact = 0, partial = 0, dropped = 0;
  // "family=stack built=.. duplicates=.. valid=.. exact=.. partial=.. dropped=.."
  std::string text() const;
};

struct MutantResult {
  RuleSet rules;
  uint64_t sources = 0;  // source programs
  std::vector<FamilyCounts> families;
};

Expected<MutantResult> generate_mutants(const OpSet& set, const MutantOptions& opt);

// A rule's target against its source, position by position.
struct Comparison {
  enum class Verdict : uint8_t { kInvalid, kExact, kPartial, kNowhere };
  Verdict verdict = Verdict::kInvalid;
  std::string reason;                       // kInvalid: why
  std::vector<Shape> shapes;                // per output
  std::vector<std::vector<uint8_t>> equal;  // per output, row-major: equal in every set
};
// Both sides at the example types on `sets` random input sets drawn from
// `seed`, exactly (ref::Mod).
Comparison compare_sides(const Rule& rule, int sets, uint64_t seed);

}  // namespace tso::gen
