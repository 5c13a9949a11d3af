// Which elements of a line top_k keeps (core/ops.h), in the order it lists
// them: the k largest (or smallest) of n values `stride` apart, larger (or
// smaller) first, the lower index first among equal ones, NaN larger than
// any number (torch.topk; numpy's sort puts NaN last). Shared by
// runtime/reference and runtime/cpu, so that both pick alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace tso::rt {

// Fills `order` (resized to n, of which the first k are the answer) with
// the indices along the line.
template <class T>
void top_k_order(const T* x, int64_t n, int64_t stride, int64_t k, bool largest,
                 std::vector<int64_t>* order) {
  order->resize(static_cast<size_t>(n));
  std::iota(order->begin(), order->end(), int64_t{0});
  auto before = [&](int64_t i, int64_t j) {
    const T a = x[i * stride], b = x[j * stride];
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan || b_nan) return a_nan && b_nan ? i < j : largest ? a_nan : b_nan;
    if (a != b) return largest ? a > b : a < b;
    return i < j;
  };
  std::partial_sort(order->begin(), order->begin() + k, order->end(), before);
}

}  // namespace tso::rt
