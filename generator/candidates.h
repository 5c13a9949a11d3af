// Internal to generator/: candidate pairs and the pruning steps.
//
// A candidate is two programs with equal keys whose live tensors agree in
// value (checked exactly on the Mod values), with their outputs matched:
// output i of `a` equals output i of `b` (variables live in both are not
// outputs). Each pruning step is a pure function of one candidate, or of a
// candidate and the rules kept before it, so steps run in parallel and the
// result does not depend on the number of threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "generator/program.h"
#include "generator/values.h"

namespace tso::gen {

struct Candidate {
  Program a, b;
  std::vector<int> a_out, b_out;  // tensor indices, matched pairwise
  int size() const { return static_cast<int>(a.ops.size() + b.ops.size()); }
};

// Whether some operator of `a` and some operator of `b` compute the same
// expression (the same template on identical inputs).
bool share_operator(const OpSet& set, const Program& a, const Program& b);

// Replays both on the Mod inputs and matches their live tensors by value;
// nullopt when the values differ (a key collision).
std::optional<Candidate> match_outputs(KindTable& table, const std::vector<ValuePtr>& inputs,
                                       const Program& a, const Program& b);

// A hash equal for two candidates exactly when one is the other with
// variables renamed within their classes (and sides or outputs swapped).
uint64_t renaming_class(const OpSet& set, const Candidate& c);

// Orients a candidate into a rule: the source is the side with more
// operators (on a tie, `a`), and must read every variable the target reads;
// swaps sides when only the other orientation binds them. false when
// neither does.
bool orient(KindTable& table, Candidate* c);

// Whether the candidate splits into independent parts: groups of operators
// of both sides that share no variable, with each output pair inside one
// group. Each part is then a smaller equivalence, output by output, and the
// candidate is their composition.
bool independent_parts(const OpSet& set, const Candidate& c);

// Re-tests the pair in double with true operator semantics on fresh random
// inputs: relative error <= 1e-9 (core/ops.h's policy for double).
bool float_equal(KindTable& table, const Candidate& c, uint64_t seed);

// The templates of a program: a bit per template used (all bits from
// template 64 on), a bit per template used at least twice, and the number of
// operators; a rule side can match only a program holding its bits.
struct TemplateBits {
  uint64_t once = 0, twice = 0;
  int n = 0;
};
TemplateBits bits_of(const Program& p);

// The template bits of each side of a candidate.
struct Masks {
  TemplateBits a, b;
};
Masks masks_of(const Candidate& c);

// Whether `rules` (each used in either direction) imply the candidate: a few
// rewrites with them from each side reach a common graph (implied.cc says
// how far the search goes). Every graph on the way is shape-valid; graphs are
// compared by structural hash.
bool implied(KindTable& table, const Candidate& c, std::span<const Candidate* const> rules,
             std::span<const Masks* const> masks);

// Core graphs of one side: an input (or weight) per variable the side reads,
// the operators, and outputs out0, out1, ... in the candidate's order.
Expected<Graph> build_graph(const OpSet& set, KindTable& table, const Program& p,
                            const std::vector<int>& outputs);

}  // namespace tso::gen
