#include "runtime/cuda/algo_cache.h"

#include <gtest/gtest.h>

namespace tso::cuda {
namespace {

ConvSignature sig(int64_t channels) {
  ConvSignature s;
  s.x = Shape{1, channels, 56, 56};
  s.w = Shape{channels, channels, 3, 3};
  s.y = s.x;
  s.pad_h = s.pad_w = 1;
  s.tf32 = true;
  return s;
}

TEST(ConvAlgoCache, MeasuresOncePerSignatureAndPicksTheFastestThatFits) {
  ConvAlgoCache cache(1000);
  int calls = 0;
  auto measure = [&](const ConvSignature&) -> Expected<std::vector<ConvAlgoResult>> {
    ++calls;
    return std::vector<ConvAlgoResult>{{0, 0, 0.30f}, {1, 5000, 0.05f}, {6, 800, 0.10f}, {2, 0, 0.2f}};
  };
  Expected<ConvAlgoResult> a = cache.choose(sig(64), measure);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->algo, 6) << "algo 1 is faster but needs more workspace than the limit";
  Expected<ConvAlgoResult> again = cache.choose(sig(64), measure);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->algo, 6);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(cache.choose(sig(128), measure).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.measurements(), 2);
}

TEST(ConvAlgoCache, TF32AndFusionAreDifferentSignatures) {
  ConvSignature a = sig(8), b = sig(8), c = sig(8);
  b.tf32 = false;
  c.fused = true;
  EXPECT_NE(a.key(), b.key());
  EXPECT_NE(a.key(), c.key());
  EXPECT_EQ(a.key(),
            "x[1,8,56,56] w[8,8,3,3] y[1,8,56,56] pad=1,1 stride=1,1 dil=1,1 groups=1 tf32=1 "
            "fused=0");
}

TEST(ConvAlgoCache, NothingFittingOrAFailedMeasurementIsAnErrorAndNotCached) {
  ConvAlgoCache cache(0);
  int calls = 0;
  auto big = [&](const ConvSignature&) -> Expected<std::vector<ConvAlgoResult>> {
    ++calls;
    return std::vector<ConvAlgoResult>{{1, 4096, 0.1f}};
  };
  Expected<ConvAlgoResult> r = cache.choose(sig(4), big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("fits the workspace limit of 0 bytes"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(cache.choose(sig(4), big).ok());
  EXPECT_EQ(calls, 2);
  auto failing = [](const ConvSignature&) -> Expected<std::vector<ConvAlgoResult>> {
    return Error{"cudnnFindConvolutionForwardAlgorithm: CUDNN_STATUS_BAD_PARAM"};
  };
  Expected<ConvAlgoResult> f = cache.choose(sig(4), failing);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "conv " + sig(4).key() +
                                   ": cudnnFindConvolutionForwardAlgorithm: CUDNN_STATUS_BAD_PARAM");
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tso::cuda
