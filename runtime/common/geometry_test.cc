#include "runtime/common/geometry.h"

#include <gtest/gtest.h>

namespace tso::rt {
namespace {

Attrs window_attrs(std::vector<int64_t> stride, Padding pad) {
  Attrs a;
  a.set(AttrKey::stride, stride)
      .set(AttrKey::pad, pad)
      .set(AttrKey::dilation, std::vector<int64_t>{1, 1});
  return a;
}

TEST(Window, SamePaddingPutsTheOddElementAtTheEnd) {
  auto w =
      resolve_window(Shape{1, 3, 224, 224}, 2, 2, window_attrs({2, 2}, {Padding::kSame}), false);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ((*w)[0].out, 112);
  EXPECT_EQ((*w)[0].pad_lo, 0);
  EXPECT_EQ((*w)[0].pad_hi, 0);
  auto w3 = resolve_window(Shape{1, 3, 8, 8}, 2, 2, window_attrs({1, 1}, {Padding::kSame}), false);
  ASSERT_TRUE(w3.ok());
  EXPECT_EQ((*w3)[0].pad_lo, 0);
  EXPECT_EQ((*w3)[0].pad_hi, 1);
  EXPECT_FALSE((*w3)[0].symmetric());
}

TEST(Window, CeilModeDropsAWindowStartingInTrailingPadding) {
  Padding p{Padding::kExplicit, {1, 1, 1, 1}};
  auto w = resolve_window(Shape{1, 1, 5, 5}, 2, 2, window_attrs({2, 2}, p), true);
  ASSERT_TRUE(w.ok());
  // room = 5 + 2 - 2 = 5: ceil(5/2) + 1 = 4, but window 3 starts at 6 - 1 = 5 >= in + pad_lo.
  EXPECT_EQ((*w)[0].out, 3);
  auto floor = resolve_window(Shape{1, 1, 5, 5}, 2, 2, window_attrs({2, 2}, p), false);
  EXPECT_EQ((*floor)[0].out, 3);
  auto odd = resolve_window(Shape{1, 1, 6, 6}, 3, 3, window_attrs({2, 2}, {Padding::kValid}), true);
  EXPECT_EQ((*odd)[0].out, 3);  // ceil((6-3)/2) + 1
}

TEST(Window, TooLargeKernelIsAnError) {
  auto w = resolve_window(Shape{1, 1, 2, 2}, 3, 3, window_attrs({1, 1}, {Padding::kValid}), false);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "window of 3 is larger than the padded input of 2");
}

TEST(Matmul, LeftBatchAgainstAMatrixFoldsIntoRows) {
  auto g = matmul_geometry(Shape{2, 128, 768}, Shape{768, 3072});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->m, 256);
  EXPECT_EQ(g->n, 3072);
  EXPECT_EQ(g->k, 768);
  EXPECT_EQ(g->batch, 1);
}

TEST(Matmul, BatchedAndSharedOperands) {
  auto g = matmul_geometry(Shape{1, 12, 128, 64}, Shape{1, 12, 64, 128});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->batch, 12);
  EXPECT_EQ(g->stride_a, 128 * 64);
  EXPECT_EQ(g->stride_b, 64 * 128);
  EXPECT_FALSE(g->expand_a || g->expand_b);
  auto shared = matmul_geometry(Shape{4, 5}, Shape{3, 5, 6});
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->batch, 3);
  EXPECT_EQ(shared->stride_a, 0);
  EXPECT_EQ(shared->stride_b, 30);
}

TEST(Matmul, CrossBroadcastNeedsExpansionAndVectorsDropTheirUnitDimension) {
  auto g = matmul_geometry(Shape{2, 1, 3, 4}, Shape{1, 5, 4, 6});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->batch, 10);
  EXPECT_TRUE(g->expand_a);
  EXPECT_TRUE(g->expand_b);
  EXPECT_EQ(g->batch_shape, (Shape{2, 5}));
  auto v = matmul_geometry(Shape{4}, Shape{4, 7});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->m, 1);
  EXPECT_EQ(v->n, 7);
  EXPECT_FALSE(matmul_geometry(Shape{3, 4}, Shape{5, 6}).ok());
  EXPECT_FALSE(matmul_geometry(Shape{2, 3, 4}, Shape{3, 4, 6}).ok());
}

TEST(Strides, BroadcastStridesAreZeroWhereADimensionStretches) {
  EXPECT_EQ(strides_of(Shape{2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(broadcast_strides(Shape{3, 1}, Shape{2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(broadcast_strides(Shape{}, Shape{2, 2}), (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace tso::rt
