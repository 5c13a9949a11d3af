// Every vector kernel set this CPU runs (vector_kernels.h) against the scalar
// formulas of runtime/common/quantize.h, bit for bit, on the inputs where a
// quantizer goes wrong: exact ties at every level and their neighbours, NaN,
// the infinities, signed zeros, subnormals, the largest floats, scales from
// subnormal to huge; lengths that leave a tail.
#include "runtime/cpu/vector_kernels.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string_view>
#include <vector>

namespace tso::cpu {
namespace {

const std::vector<float> kScales = {1.f,
                                    0.5f,
                                    3 * 0x1p-7f,
                                    5 * 0x1p-3f,
                                    7 * 0x1p-9f,
                                    0.0371f,
                                    1e-30f,
                                    0x1p-140f,
                                    3e37f,
                                    FLT_MAX,
                                    std::nextafter(1.f, 2.f)};

// Ties k + 1/2 times the scale at every level of both ranges and past them,
// each with its two neighbours, then specials and a random spread.
std::vector<float> hard_inputs(float s) {
  std::vector<float> x;
  for (int k = -300; k <= 300; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * s;
    x.insert(x.end(), {tie, std::nextafter(tie, -INFINITY), std::nextafter(tie, INFINITY),
                       static_cast<float>(k) * s});
  }
  const float inf = std::numeric_limits<float>::infinity();
  x.insert(x.end(), {NAN, -NAN, inf, -inf, 0.f, -0.f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                     0x1p-149f, -0x1p-149f, 0x1p-130f});
  std::mt19937 rng(7);
  std::normal_distribution<float> spread(0.f, 200.f * s);
  while (x.size() % 16 != 5) x.push_back(spread(rng));  // a tail for every width
  return x;
}

template <class Q>
void expect_quantize_exact(const VectorKernels& k,
                           int64_t (*kernel)(const float*, QuantLevels, Q*, int64_t),
                           rt::QuantRange r) {
  for (float s : kScales)
    for (int z : {r.lo, 0, 3, r.hi}) {
      if (z < r.lo || z > r.hi) continue;
      const std::vector<float> x = hard_inputs(s);
      const int64_t n = static_cast<int64_t>(x.size());
      std::vector<Q> got(x.size()), want(x.size());
      std::vector<float> fake(x.size()), fake_want(x.size());
      const int64_t done = kernel(x.data(), {s, z, r}, got.data(), n);
      const int64_t fake_done = k.fake_quantize(x.data(), {s, z, r}, fake.data(), n);
      ASSERT_EQ(done, fake_done);
      ASSERT_EQ(done % 8, 0);
      if (std::string_view(k.isa) != "none") {
        ASSERT_LE(n - done, 15) << k.isa << " leaves more than a tail";
      }
      for (int64_t i = 0; i < done; ++i) {
        want[i] = static_cast<Q>(rt::quantize_value(x[i], s, z, r));
        fake_want[i] = rt::dequantize_value<float>(want[i], s, z);
        ASSERT_EQ(got[i], want[i]) << k.isa << ": x " << x[i] << ", scale " << s << ", zero " << z;
        ASSERT_EQ(std::memcmp(&fake[i], &fake_want[i], sizeof(float)), 0)
            << k.isa << ": x " << x[i] << ", scale " << s << ", zero " << z << ": " << fake[i]
            << " against " << fake_want[i];
      }
    }
}

template <class Q>
void expect_dequantize_exact(const VectorKernels& k,
                             int64_t (*kernel)(const Q*, float, int, float*, int64_t),
                             rt::QuantRange r) {
  std::vector<Q> x;
  for (int v = r.lo; v <= r.hi; ++v) x.push_back(static_cast<Q>(v));
  x.resize(x.size() + 5, static_cast<Q>(r.hi));  // a tail
  for (float s : kScales)
    for (int z : {r.lo, 3, r.hi}) {
      std::vector<float> got(x.size());
      const int64_t done = kernel(x.data(), s, z, got.data(), static_cast<int64_t>(x.size()));
      ASSERT_EQ(done % 8, 0);
      for (int64_t i = 0; i < done; ++i) {
        const float want = rt::dequantize_value<float>(x[i], s, z);
        ASSERT_EQ(std::memcmp(&got[i], &want, sizeof(float)), 0)
            << k.isa << ": level " << int{x[i]} << ", scale " << s << ", zero " << z;
      }
    }
}

TEST(VectorKernels, TheWidestSetThisCpuRunsIsUsed) {
  const std::vector<const VectorKernels*> sets = runnable_vector_kernels();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(&vector_kernels(), sets.front());
  EXPECT_STREQ(sets.back()->isa, "none");
}

TEST(VectorKernels, QuantizeAsTheScalarFormulaBitForBit) {
  for (const VectorKernels* k : runnable_vector_kernels()) {
    SCOPED_TRACE(k->isa);
    expect_quantize_exact<uint8_t>(*k, k->quantize_u8, rt::kU8Range);
    expect_quantize_exact<int8_t>(*k, k->quantize_i8, rt::kI8Range);
  }
}

TEST(VectorKernels, DequantizeAsTheScalarFormulaBitForBit) {
  for (const VectorKernels* k : runnable_vector_kernels()) {
    SCOPED_TRACE(k->isa);
    expect_dequantize_exact<uint8_t>(*k, k->dequantize_u8, rt::kU8Range);
    expect_dequantize_exact<int8_t>(*k, k->dequantize_i8, rt::kI8Range);
  }
}

// Within 4 ulp of the scalar erff, and exact where erf is: the zeros, the
// infinities, NaN.
TEST(VectorKernels, ErfWithinFourUlpOfTheStandardLibrary) {
  std::vector<float> x(4099);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -6.f + 12.f * i / x.size();
  const std::vector<float> special = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-30f, -1e30f, 9.f};
  std::copy(special.begin(), special.end(), x.begin() + 40);
  for (const VectorKernels* k : runnable_vector_kernels()) {
    std::vector<float> y(x.size());
    const int64_t done = k->erf(x.data(), y.data(), static_cast<int64_t>(x.size()));
    ASSERT_EQ(done % 8, 0) << k->isa;
    for (int64_t i = 0; i < done; ++i) {
      const float want = std::erf(x[i]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[i])) << k->isa << ": " << x[i];
        continue;
      }
      ASSERT_FLOAT_EQ(y[i], want) << k->isa << ": " << x[i];
      ASSERT_EQ(std::signbit(y[i]), std::signbit(want)) << k->isa << ": " << x[i];
    }
  }
}

}  // namespace
}  // namespace tso::cpu
