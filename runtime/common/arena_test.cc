#include "runtime/common/arena.h"

#include <gtest/gtest.h>

#include <random>

namespace tso::rt {
namespace {

// No two buffers alive at one step share a byte.
void expect_disjoint(const std::vector<Lifetime>& b, const ArenaLayout& l, int64_t alignment) {
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(l.offsets[i] % alignment, 0);
    EXPECT_LE(l.offsets[i] + b[i].bytes, l.peak_bytes);
    for (size_t j = i + 1; j < b.size(); ++j) {
      if (b[i].last < b[j].first || b[j].last < b[i].first) continue;
      if (b[i].bytes == 0 || b[j].bytes == 0) continue;
      const bool apart =
          l.offsets[i] + b[i].bytes <= l.offsets[j] || l.offsets[j] + b[j].bytes <= l.offsets[i];
      EXPECT_TRUE(apart) << "buffers " << i << " and " << j << " overlap";
    }
  }
}

TEST(Arena, AChainReusesMemory) {
  // a -> b -> c -> d: only two neighbours are alive at once.
  std::vector<Lifetime> b = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout l = plan_arena(b, 256);
  expect_disjoint(b, l, 256);
  EXPECT_EQ(l.peak_bytes, 2 * 1024);
  EXPECT_EQ(l.total_bytes, 4 * 1024);
}

TEST(Arena, BuffersAliveTogetherGetDisjointRanges) {
  std::vector<Lifetime> b = {{300, 0, 5}, {300, 0, 5}, {10, 2, 3}};
  ArenaLayout l = plan_arena(b, 256);
  expect_disjoint(b, l, 256);
  EXPECT_EQ(l.peak_bytes, 512 + 512 + 256);
}

TEST(Arena, TheAlignmentIsAParameterWithACacheLineDefault) {
  std::vector<Lifetime> b = {{300, 0, 5}, {300, 0, 5}, {10, 2, 3}};
  ArenaLayout l = plan_arena(b);
  expect_disjoint(b, l, kDefaultArenaAlignment);
  EXPECT_EQ(kDefaultArenaAlignment, 64);
  EXPECT_EQ(l.peak_bytes, 320 + 320 + 64);
  ArenaLayout unaligned = plan_arena(b, 1);
  expect_disjoint(b, unaligned, 1);
  EXPECT_EQ(unaligned.peak_bytes, 300 + 300 + 10);
}

TEST(Arena, AlignUpRoundsToTheNextMultiple) {
  EXPECT_EQ(align_up(0, 256), 0);
  EXPECT_EQ(align_up(1, 256), 256);
  EXPECT_EQ(align_up(256, 256), 256);
  EXPECT_EQ(align_up(257, 64), 320);
}

TEST(Arena, RandomLifetimesNeverOverlapAndNeverExceedTheSum) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Lifetime> b;
    for (int i = 0; i < 60; ++i) {
      int first = rng() % 40;
      b.push_back({int64_t(rng() % 5000), first, first + int(rng() % 8)});
    }
    for (int64_t alignment : {int64_t{1}, int64_t{64}, int64_t{256}}) {
      ArenaLayout l = plan_arena(b, alignment);
      expect_disjoint(b, l, alignment);
      EXPECT_LE(l.peak_bytes, l.total_bytes);
    }
  }
}

TEST(Arena, EmptyPlanHasNoBytes) {
  ArenaLayout l = plan_arena({});
  EXPECT_EQ(l.peak_bytes, 0);
  EXPECT_TRUE(l.offsets.empty());
}

}  // namespace
}  // namespace tso::rt
