// Internal to generator/: the lifted copy of a written rule. The generator
// finds rules at one example of each attribute (conv2d stride 1, `same`
// padding, ...; a 3x3 pool; a 2-D transpose; concat on one axis; operands of
// one rank); the lifted copy states the rule for every value of the
// attributes an op set's `lift` statements list, each as a parameter
// (`param ?s = [1,1]`),
// and for operands of every rank of `lift rank LO..HI` (a rank clause,
// substitutions/rules.h), for the verifier to prove or not (every instance,
// verifier/instances.h): the original rule is kept either way.
#pragma once

#include <optional>
#include <vector>

#include "core/attrs.h"
#include "generator/op_set.h"
#include "substitutions/rules.h"

namespace tso::gen {

// The copy of `rule` named `<name>_lifted`, or nullopt when nothing is
// lifted or when each side reads only variables that reach a conv2d's
// weight (a side that, in a model with constant weights, computes weights
// only, left to the folding after the search; at N=4 these were 159 of the
// 326 lifted copies at Z3's time limit). Conv2d: each attribute of
// `conv_keys` (stride ?s, pad ?p, dilation ?d, groups ?g) that is a plain
// value equal on every conv2d node of both sides becomes a parameter with
// that value as its example; an attribute written as a shape expression on
// some node (groups derived from a depthwise weight), or differing between
// nodes, stays as it is.
// Layout (`layout.rank_lo` > 0), for a rule of rank-generic operators only
// (elementwise, transpose, concat, split, matmul): the variables of the
// highest example rank n get the clause `rank ... in LO..HI`, and every
// literal axis and dim() on tensors of that rank counts from the end. With
// `perm`, transposes (all by one involutive permutation of length n, through
// elementwise operators only) take ?p where their argument is in the
// variables' layout and inv(?p) where it is permuted. With `concat_axis` /
// `split_axis`, the concat and split nodes on rank-n tensors (all on one
// axis) take ?a, each split its sizes as a parameter (?z0, ?z1, ...; only
// where every split is in the source, which binds them). No copy where a
// transpose's permutation or an axis could not be lifted.
// Pools: each attribute of `pool_keys` (kernel ?pk, stride ?ps, pad ?pp)
// that is a plain value equal on every avgpool and maxpool node of both
// sides becomes a parameter the same way.
std::optional<Rule> lift_rule(const Rule& rule, const std::vector<AttrKey>& conv_keys,
                              const LayoutLift& layout = {},
                              const std::vector<AttrKey>& pool_keys = {});

}  // namespace tso::gen
