// Proving rules: the axioms of specs/ plus a rule's shape hypotheses plus
// "some output differs" are handed to Z3; unsat proves the rule (`verified`,
// with the specs' hash), a model refutes it from the axioms (`refuted`, the
// model printed readably: the axioms do not imply the rule at those extents),
// and anything else (a timeout, an incomplete search) is `unknown`, never
// `verified`. Rules run in parallel, one z3::context per thread; progress
// goes to a callback, never to a stream.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "specs/specs.h"
#include "substitutions/rules.h"

namespace tso::verifier {

struct VerifyOptions {
  unsigned timeout_ms = 10000;  // per rule
  int jobs = 2;
};

struct RuleOutcome {
  RuleStatus status;
  double ms = 0;  // wall time of the rule's proof attempt
};

struct VerifyProgress {
  int done = 0, total = 0;
  int verified = 0, refuted = 0, unknown = 0;
};

// Proves every rule of `rules` except `partial` ones (their outcome keeps the
// status). Fails before proving anything when the specs do not parse or a
// rule uses an operator that no axiom mentions (the error names the rule and
// the operators). `progress` is called after each rule, from one thread at a
// time.
Expected<std::vector<RuleOutcome>> verify_rules(
    const std::vector<Rule>& rules, const specs::SpecSource& specs, const VerifyOptions& options,
    const std::function<void(const VerifyProgress&)>& progress = {});

// The Z3 library the verifier is linked with, e.g. "Z3 4.8.12".
std::string z3_version();

}  // namespace tso::verifier
