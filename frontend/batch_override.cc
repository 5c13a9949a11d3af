#include "frontend/batch_override.h"

namespace tso::onnx_frontend {

namespace {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

// ONNX Reshape's rule: at most one -1, zeros copy the input's extent (unless
// allowzero), and the element counts agree.
bool fits(const Shape& input, const std::vector<int64_t>& shape, bool allowzero) {
  int64_t known = 1;
  int inferred = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t d = shape[k];
    if (d == -1) {
      ++inferred;
      continue;
    }
    if (d == 0 && !allowzero) {
      if (k >= size_t(input.rank())) return false;
      d = input[k];
    }
    if (d < 0 || __builtin_mul_overflow(known, d, &known)) return false;
  }
  const int64_t numel = input.numel();
  if (inferred > 1) return false;
  if (inferred == 1) return known != 0 && numel % known == 0;
  return known == numel;
}

}  // namespace

Expected<std::optional<BatchChange>> change_batch(
    std::vector<std::pair<std::string, Shape>>* inputs, int64_t batch) {
  if (batch < 1) return Error{"the batch must be positive, not " + std::to_string(batch)};
  std::optional<int64_t> from;
  for (const auto& [name, shape] : *inputs)
    if (shape.rank() > 0) {
      from = shape[0];
      break;
    }
  if (!from)
    return Error{"cannot change the batch to " + std::to_string(batch) +
                 ": no graph input has a batch dimension (all are scalars)"};
  if (*from == batch) return std::optional<BatchChange>();
  for (auto& [name, shape] : *inputs)
    if (shape.rank() > 0 && shape[0] == *from) shape[0] = batch;
  return std::optional(BatchChange{*from, batch});
}

Expected<std::optional<std::vector<int64_t>>> reshape_for_batch(const BatchChange& change,
                                                                const Shape& input,
                                                                const std::vector<int64_t>& shape,
                                                                bool allowzero) {
  std::vector<int64_t> rewritten = shape;
  if (input.rank() > 0 && input[0] == change.to && !shape.empty() && shape[0] == change.from)
    rewritten[0] = change.to;
  if (fits(input, rewritten, allowzero))
    return rewritten == shape ? std::nullopt : std::optional(rewritten);
  return Error{"at batch " + std::to_string(change.to) + " (the model's is " +
               std::to_string(change.from) + ") its shape " + ints_text(shape) +
               (rewritten == shape ? "" : ", or " + ints_text(rewritten) + ",") +
               " does not fit its input of shape " + to_string(input) +
               ": the shape bakes the batch in and cannot be rewritten unambiguously"};
}

}  // namespace tso::onnx_frontend
