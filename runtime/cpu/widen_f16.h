// f16 models on the CPU runtime, whose kernels compute on f32 (oneDNN has no
// f16 kernels for a CPU without AVX512-FP16): the graph is planned with every
// f16 tensor widened to f32, which computes what ONNX Runtime's CPU provider
// computes for such a model (README). f16 weights are converted once, an f16
// graph input is read as f16 and cast to f32 on entry, an f16 output cast
// back (rounded to nearest even) on exit, and a Cast to f16 inside the graph
// becomes a Cast to f32 (none where its input is already f32). Intermediate
// values keep f32's precision: the result is at least as accurate as f16
// arithmetic, and is what the reference executor, which computes f16 graphs
// in f32 too, computes.
#pragma once

#include <optional>

#include "core/error.h"
#include "core/graph.h"

namespace tso::cpu {

// The type a tensor of type `t` is computed in: f32 for f16, else `t`.
TensorType widened(TensorType t);

// Node `n` as the widened graph computes it: its f16 results f32, a Cast to
// f16 a Cast to f32. The operator timed for a signature of an f16 model.
Node widened(const Node& n);

// `g` with its f16 tensors computed as f32; nullopt when `g` has none.
Expected<std::optional<Graph>> widen_f16(const Graph& g);

}  // namespace tso::cpu
