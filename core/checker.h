// The graph checker: the invariants every graph satisfies. Tests run it after
// every rewrite; it is cheap enough for debug builds to run it everywhere.
#pragma once

#include "core/error.h"
#include "core/graph.h"

namespace tso {

// Checks arity, complete and well-typed attributes, argument references
// pointing to earlier nodes (so the graph is acyclic and topologically
// ordered), recorded types equal to re-inferred ones, unique input names,
// valid outputs, and that every operator reaches an output.
Status check(const Graph& g);

}  // namespace tso
