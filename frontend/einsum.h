// Einsum as the IR's products, sums and data movement (internal to frontend/).
//
// An equation such as "bhld,lrd->bhlr" (BERT's relative_key position scores)
// is parsed into one term of labels per operand and one for the result, the
// ellipsis expanded into labels of its own. Operands are contracted left to
// right; each pair becomes reduce_sum (labels no later term reads), transpose
// and reshape to [batch..., M, K] and [batch..., K, N], matmul, and reshape
// and transpose to the labels the next step reads; a pair that shares no
// summed label is a broadcasting mul instead, and a single operand a
// reduce_sum and a transpose. A label repeated within one operand (a
// diagonal) has no such form: the node stays opaque.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

// One label per axis; the ellipsis's axes get the labels '0', '1', ...
// aligned to the right across operands, as ONNX broadcasts them.
struct EinsumTerms {
  std::vector<std::string> inputs;
  std::string output;  // the implicit output when the equation has no "->"
};

// Parses `equation` for operands of the given ranks; an Error says what is
// malformed (a term of another length than its operand's rank, an output
// label no input has, a character that is not a letter).
Expected<EinsumTerms> parse_einsum(std::string_view equation, std::span<const int> ranks);

Expected<Mapped> map_einsum(NodeContext& ctx);

}  // namespace tso::onnx_frontend
