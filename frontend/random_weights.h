// Seeded random values for initializers whose external data file is missing
// (graph-only models): what the weight feeds decides the distribution, so
// activations stay finite through deep networks. Internal to frontend/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/graph.h"

namespace tso::onnx_frontend {

// How an initializer is used, from the first node that reads it.
struct WeightUse {
  std::string op_type;  // e.g. "Conv"; empty when no node reads it
  int input = 0;        // which input of that node
  bool trans_b = false; // Gemm's transB, which decides the fan-in
};

// Values that depend only on `seed`, `name`, the type and the use:
//  - Conv weights, MatMul and Gemm matrices, and other tensors of rank >= 2:
//    He scale, standard deviation sqrt(2 / fan_in);
//  - BatchNormalization scale and LayerNormalization scale: 1 + small noise;
//    BatchNormalization variance: uniform in [0.5, 1.5];
//  - other vectors (biases, means): standard deviation 0.01.
// Values are uniform with the stated mean and deviation.
// Integer tensors are filled with zeros (indices and shapes are never left
// out of graph-only files in practice, and zero is always a valid index).
std::shared_ptr<const WeightData> random_weight(uint64_t seed, std::string_view name,
                                                const TensorType& type, const WeightUse& use);

}  // namespace tso::onnx_frontend
