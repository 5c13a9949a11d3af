// Own kernels against direct loops: strided copies (transposes, negative
// strides, dtypes), fills, broadcasting binaries, erf, the include-pad
// average pool, conversions to and from f16.
#include "runtime/cpu/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace tso::cpu {
namespace {

TEST(StridedCopy, TransposesA3dTensor) {
  const int64_t d0 = 3, d1 = 70, d2 = 130;  // large enough for the parallel path
  std::vector<float> x(d0 * d1 * d2), y(x.size());
  std::iota(x.begin(), x.end(), 0.f);
  // y[k][i][j] = x[i][j][k] (perm [2,0,1])
  const std::vector<int64_t> extent = {d2, d0, d1}, src = {1, d1 * d2, d2}, dst = {d0 * d1, d1, 1};
  strided_copy({4, extent, 0, src, 0, dst}, reinterpret_cast<const std::byte*>(x.data()),
               reinterpret_cast<std::byte*>(y.data()));
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j)
      for (int64_t k = 0; k < d2; ++k)
        ASSERT_EQ(y[(k * d0 + i) * d1 + j], x[(i * d1 + j) * d2 + k]) << i << " " << j << " " << k;
}

// A transpose that moves the innermost axis runs in 8x8 blocks: BERT's keys,
// [1, 128, 12, 64] to [1, 12, 64, 128] (perm [0, 2, 3, 1]), and the same at
// extents that leave partial blocks on both axes.
TEST(StridedCopy, TransposesTheInnermostAxisInBlocks) {
  for (const auto& [s, h, d] : {std::tuple<int64_t, int64_t, int64_t>{128, 12, 64}, {13, 3, 21}}) {
    std::vector<float> x(s * h * d), y(x.size(), -1.f);
    std::iota(x.begin(), x.end(), 0.f);
    // y[j][k][i] = x[i][j][k]
    const std::vector<int64_t> extent = {1, h, d, s}, src = {0, d, 1, h * d},
                               dst = {0, d * s, s, 1};
    strided_copy({4, extent, 0, src, 0, dst}, reinterpret_cast<const std::byte*>(x.data()),
                 reinterpret_cast<std::byte*>(y.data()));
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < h; ++j)
        for (int64_t k = 0; k < d; ++k)
          ASSERT_EQ(y[(j * d + k) * s + i], x[(i * h + j) * d + k]) << i << " " << j << " " << k;
  }
}

// Transposes of seeded random permutations and extents (rank 1 to 5,
// extents 1 to 19, so blocks of 8 are whole, partial and absent), of 1-,
// 2-, 4- and 8-byte elements: every element lands where a direct loop puts
// it.
TEST(StridedCopy, TransposesRandomPermutationsOfEveryElementSize) {
  std::mt19937 rng(1201);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = pick(1, 5), bytes = std::vector<int>{1, 2, 4, 8}[pick(0, 3)];
    std::vector<int64_t> in(rank);
    int64_t n = 1;
    for (int64_t& e : in) n *= e = pick(1, rank <= 2 ? 19 : 9);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    // The input's row-major strides; the output's extents and strides.
    std::vector<int64_t> in_st(rank), extent(rank), src(rank), dst(rank);
    for (int d = rank - 1, st = 1; d >= 0; st *= static_cast<int>(in[d]), --d) in_st[d] = st;
    for (int d = 0; d < rank; ++d) extent[d] = in[perm[d]], src[d] = in_st[perm[d]];
    for (int d = rank - 1, st = 1; d >= 0; st *= static_cast<int>(extent[d]), --d) dst[d] = st;
    std::vector<std::byte> x(n * bytes), y(n * bytes, std::byte{0xee});
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::byte(rng());
    strided_copy({bytes, extent, 0, src, 0, dst}, x.data(), y.data());
    // Output element i, its index unravelled over `extent`, reads the input
    // at that index through `src`.
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, from = 0;
      for (int d = rank - 1; d >= 0; --d) from += rest % extent[d] * src[d], rest /= extent[d];
      ASSERT_EQ(std::memcmp(&y[i * bytes], &x[from * bytes], bytes), 0)
          << "trial " << trial << ", element " << i << " of " << n << ", " << bytes << " bytes";
    }
  }
}

