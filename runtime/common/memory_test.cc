#include "runtime/common/memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/common/arena.h"

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

TEST(Memory, CheckFitsNamesTheHolder) {
  EXPECT_TRUE(check_fits(100, 100, "x", "the GPU").ok());
  Status s = check_fits(int64_t{3} << 30, int64_t{1} << 30, "the arena", "the GPU");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "needs 3.0 GiB for the arena but the GPU has 1.0 GiB available");
}

TEST(Memory, CheckedTotalBoundsEveryBufferAligned) {
  const std::vector<int64_t> sizes = {24, 24, 48};
  Expected<int64_t> t = checked_total(sizes, 64, "plan");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, 24 + 24 + 48 + 3 * 63);
  EXPECT_GE(*t, align_up(24, 64) * 2 + align_up(48, 64));
}

TEST(Memory, CheckedTotalThatOverflowsIsAnErrorNamingThePlan) {
  // Each buffer fits (the inputs 2^61 bytes, their concat 2^62), all of them
  // together do not.
  const int64_t half = int64_t{1} << 61;
  const std::vector<int64_t> sizes = {half, half, 2 * half};
  Expected<int64_t> t = checked_total(sizes, 64, "the CPU plan");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "the CPU plan: its buffers together exceed 2^63 bytes");
  EXPECT_TRUE(checked_total(std::vector<int64_t>{half, half}, 1, "two").ok());
  const std::vector<int64_t> edge = {std::numeric_limits<int64_t>::max()};
  EXPECT_TRUE(checked_total(edge, 1, "one").ok());
  EXPECT_FALSE(checked_total(edge, 2, "one, aligned").ok()) << "rounding up would overflow";
}

TEST(Memory, FormatBytesUsesBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(int64_t{113} << 20), "113.0 MiB");
  EXPECT_EQ(format_bytes(int64_t{40} << 40), "40.0 TiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<int64_t>::max()), "8.0 EiB");
}

TEST(Memory, AlignedBuffersStartAtTheirAlignmentAndHoldAnEmptyRequest) {
  for (int64_t alignment : {64, 4096})
    for (int64_t bytes : {0, 1, 100, 5000}) {
      const AlignedBuffer<std::byte> b = aligned_buffer(bytes, alignment);
      ASSERT_NE(b, nullptr) << bytes;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % alignment, 0u) << bytes << " " << alignment;
      b[std::max<int64_t>(bytes, 1) - 1] = std::byte{1};  // its last byte is ours
    }
}

}  // namespace
}  // namespace tso::rt
