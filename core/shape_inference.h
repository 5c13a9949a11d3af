// Shape and attribute inference for every operator in core/ops.def.
#pragma once

#include <span>
#include <vector>

#include "core/attrs.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/types.h"

namespace tso {

// Checks that `attrs` holds only attributes `op` takes, each of the right
// type, and fills the missing ones with their defaults. A missing required
// attribute or an unknown one is an error.
Status complete_attrs(Op op, Attrs* attrs);

// Infers the output types of `op` applied to `inputs`, after normalizing
// attributes that depend on input ranks (negative axes become positive).
// Errors describe the conflict with the shapes involved, e.g.
// "add: shapes f32[2,3] and f32[4,3] do not broadcast"; the caller adds the
// node's identity. Opaque nodes are not inferred (their types are recorded).
// An output whose size in bytes, or an operator whose FLOP count, does not
// fit in int64 is an error too: every count computed later fits.
Expected<std::vector<TensorType>> infer_types(Op op, Attrs* attrs,
                                              std::span<const TensorType> inputs);

// Multiply-accumulates count as 2 FLOPs; elementwise operators 1 per output
// element; data movement 0. Used by `tso inspect` and the analytic cost model.
// The types must be ones infer_types accepted (every node of a Graph has
// them), so the count fits; anything else aborts.
int64_t flops(Op op, const Attrs& attrs, std::span<const TensorType> inputs,
              std::span<const TensorType> outputs);

}  // namespace tso