TEST(StridedCopy, WalksBackwardsWithNegativeStrides) {
  std::vector<int64_t> x = {0, 1, 2, 3, 4, 5, 6, 7}, y(4, -1);
  const std::vector<int64_t> extent = {4}, src = {-2}, dst = {1};
  strided_copy({8, extent, 7, src, 0, dst}, reinterpret_cast<const std::byte*>(x.data()),
               reinterpret_cast<std::byte*>(y.data()));
  EXPECT_EQ(y, (std::vector<int64_t>{7, 5, 3, 1}));
}

// A depth-to-space, [2, 2, 3, 5, 9] to [3, 5, 2, 9, 2] (the sub-pixel form of
// a transposed convolution): its innermost run is 2 long, so the copy runs
// along the source's contiguous axis instead; every element lands where a
// direct loop puts it.
TEST(StridedCopy, AShortInnermostRunCopiesAlongTheSourcesContiguousAxis) {
  const int64_t sh = 2, sw = 2, c = 3, qh = 5, qw = 9;
  std::vector<float> src(sh * sw * c * qh * qw);
  std::iota(src.begin(), src.end(), 0.0f);
  const std::vector<int64_t> extent = {c, qh, sh, qw, sw};
  const std::vector<int64_t> src_st = {qh * qw, qw, sw * c * qh * qw, 1, c * qh * qw};
  const std::vector<int64_t> dst_st = {qh * sh * qw * sw, sh * qw * sw, qw * sw, sw, 1};
  StridedCopy copy;
  copy.elem_bytes = 4;
  copy.extent = extent;
  copy.src_st = src_st;
  copy.dst_st = dst_st;
  std::vector<float> dst(src.size(), -1.0f), want(src.size());
  for (int64_t o = 0; o < c; ++o)
    for (int64_t y = 0; y < qh; ++y)
      for (int64_t a = 0; a < sh; ++a)
        for (int64_t x = 0; x < qw; ++x)
          for (int64_t b = 0; b < sw; ++b)
            want[(((o * qh + y) * sh + a) * qw + x) * sw + b] =
                src[(((a * sw + b) * c + o) * qh + y) * qw + x];
  strided_copy(copy, reinterpret_cast<const std::byte*>(src.data()),
               reinterpret_cast<std::byte*>(dst.data()));
  EXPECT_EQ(dst, want);
}

TEST(StridedCopy, MergesContiguousDimensionsIntoRows) {
  // A [2,3,4] block copied into the middle of a [2,5,4] tensor (a concat).
  std::vector<float> x(24), y(40, 0.f);
  std::iota(x.begin(), x.end(), 1.f);
  const std::vector<int64_t> extent = {2, 3, 4}, src = {12, 4, 1}, dst = {20, 4, 1};
  strided_copy({4, extent, 0, src, 4, dst}, reinterpret_cast<const std::byte*>(x.data()),
               reinterpret_cast<std::byte*>(y.data()));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < 4; ++c) {
        const float want = b >= 1 && b < 4 ? x[a * 12 + (b - 1) * 4 + c] : 0.f;
        ASSERT_EQ(y[a * 20 + b * 4 + c], want);
      }
}

TEST(Fill, SetsEveryElementOfAnyWidth) {
  std::vector<double> y(100000, 0.0);
  const double v = -2.5;
  fill(reinterpret_cast<std::byte*>(y.data()), static_cast<int64_t>(y.size()), 8, &v);
  for (double e : y) ASSERT_EQ(e, v);
}

TEST(BroadcastBinary, StretchesBothOperands) {
  const Shape as{3, 1}, bs{1, 4}, out{3, 4};
  const std::vector<float> a = {1, 2, 3}, b = {10, 20, 30, 40};
  std::vector<float> y(12);
  broadcast_binary(BinaryFn::kSub, a.data(), as, b.data(), bs, y.data(), out);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(y[i * 4 + j], a[i] - b[j]);
  broadcast_binary(BinaryFn::kPow, a.data(), as, b.data(), bs, y.data(), out);
  EXPECT_FLOAT_EQ(y[2 * 4 + 1], std::pow(3.f, 20.f));
}

