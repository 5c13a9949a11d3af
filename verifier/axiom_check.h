// Testing the specifications: every axiom, at each of its test values, is
// instantiated into two concrete graphs (its two sides) and evaluated with the
// reference executor in double on random inputs. A wrong axiom is caught here
// before it can prove a wrong rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "specs/specs.h"

namespace tso::verifier {

struct AxiomTestResult {
  std::string axiom;
  std::string where;  // FILE:LINE of the test
  bool passed = false;
  double error = 0;     // largest relative error over the trials
  std::string message;  // why it failed
};

struct AxiomCheckOptions {
  uint64_t seed = 1;
  int trials = 3;  // random inputs per test
};

// Checks every test of every axiom.
std::vector<AxiomTestResult> check_axioms(const std::vector<specs::Axiom>& axioms,
                                          const specs::OpFunctions& fns,
                                          const AxiomCheckOptions& options = {});

}  // namespace tso::verifier
