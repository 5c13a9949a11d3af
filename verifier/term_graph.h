// Z3 terms back to graphs: a ground tensor term over the vocabulary of
// specs/op_functions.h becomes the core Graph that computes it, so that an
// axiom's two sides can be run on the reference executor. A term whose
// shape parameters disagree with its arguments (a concat whose n0 is not the
// extent of its first part, a split past the end) is an error, as is an
// operator application that is not shape-valid.
#pragma once

#include <z3++.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "specs/op_functions.h"

namespace tso::verifier {

class TermGraphBuilder {
 public:
  // `inputs`: the type of each tensor constant (by name) the terms may use.
  TermGraphBuilder(const specs::OpFunctions& fns, std::map<std::string, TensorType> inputs);

  // The node computing `term` (added with its subterms on first use).
  Expected<TensorRef> add(const z3::expr& term);
  const TensorType& type(TensorRef r) const { return b_.type(r); }

  // The graph with the given outputs (named out0, out1, ...); the builder is
  // left empty.
  Expected<Graph> finish(const std::vector<TensorRef>& outputs);

 private:
  Expected<TensorRef> add_app(const z3::expr& term);

  const specs::OpFunctions& fns_;
  GraphBuilder b_;
  std::map<std::string, TensorRef> inputs_;
  std::unordered_map<unsigned, TensorRef> memo_;  // by Z3 expression id
};

// Decodes a ground attribute term (after simplification): an Int numeral, a
// (Seq Int) literal, or a Real numeral.
Expected<int64_t> decode_int(const z3::expr& e);
Expected<std::vector<int64_t>> decode_ints(const z3::expr& e);

}  // namespace tso::verifier
