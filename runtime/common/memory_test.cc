#include "runtime/common/memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <limits>

namespace tso::rt {
namespace {

TEST(Memory, AvailableIsPositiveAndAtMostThePhysicalMemory) {
  const int64_t available = available_memory_bytes();
  EXPECT_GT(available, 0);
  EXPECT_LE(available, int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGESIZE));
}

TEST(Memory, AllocationsThatFitPassAndOthersNameWhatAndBothSizes) {
  EXPECT_TRUE(check_allocation(0, "nothing").ok());
  EXPECT_TRUE(check_allocation(4096, "a page").ok());
  const int64_t huge = int64_t{40} << 40;  // 40 TiB: more than any machine here has
  Status s = check_allocation(huge, "the arena");
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_EQ(m.rfind("needs 40.0 TiB for the arena but the machine has ", 0), 0u) << m;
  EXPECT_EQ(m.substr(m.size() - 10), " available") << m;
}

TEST(Memory, CheckedBytesIsElementsTimesTheDtypeSize) {
  Expected<int64_t> f32 = checked_bytes({DType::kF32, Shape{2, 3, 4}}, "x");
  ASSERT_TRUE(f32.ok()) << f32.error().message;
  EXPECT_EQ(*f32, 96);
  Expected<int64_t> scalar = checked_bytes({DType::kI64, Shape{}}, "s");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(*scalar, 8);
  Expected<int64_t> empty = checked_bytes({DType::kF32, Shape{0, 5}}, "e");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, 0);
}

TEST(Memory, CheckedBytesOverflowIsAnErrorNamingTheTensor) {
  // 2^31 * 2^31 elements fit in int64 but times 4 bytes do not.
  const TensorType big{DType::kF32, Shape{int64_t{1} << 31, int64_t{1} << 31}};
  Expected<int64_t> b = checked_bytes(big, "%huge");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            "tensor %huge: f32[2147483648,2147483648] does not fit in memory: "
            "its size in bytes overflows int64");
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(checked_bytes({DType::kBool, Shape{max, 2}}, "n").ok());
  // A zero dimension makes an empty tensor, whatever the others are.
  Expected<int64_t> zero = checked_bytes({DType::kF32, Shape{max, 2, 0}}, "z");
  ASSERT_TRUE(zero.ok()) << zero.error().message;
  EXPECT_EQ(*zero, 0);
}

TEST(Memory, FormatBytesUsesBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(int64_t{113} << 20), "113.0 MiB");
  EXPECT_EQ(format_bytes(int64_t{40} << 40), "40.0 TiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<int64_t>::max()), "8.0 EiB");
}

}  // namespace
}  // namespace tso::rt
