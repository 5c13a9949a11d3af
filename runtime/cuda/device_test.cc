#include "runtime/cuda/device.h"

#include <gtest/gtest.h>

#include "runtime/cuda/axpy.h"

namespace tso::cuda {
namespace {

TEST(GpuStatus, IsSelfConsistent) {
  GpuStatus s = gpu_status();
  EXPECT_GT(s.runtime_version, 0) << "the CUDA runtime is linked in and reports its version";
  if (s.usable) {
    EXPECT_TRUE(s.reason.empty()) << s.reason;
    EXPECT_GE(s.device_count, 1);
    EXPECT_FALSE(s.name.empty());
    EXPECT_GT(s.total_memory, 0);
    EXPECT_GE(s.compute_major, kMinComputeMajor);
    EXPECT_EQ(describe(s).find("no usable GPU"), std::string::npos);
  } else {
    EXPECT_FALSE(s.reason.empty()) << "an unusable GPU always says why";
    EXPECT_EQ(describe(s), "no usable GPU: " + s.reason);
  }
}

TEST(GpuStatus, DescribesAUsableDevice) {
  GpuStatus s;
  s.usable = true;
  s.name = "Test GPU";
  s.total_memory = int64_t{80} << 30;
  s.compute_major = 9;
  s.compute_minor = 0;
  EXPECT_EQ(describe(s), "Test GPU, 80.0 GiB, sm_90");
}

TEST(DeviceBuffer, AllocationSucceedsExactlyWhenAGpuIsUsable) {
  GpuStatus s = gpu_status();
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(1024);
  if (s.usable) {
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->bytes(), 1024u);
    EXPECT_NE(b->data(), nullptr);
  } else {
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().message.find("cudaMalloc"), std::string::npos) << b.error().message;
  }
}

TEST(DeviceBuffer, EmptyBufferRejectsOversizedCopies) {
  DeviceBuffer empty;
  EXPECT_EQ(empty.bytes(), 0u);
  float host[4] = {};
  Status up = empty.upload(host, sizeof host);
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.error().message, "upload of 16 bytes into a buffer of 0");
  Status down = empty.download(host, sizeof host);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().message, "download of 16 bytes from a buffer of 0");
  EXPECT_TRUE(empty.upload(host, 0).ok());
}

TEST(Axpy, RejectsBuffersShorterThanN) {
  DeviceBuffer x, y;
  Status st = axpy(2.0f, x, y, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "axpy: n=4 needs 16 bytes, but x holds 0 and y 0");
  EXPECT_FALSE(axpy(2.0f, x, y, -1).ok());
  EXPECT_TRUE(axpy(2.0f, x, y, 0).ok()) << "an empty axpy launches nothing";
}

}  // namespace
}  // namespace tso::cuda
