// The kernels of token ids and masks (logic.h) against direct loops:
// comparisons of every numeric type with NaN and broadcasting, logic,
// cumulative sums in all four directions, wrapping integer arithmetic and
// where on elements of 1, 4 and 8 bytes.
#include "runtime/cpu/logic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace tso::cpu {
namespace {

template <class T>
const std::byte* bytes(const std::vector<T>& v) {
  return reinterpret_cast<const std::byte*>(v.data());
}

template <class T>
std::byte* bytes(std::vector<T>& v) {
  return reinterpret_cast<std::byte*>(v.data());
}

TEST(Compare, BroadcastsRowsAgainstColumnsInEveryNumericType) {
  // a: [3,1], b: [4] -> [3,4]
  const std::vector<int64_t> a = {1, 2, 3}, b = {3, 2, 1, 2};
  std::vector<uint8_t> y(12);
  for (CompareFn f : {CompareFn::kEqual, CompareFn::kLess, CompareFn::kGreater}) {
    compare(f, DType::kI64, bytes(a), Shape{3, 1}, bytes(b), Shape{4}, y.data(), Shape{3, 4});
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        const bool want = f == CompareFn::kEqual  ? a[i] == b[j]
                          : f == CompareFn::kLess ? a[i] < b[j]
                                                  : a[i] > b[j];
        EXPECT_EQ(y[i * 4 + j], want ? 1 : 0) << i << " " << j;
      }
  }
  const std::vector<int32_t> a32 = {1, 2, 3}, b32 = {2};
  compare(CompareFn::kLess, DType::kI32, bytes(a32), Shape{3}, bytes(b32), Shape{}, y.data(),
          Shape{3});
  EXPECT_EQ(std::vector<uint8_t>(y.begin(), y.begin() + 3), (std::vector<uint8_t>{1, 0, 0}));
  const std::vector<double> a64 = {0.5, 2.5}, b64 = {2.5, 0.5};
  compare(CompareFn::kGreater, DType::kF64, bytes(a64), Shape{2}, bytes(b64), Shape{2}, y.data(),
          Shape{2});
  EXPECT_EQ(std::vector<uint8_t>(y.begin(), y.begin() + 2), (std::vector<uint8_t>{0, 1}));
}

TEST(Compare, NaNIsUnequalAndUnordered) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {nan, nan, 1.f, 1.f}, b = {nan, 1.f, nan, 1.f};
  std::vector<uint8_t> y(4);
  compare(CompareFn::kEqual, DType::kF32, bytes(a), Shape{4}, bytes(b), Shape{4}, y.data(),
          Shape{4});
  EXPECT_EQ(y, (std::vector<uint8_t>{0, 0, 0, 1}));
  for (CompareFn f : {CompareFn::kLess, CompareFn::kGreater}) {
    compare(f, DType::kF32, bytes(a), Shape{4}, bytes(b), Shape{4}, y.data(), Shape{4});
    EXPECT_EQ(y, (std::vector<uint8_t>{0, 0, 0, 0}));
  }
}

TEST(Compare, LargeTensorsTakeTheParallelPath) {
  const int64_t n = 40000;  // past the parallel threshold
  std::vector<int64_t> a(n);
  std::iota(a.begin(), a.end(), 0);
  const std::vector<int64_t> b = {n / 2};
  std::vector<uint8_t> y(n);
  compare(CompareFn::kLess, DType::kI64, bytes(a), Shape{n}, bytes(b), Shape{1}, y.data(),
          Shape{n});
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], i < n / 2 ? 1 : 0) << i;
}

