// The batch override of ImportOptions::batch (internal to frontend/): a
// model exported at one batch is imported at another. The model's batch is
// the first dimension of its first graph input of rank >= 1; every input
// whose first dimension is that batch gets the new one, and shapes are
// inferred again as the importer walks the nodes. What shape inference
// cannot redo is a Reshape whose constant shape bakes the old batch in
// (PyTorch writes [1,128,-1,64] for a batch-1 BERT, which at batch 16 would
// silently become [1,128,192,64]): `reshape_for_batch` rewrites its leading
// extent where that is unambiguous and refuses the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/types.h"

namespace tso::onnx_frontend {

struct BatchChange {
  int64_t from = 1;  // the model's batch
  int64_t to = 1;    // the one asked for
};

// The change for the inputs' shapes (by name, in graph order), which it
// rewrites in place; nullopt when `batch` is already the model's. Errors: a
// batch below 1, or no input of rank >= 1.
Expected<std::optional<BatchChange>> change_batch(
    std::vector<std::pair<std::string, Shape>>* inputs, int64_t batch);

// The shape a Reshape of `input` (not a constant: a tensor computed from the
// graph inputs) to the constant `shape` should use at the new batch. Its
// leading extent becomes `to` when it is `from` while the input's leading
// extent is `to`: the batch passes from the input's first axis to the
// output's. Returns nullopt when `shape` stays as it is; an error saying
// why when the shape, rewritten or not, does not fit the input (the batch
// is baked in some other way, e.g. [128,768] for a batch-1 [1,128,768]).
// Zeros copy the input's extent unless `allowzero`.
Expected<std::optional<std::vector<int64_t>>> reshape_for_batch(const BatchChange& change,
                                                                const Shape& input,
                                                                const std::vector<int64_t>& shape,
                                                                bool allowzero);

}  // namespace tso::onnx_frontend
