// Test helper of the CPU executor's tests: a graph's plan and one profiled
// run, reported through GoogleTest's expectations.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "runtime/cpu/executor.h"

namespace tso::cpu::testing {

// The steps one run of `g` planned with `o` executes (none, with a failed
// expectation, when planning or running fails).
inline std::vector<StepTime> profiled_steps(const Graph& g, const ExecutorOptions& o) {
  Expected<std::unique_ptr<Executor>> ex = Executor::create(g, o);
  EXPECT_TRUE(ex.ok()) << ex.error().message;
  if (!ex) return {};
  Expected<std::vector<StepTime>> steps = (*ex)->profile_steps(1);
  EXPECT_TRUE(steps.ok()) << steps.error().message;
  if (!steps) return {};
  return std::move(*steps);
}

}  // namespace tso::cpu::testing
