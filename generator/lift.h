// Internal to generator/: the lifted copy of a written rule. The generator
// finds rules at one example of each conv2d attribute (stride 1, `same`
// padding, ...); the lifted copy states the rule for every value of the
// attributes an op set's `lift conv2d ATTR...` lists, each as a parameter
// (`param ?s = [1,1]`) that all of the rule's conv2d nodes share, for the
// verifier to prove or not: the original rule is kept either way.
#pragma once

#include <optional>
#include <vector>

#include "core/attrs.h"
#include "substitutions/rules.h"

namespace tso::gen {

// The copy of `rule` named `<name>_lifted`, where each attribute of `keys`
// (stride ?s, pad ?p, dilation ?d, groups ?g) that is a plain value equal on
// every conv2d node of both sides becomes a parameter with that value as its
// example; an attribute written as a shape expression on some node (groups
// derived from a depthwise weight), or differing between nodes, stays as it
// is. nullopt when the rule has no conv2d node or nothing is lifted.
std::optional<Rule> lift_rule(const Rule& rule, const std::vector<AttrKey>& keys);

}  // namespace tso::gen
