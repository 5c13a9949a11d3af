// The independent oracle for graph identity: Boost.Graph's VF2 isomorphism
// on labelled graphs, with no use of the hashes it checks
// (graph_identity_oracle_test.cc).
#pragma once

#include "core/graph.h"

namespace tso::testing {

// Whether a node-for-node correspondence maps `a` onto `b`: each node has the
// label of its counterpart (operator, attributes, result types, and the name
// of a graph input or weight), argument k of a node reads output o of a node
// in `a` exactly where its counterpart's argument k reads output o of the
// counterpart in `b` (positions count for every operator), and output k
// names the same tensor under the same name. Node order, operator names, the
// graph's name and weight values play no part.
bool isomorphic(const Graph& a, const Graph& b);

// `isomorphic` on the graphs with equal subexpressions merged (two nodes are
// merged when they have the same label and read merged arguments), each
// merged node labelled with how many nodes it stands for: the identity of
// core/graph.h, which cannot see which of two copies of a subexpression a
// reader reads.
bool isomorphic_up_to_sharing(const Graph& a, const Graph& b);

}  // namespace tso::testing