TEST(IsNaN, MarksNaNsOnly) {
  const std::vector<float> x = {0.f, NAN, INFINITY, -1.f};
  std::vector<uint8_t> y(4);
  isnan(x.data(), y.data(), 4);
  EXPECT_EQ(y, (std::vector<uint8_t>{0, 1, 0, 0}));
}

// Within 4 ulp of the scalar erff (the widest vector one the CPU runs), on
// both paths (50003: a tail of three), and exact where erf is: zero, the
// infinities, NaN.
TEST(Erf, MatchesTheStandardLibrary) {
  std::vector<float> x(50003), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = -6.f + 12.f * i / x.size();
  const std::vector<float> special = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-30f, -1e30f, 9.f};
  std::copy(special.begin(), special.end(), x.begin() + 40);
  std::copy(special.end() - 3, special.end(), x.end() - 3);  // the scalar tail
  erf(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      ASSERT_TRUE(std::isnan(y[i])) << i;
      continue;
    }
    ASSERT_FLOAT_EQ(y[i], std::erf(x[i])) << x[i];
  }
  EXPECT_EQ(y[40], 0.f);
  EXPECT_TRUE(std::signbit(y[41]));
  EXPECT_EQ(y[42], 1.f);
  EXPECT_EQ(y[43], -1.f);
}

TEST(AvgPoolIncludePad, DividesByTheWindowClippedToThePaddedInput) {
  // 3x3 input, kernel 2, stride 2, pad 1 on top/left only: windows at the
  // bottom/right edge reach past the input and its (zero) padding.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> y(4);
  avgpool_include_pad({1, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0}, x.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 1.f / 4);        // pad, pad, pad, x00: 4 positions
  EXPECT_FLOAT_EQ(y[1], (2 + 3) / 4.f);  // pad row + x01, x02
  EXPECT_FLOAT_EQ(y[2], (4 + 7) / 4.f);
  EXPECT_FLOAT_EQ(y[3], (5 + 6 + 8 + 9) / 4.f);
}

// f32 to f16 rounds to nearest, ties to even, overflows to infinity and
// keeps NaN, zeros' signs and subnormals; f16 to f32, i64 and bool is exact,
// truncating and x != 0 as for any other type.
TEST(Convert, HalvesBothWays) {
  const float inf = INFINITY;
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1. 1 + 3 * 2^-11
  // is halfway to 1 + 2^-9: even is that. 65520 is halfway to infinity.
  const std::vector<float> x = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.5f, 65504.0f, 65520.0f,
                                -1e6f, 0x1p-24f, -0.0f, NAN, 1e-9f};
  std::vector<uint16_t> h(x.size());
  convert(reinterpret_cast<const std::byte*>(x.data()), DType::kF32,
          reinterpret_cast<std::byte*>(h.data()), DType::kF16, static_cast<int64_t>(x.size()));
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3c00, 0x3c02, 0xc100, 0x7bff, 0x7c00, 0xfc00, 0x0001,
                                      0x8000, 0x7e00, 0x0000}));
  std::vector<float> back(h.size());
  convert(reinterpret_cast<const std::byte*>(h.data()), DType::kF16,
          reinterpret_cast<std::byte*>(back.data()), DType::kF32, static_cast<int64_t>(h.size()));
  EXPECT_EQ(back[1], 1.0f + 0x1p-9f);
  EXPECT_EQ(back[2], -2.5f);
  EXPECT_EQ(back[4], inf);
  EXPECT_EQ(back[6], 0x1p-24f);
  EXPECT_TRUE(std::signbit(back[7]));
  EXPECT_TRUE(std::isnan(back[8]));
  std::vector<int64_t> ints(3);
  std::vector<uint8_t> bools(3);
  convert(reinterpret_cast<const std::byte*>(h.data() + 1), DType::kF16,
          reinterpret_cast<std::byte*>(ints.data()), DType::kI64, 3);
  convert(reinterpret_cast<const std::byte*>(h.data() + 7), DType::kF16,
          reinterpret_cast<std::byte*>(bools.data()), DType::kBool, 3);
  EXPECT_EQ(ints, (std::vector<int64_t>{1, -2, 65504}));
  EXPECT_EQ(bools, (std::vector<uint8_t>{0, 1, 0}));
}

}  // namespace
}  // namespace tso::cpu
