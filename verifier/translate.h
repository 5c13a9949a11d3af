// Rules as Z3 terms. Each side of a rule becomes one tensor term per output,
// over a tensor constant per rule variable; the extents of the variables are
// integer constants `dim(x,i)` (any value >= 1 at the rank of the example
// type), parameters `?k` are constants of their attribute's sort, and shape
// expressions become integer terms. Every tensor of both sides gets its
// symbolic shape (asserted through `rank` and `dim`), and the conditions
// under which both sides are shape-valid and their outputs have equal shapes
// become hypotheses, so a proof covers
// every binding at which the optimizer may apply the rule, at the example's
// ranks.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "specs/op_functions.h"
#include "substitutions/rules.h"

namespace tso::verifier {

struct Translation {
  std::vector<z3::expr> hypotheses;
  std::vector<z3::expr> source, target;  // output i of each side
  // The constants a countermodel is read through: (name as printed, constant).
  std::vector<std::pair<std::string, z3::expr>> symbols;
};

// Names the operators of `rule` whose function is not in `specified` (the
// functions the axioms mention), e.g. "batchnorm"; empty when all have specs.
std::vector<std::string> unspecified_operators(const Rule& rule, const specs::OpFunctions& fns,
                                               const std::set<std::string>& specified);

// Translates `rule`. An error means the rule uses something the translation
// cannot express (an operator without symbolic shape inference); the caller
// reports it as `unknown`. A parameter in `pins` is that integer in every
// term instead of a constant (instances.h pins axes); its example still
// types the rule.
Expected<Translation> translate_rule(const Rule& rule, const specs::OpFunctions& fns,
                                     const std::map<std::string, int64_t>& pins = {});

}  // namespace tso::verifier
