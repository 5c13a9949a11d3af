// Running a graph once on one of tso's executors, as `tso run` and the
// Python module's tso.run do: "cpu" (the oneDNN runtime), "reference" (the
// reference executor, the definition of every operator, slow) or "cuda"
// (the GPU runtime, where this build has it).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"

namespace tso::driver {

// The graph's input nodes (Op::Input), in input-node order: the order
// `inputs` below follows.
std::vector<int> graph_inputs(const Graph& g);

// Errors when `inputs` does not give one tensor of the input's exact type
// per graph input (naming the input and both types).
Status check_inputs(const Graph& g, const std::vector<WeightData>& inputs);

// The reference executor on f32 inputs; every output comes back as f32.
Expected<std::vector<WeightData>> run_reference(const Graph& g,
                                                const std::vector<WeightData>& inputs);

// Checks the inputs, runs the graph once on `device` and returns one tensor
// per graph output, in output order. An unknown device, or "cuda" in a
// build without the CUDA runtime, is an error saying so.
Expected<std::vector<WeightData>> execute(const Graph& g, std::vector<WeightData> inputs,
                                          const std::string& device);

}  // namespace tso::driver
