// Rules decided by the region check (status exact or partial), at the shapes
// of a match. The region check of partial equivalence decides a rule at its
// example types; where its boxes fall depends on the shapes (seams and
// padding borders move, and at small extents they overlap), so at every new
// binding the optimizer decides it again before applying it: the stored
// corrected target is used when it is right everywhere at these shapes, and
// otherwise a correction is derived from the source and the mutant there.
// No such rule is ever applied without a check at the shapes it is applied
// at, and never without its correction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "core/attrs.h"
#include "core/error.h"
#include "core/graph.h"
#include "substitutions/rules.h"

namespace tso::opt {

// A region rule at one binding: a graph over the rule's variables (input i
// is Rule::inputs[i]) that computes the source's outputs.
struct RegionInstance {
  Graph target;
  int boxes = 0;                    // corrected boxes (0: the mutant is exact here)
  int64_t correction_elements = 0;  // output elements the correction recomputes
};

bool is_region_rule(const Rule& rule);

// Decided instances of one region rule, cached per binding; thread-safe.
class RegionTargets {
 public:
  explicit RegionTargets(const Rule& rule) : rule_(rule) {}
  // The instance at these variable types and parameter values, or why the
  // rule does not apply there (not shape-valid, or no correction found).
  Expected<std::shared_ptr<const RegionInstance>> at(std::span<const TensorType> var_types,
                                                     std::span<const AttrValue> params);

 private:
  Expected<std::shared_ptr<const RegionInstance>> decide(const RuleBindings& b) const;

  const Rule& rule_;
  std::mutex mu_;
  std::map<std::string, Expected<std::shared_ptr<const RegionInstance>>> cache_;
};

}  // namespace tso::opt