TEST(Logic, AndOrNotOfMasks) {
  const std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1};  // a: [2,2], b: [2]
  std::vector<uint8_t> y(4);
  logical(LogicFn::kAnd, a.data(), Shape{2, 2}, b.data(), Shape{2}, y.data(), Shape{2, 2});
  EXPECT_EQ(y, (std::vector<uint8_t>{0, 0, 0, 1}));
  logical(LogicFn::kOr, a.data(), Shape{2, 2}, b.data(), Shape{2}, y.data(), Shape{2, 2});
  EXPECT_EQ(y, (std::vector<uint8_t>{0, 1, 1, 1}));
  logical_not(a.data(), y.data(), 4);
  EXPECT_EQ(y, (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(CumSum, SumsAlongTheMiddleAxisInEveryDirection) {
  // x: [2,3,2] summed along axis 1.
  std::vector<int32_t> x(12);
  std::iota(x.begin(), x.end(), 1);
  auto direct = [&](bool exclusive, bool reverse) {
    std::vector<int32_t> y(12);
    for (int o = 0; o < 2; ++o)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 3; ++k) {
          int32_t s = 0;
          for (int j = 0; j < 3; ++j) {
            const bool in = reverse ? (exclusive ? j > k : j >= k) : (exclusive ? j < k : j <= k);
            if (in) s += x[(o * 3 + j) * 2 + i];
          }
          y[(o * 3 + k) * 2 + i] = s;
        }
    return y;
  };
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      std::vector<int32_t> y(12, -1);
      cumsum({2, 3, 2, exclusive, reverse}, DType::kI32, bytes(x), bytes(y));
      EXPECT_EQ(y, direct(exclusive, reverse)) << exclusive << reverse;
    }
  const std::vector<float> f = {0.5f, 0.25f, 2.f};
  std::vector<float> g(3);
  cumsum({1, 3, 1, false, false}, DType::kF32, bytes(f), bytes(g));
  EXPECT_EQ(g, (std::vector<float>{0.5f, 0.75f, 2.75f}));
}

TEST(IntegerBinary, WrapsAroundAndBroadcasts) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> a = {big, 3, -4}, b = {1};
  std::vector<int64_t> y(3);
  integer_binary(BinaryFn::kAdd, DType::kI64, bytes(a), Shape{3}, bytes(b), Shape{}, bytes(y),
                 Shape{3});
  EXPECT_EQ(y, (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 4, -3}));
  const std::vector<int32_t> c = {2, -3}, d = {5, 7};  // [2,1] x [2] -> [2,2]
  std::vector<int32_t> z(4);
  integer_binary(BinaryFn::kMul, DType::kI32, bytes(c), Shape{2, 1}, bytes(d), Shape{2}, bytes(z),
                 Shape{2, 2});
  EXPECT_EQ(z, (std::vector<int32_t>{10, 14, -15, -21}));
  integer_binary(BinaryFn::kSub, DType::kI32, bytes(c), Shape{2, 1}, bytes(d), Shape{2}, bytes(z),
                 Shape{2, 2});
  EXPECT_EQ(z, (std::vector<int32_t>{-3, -5, -8, -10}));
  EXPECT_FALSE(integer_binary_supported(BinaryFn::kDiv, DType::kI64));
  EXPECT_FALSE(integer_binary_supported(BinaryFn::kAdd, DType::kF32));
}

TEST(WhereBytes, SelectsIntegersAndBoolsWithBroadcasting) {
  const std::vector<uint8_t> c = {1, 0};  // [2,1]
  const std::vector<int64_t> a = {10, 11, 12}, b = {-1};
  std::vector<int64_t> y(6);
  where_bytes(8, c.data(), Shape{2, 1}, bytes(a), Shape{3}, bytes(b), Shape{}, bytes(y),
              Shape{2, 3});
  EXPECT_EQ(y, (std::vector<int64_t>{10, 11, 12, -1, -1, -1}));
  const std::vector<uint8_t> t = {1, 1}, f = {0};
  std::vector<uint8_t> m(2);
  where_bytes(1, c.data(), Shape{2}, bytes(t), Shape{2}, bytes(f), Shape{1}, bytes(m), Shape{2});
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0}));
}

// f32: operands of the output's shape or one element, a column stretched
// along the rows, and a condition broadcast along the last axis (the
// attention guard's [1,1,S,1] against weights [1,H,S,S]).
TEST(WhereBytes, SelectsFloatsWithAndWithoutBroadcasting) {
  const Shape out{2, 3};
  const std::vector<uint8_t> c = {1, 0, 1, 0, 0, 1}, rows = {1, 0};
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, zero = {0}, col = {10, 20};
  std::vector<float> y(6);
  where_bytes(4, c.data(), out, bytes(zero), Shape{1}, bytes(a), out, bytes(y), out);
  EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4, 5, 0}));
  where_bytes(4, c.data(), out, bytes(col), Shape{2, 1}, bytes(a), out, bytes(y), out);
  EXPECT_EQ(y, (std::vector<float>{10, 2, 10, 4, 5, 20}));
  where_bytes(4, rows.data(), Shape{2, 1}, bytes(a), out, bytes(zero), Shape{}, bytes(y), out);
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 0, 0, 0}));
  where_bytes(4, c.data(), out, bytes(a), out, bytes(zero), Shape{}, bytes(y), out);
  EXPECT_EQ(y, (std::vector<float>{1, 0, 3, 0, 0, 6}));
}

}  // namespace
}  // namespace tso::cpu
