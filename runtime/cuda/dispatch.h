// Which GPU kernel family runs each operator of core/ops.def. The table is
// derived from ops.def and checked against it at compile time (dispatch.cc),
// so a new operator does not build until the CUDA runtime says how it runs.
// Plain C++: the planner and its tests use it without a GPU.
#pragma once

#include <string_view>

#include "core/error.h"
#include "core/graph.h"

namespace tso::cuda {

enum class Kernel : unsigned char {
  kSource,       // input, weight and constants: device memory filled before any run
  kConv,         // cuDNN convolution, bias and relu fused where cuDNN allows
  kMatmul,       // cuBLASLt, batched, relu and bias epilogues
  kGemm,         // cuBLASLt with alpha, transposes, bias epilogue or broadcast C
  kUnary,        // own kernel: relu, leaky_relu, softplus, sigmoid, tanh, erf, gelu, sqrt,
                 // neg, exp, clip, log, abs
  kBinary,       // own kernel: add, mul, smul, sub, div, pow, max, min with broadcasting
  kIsNaN,        // own kernel: f32 in, bool (one byte, 0 or 1) out
  kWhere,        // own kernel: select by a bool condition, three-way broadcasting, any dtype
  kBatchNorm,    // own kernel, inference form, per channel
  kSoftmax,      // own kernel, one block per row (log_softmax too)
  kLayerNorm,    // own kernel, one block per row
  kReduceMean,   // own kernel, one block per output element (also global_avgpool)
  kPool,         // own kernel: max and average, any padding, ceil mode
  kCopy,         // strided copy: transpose, slice, enlarge
  kPad,          // fill plus strided copy
  kConcat,       // copies only the inputs that could not be placed in the output
  kUpdateSlice,  // strided copy of the patch into its box; the base copied first unless in place
  kView,         // no work: reshape, flatten, squeeze, unsqueeze, split
  kUnsupported,  // opaque; gather(_elements), expand, cast, comparisons, logic, cumsum,
                 // reduce_sum, reduce_max, reduce_l2: an error
};

std::string_view kernel_name(Kernel k);

// The kernel family of `op`; total over ops.def.
Kernel kernel_for(Op op);

// The kernel family of graph node `index`; an opaque node is an error that
// names its ONNX op_type and the node, one without a kernel (gather, expand,
// cast, comparisons, logic, cumsum) an error that names the node.
Expected<Kernel> kernel_for_node(const Graph& g, int index);

}  // namespace tso::cuda
