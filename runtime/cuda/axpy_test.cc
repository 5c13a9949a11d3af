// GPU test: runs the axpy kernel on the device and compares with the host.
#include "runtime/cuda/axpy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/cuda/device.h"

namespace tso::cuda {
namespace {

class AxpyOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    GpuStatus s = gpu_status();
    if (!s.usable) GTEST_SKIP() << describe(s);
    std::printf("GPU: %s\n", describe(s).c_str());
  }
};

// Uploads x and y, runs axpy on the device, and returns the downloaded y.
std::vector<float> run_axpy(float a, const std::vector<float>& x, std::vector<float> y) {
  const size_t bytes = x.size() * sizeof(float);
  Expected<DeviceBuffer> dx = DeviceBuffer::allocate(bytes);
  Expected<DeviceBuffer> dy = DeviceBuffer::allocate(bytes);
  EXPECT_TRUE(dx.ok() && dy.ok());
  if (!dx.ok() || !dy.ok()) return {};
  EXPECT_TRUE(dx->upload(x.data(), bytes).ok());
  EXPECT_TRUE(dy->upload(y.data(), bytes).ok());
  Status st = axpy(a, *dx, *dy, static_cast<int64_t>(x.size()));
  EXPECT_TRUE(st.ok()) << st.error().message;
  EXPECT_TRUE(dy->download(y.data(), bytes).ok());
  return y;
}

TEST_F(AxpyOnGpu, MatchesHostFmaBitForBit) {
  // Not a multiple of the block size, and more elements than one grid covers,
  // so both the tail guard and the grid-stride loop are exercised.
  const size_t n = 4096 * 256 * 3 + 17;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::sin(static_cast<float>(i));
    y[i] = std::cos(static_cast<float>(i)) * 3.0f;
  }
  const float a = 2.5f;
  std::vector<float> got = run_axpy(a, x, y);
  ASSERT_EQ(got.size(), n);
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    float want = std::fma(a, x[i], y[i]);
    if (got[i] != want && ++mismatches <= 5)
      ADD_FAILURE() << "y[" << i << "] = " << got[i] << ", host says " << want;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST_F(AxpyOnGpu, LeavesElementsPastNUntouched) {
  std::vector<float> x(64, 1.0f), y(64, 5.0f);
  const size_t bytes = x.size() * sizeof(float);
  Expected<DeviceBuffer> dx = DeviceBuffer::allocate(bytes);
  Expected<DeviceBuffer> dy = DeviceBuffer::allocate(bytes);
  ASSERT_TRUE(dx.ok() && dy.ok());
  ASSERT_TRUE(dx->upload(x.data(), bytes).ok());
  ASSERT_TRUE(dy->upload(y.data(), bytes).ok());
  ASSERT_TRUE(axpy(-1.0f, *dx, *dy, 10).ok());
  ASSERT_TRUE(dy->download(y.data(), bytes).ok());
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(y[i], i < 10 ? 4.0f : 5.0f) << "at " << i;
}

TEST(GpuStatusOnGpu, ReportsAHopperClassDevice) {
  GpuStatus s = gpu_status();
  if (!s.usable) GTEST_SKIP() << describe(s);
  EXPECT_GE(s.compute_major, kMinComputeMajor);
  EXPECT_GT(s.total_memory, int64_t{1} << 30);
}

}  // namespace
}  // namespace tso::cuda
