// Internal to generator/: the mutant families of PET's partial equivalences.
// A family takes a source program (conv2d and matmul nodes over the op set's
// variables) and writes zero or more mutants of it with layout operators
// (reshape, transpose, split, concat, pad, slice), each as a rule whose
// source is the program and whose target is the mutant. Every extent in a
// mutant is a shape expression over the rule's variables, so the rule
// applies wherever both sides are shape-valid. Whether a mutant is exact,
// partial or wrong everywhere is decided afterwards, by fingerprints.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/graph.h"
#include "generator/mutant_side.h"
#include "substitutions/rules.h"

namespace tso::gen {

struct SourceProgram {
  Rule rule;                     // inputs, where and source; the target is empty
  Graph graph;                   // the source side at the example types
  std::vector<Exprs> var_dims;   // per variable of rule.inputs
  std::vector<Exprs> node_dims;  // per node of the source
};

// Fills graph, var_dims and node_dims from rule (its source side).
Expected<SourceProgram> make_source(Rule rule);

struct Family {
  const char* name;
  std::vector<Rule> (*build)(const SourceProgram&);
};

// stack   batch stacked along H or W (seams); rank-3 matmul batch into rows
// tile    H or W cut into two tiles moved into the batch, without halo
//         (wrong at the tile border) and with halo (exact)
// interleave  a dilated convolution as a plain one over the d x d
//         interleaved sub-images
// pad_even  an odd H or W padded to even, run (alone, interleaved or tiled)
//         and sliced back
// merge   sibling convolutions or matmuls merged into one (grouped) conv or
//         batched matmul
// roundtrip  an interleaved layout decoded and encoded again, as the
//         identity (between two interleaved programs in a row)
std::span<const Family> families();

}  // namespace tso::gen
