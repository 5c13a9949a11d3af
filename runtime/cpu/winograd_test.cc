// WinogradConv against a naive direct convolution in double: odd and even
// sizes, partial tiles, channels that are not multiples of the vector width,
// asymmetric padding, batches, and each epilogue kind, for both tile sizes.
#include "runtime/cpu/winograd.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace tso::cpu {
namespace {

constexpr double kTolerance = 1e-4;  // max|a-b| / max|b|

struct Options {
  int tile;
  WinogradSchedule schedule;
};

std::string describe(const WinogradShape& s, Options options) {
  return "n=" + std::to_string(s.n) + " c=" + std::to_string(s.c) + " h=" + std::to_string(s.h) +
         " w=" + std::to_string(s.w) + " k=" + std::to_string(s.k) +
         " pads(t,l,b,r)=" + std::to_string(s.pad_top) + "," + std::to_string(s.pad_left) + "," +
         std::to_string(s.pad_bottom) + "," + std::to_string(s.pad_right) +
         " tile=" + std::to_string(options.tile) +
         (options.schedule == WinogradSchedule::kFused ? " fused" : " batched matmul");
}

// NHWC src, OIHW weights, NHWC dst, then the epilogue, all in double.
std::vector<double> direct_conv(const WinogradShape& s, const std::vector<float>& src,
                                const std::vector<float>& w,
                                const std::vector<EpilogueOp>& epilogue) {
  const int64_t oh = s.oh(), ow = s.ow();
  std::vector<double> dst(size_t(s.n * oh * ow * s.k));
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t k = 0; k < s.k; ++k) {
          double acc = 0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t iy = y + i - s.pad_top, ix = x + j - s.pad_left;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              for (int64_t c = 0; c < s.c; ++c)
                acc += double(src[((b * s.h + iy) * s.w + ix) * s.c + c]) *
                       w[((k * s.c + c) * 3 + i) * 3 + j];
            }
          const int64_t at = ((b * oh + y) * ow + x) * s.k + k;
          for (const EpilogueOp& op : epilogue) {
            switch (op.kind) {
              case EpilogueOp::kAddChannel:
                acc += op.data[k];
                break;
              case EpilogueOp::kMulChannel:
                acc *= op.data[k];
                break;
              case EpilogueOp::kAddTensor:
                acc += op.data[at];
                break;
              case EpilogueOp::kRelu:
                acc = std::max(acc, 0.0);
                break;
              case EpilogueOp::kClip:
                acc = std::min(std::max(acc, double(op.lo)), double(op.hi));
            }
          }
          dst[size_t(at)] = acc;
        }
  return dst;
}

// Runs WinogradConv and returns max|a-b| / max|b| against direct_conv.
// `epilogue_kinds` picks the epilogue; data for it is drawn from `rng`.
double relative_error(const WinogradShape& s, Options options,
                      const std::vector<EpilogueOp::Kind>& epilogue_kinds, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const float bound = 1.f / std::sqrt(float(9 * s.c));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::vector<float> src(size_t(s.n * s.h * s.w * s.c)), w(size_t(s.k * s.c * 9));
  for (float& x : src) x = normal(rng);
  for (float& x : w) x = uniform(rng);
  const size_t out_size = size_t(s.n * s.oh() * s.ow() * s.k);
  std::vector<float> channel_add(size_t(s.k)), channel_mul(size_t(s.k)), residual(out_size);
  for (float& x : channel_add) x = normal(rng);
  for (float& x : channel_mul) x = 0.5f + std::abs(normal(rng));
  for (float& x : residual) x = normal(rng);
  std::vector<EpilogueOp> epilogue;
  for (EpilogueOp::Kind kind : epilogue_kinds) {
    EpilogueOp op{kind};
    if (kind == EpilogueOp::kAddChannel) op.data = channel_add.data();
    if (kind == EpilogueOp::kMulChannel) op.data = channel_mul.data();
    if (kind == EpilogueOp::kAddTensor) op.data = residual.data();
    if (kind == EpilogueOp::kClip) op.lo = -0.5f, op.hi = 0.75f;
    epilogue.push_back(op);
  }

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  WinogradConv conv(s, engine, options.tile, options.schedule);
  std::vector<float> u(size_t(conv.weights_floats()));
  conv.transform_weights(w.data(), u.data());
  std::vector<std::byte> scratch(size_t(conv.scratch_bytes()));
  std::vector<float> dst(out_size, NAN);
  conv.run(src.data(), u.data(), dst.data(), scratch.data(), epilogue, stream);

  const std::vector<double> want = direct_conv(s, src, w, epilogue);
  double max_diff = 0, max_want = 0;
  for (size_t i = 0; i < out_size; ++i) {
    const double diff = std::abs(dst[i] - want[i]);
    max_diff = std::isnan(diff) ? INFINITY : std::max(max_diff, diff);
    max_want = std::max(max_want, std::abs(want[i]));
  }
  return max_diff / std::max(max_want, 1e-30);
}

struct Case {
  WinogradShape shape;
  std::vector<EpilogueOp::Kind> epilogue;
};

std::vector<Case> cases() {
  using E = EpilogueOp;
  return {
      {{1, 8, 8, 8, 8, 1, 1, 1, 1}, {}},
      {{1, 3, 5, 7, 5, 0, 0, 0, 0}, {}},     // odd, C and K below 8
      {{1, 13, 9, 11, 19, 1, 1, 1, 1}, {}},  // partial tiles, channel tails
      {{2, 17, 10, 6, 9, 0, 1, 2, 0}, {}},   // asymmetric pads, batch
      {{1, 16, 3, 3, 16, 0, 0, 0, 0}, {}},   // a 1x1 output
      {{1, 24, 12, 12, 40, 2, 0, 1, 2}, {}},
      {{2, 64, 14, 14, 64, 1, 1, 1, 1}, {}},
      {{1, 256, 7, 7, 128, 1, 1, 1, 1}, {}},
      {{2, 5, 100, 90, 7, 1, 0, 1, 2},
       {EpilogueOp::kAddTensor, EpilogueOp::kRelu}},  // many blocks  // long sums
      {{1, 10, 9, 13, 12, 1, 1, 1, 1}, {E::kAddChannel}},
      {{1, 10, 9, 13, 12, 1, 1, 1, 1}, {E::kMulChannel}},
      {{2, 10, 9, 13, 12, 1, 1, 1, 1}, {E::kAddTensor}},
      {{1, 10, 9, 13, 12, 1, 1, 1, 1}, {E::kRelu}},
      {{1, 10, 9, 13, 12, 0, 1, 0, 1}, {E::kClip}},
      {{2, 16, 11, 10, 24, 1, 1, 1, 1},  // batchnorm, residual, relu
       {E::kMulChannel, E::kAddChannel, E::kAddTensor, E::kRelu}},
  };
}

class WinogradTest : public testing::TestWithParam<std::tuple<int, WinogradSchedule>> {};

TEST_P(WinogradTest, MatchesDirectConvolution) {
  const Options options{std::get<0>(GetParam()), std::get<1>(GetParam())};
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    ASSERT_TRUE(WinogradConv::supports(c.shape)) << describe(c.shape, options);
    const double err = relative_error(c.shape, options, c.epilogue, seed);
    EXPECT_LE(err, kTolerance) << describe(c.shape, options) << " epilogue ops "
                               << c.epilogue.size() << " seed " << seed;
    ++seed;
  }
}

INSTANTIATE_TEST_SUITE_P(TilesAndSchedules, WinogradTest,
                         testing::Combine(testing::Values(2, 4),
                                          testing::Values(WinogradSchedule::kFused,
                                                          WinogradSchedule::kBatchedMatmul)));

TEST(WinogradConv, LargeSumIsAccurate) {
  // The largest sum of the benchmark shapes (C = 512), where F(4x4)'s error is
  // largest; 28x28 gives the fused schedule several blocks.
  for (int tile : {2, 4}) {
    for (auto schedule : {WinogradSchedule::kFused, WinogradSchedule::kBatchedMatmul}) {
      const WinogradShape s{1, 512, 28, 28, 40, 1, 1, 1, 1};
      const double err = relative_error(s, {tile, schedule}, {}, 99);
      EXPECT_LE(err, kTolerance) << describe(s, {tile, schedule});
      std::printf("%s: relative error %.3g\n", describe(s, {tile, schedule}).c_str(), err);
    }
  }
}

TEST(WinogradConv, ResultsDoNotDependOnThreads) {
  // Blocks and channel chunks change with the thread count; each output's sum
  // runs in the same order regardless.
  // 56 tiles: 2 or 3 blocks; 4 tiles: 1, 2 or 3 chunks of output channels.
  for (const WinogradShape& s :
       {WinogradShape{1, 24, 30, 27, 40, 1, 1, 1, 1}, WinogradShape{1, 24, 8, 8, 40, 1, 1, 1, 1}}) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> src(size_t(s.n * s.h * s.w * s.c)), w(size_t(s.k * s.c * 9));
    for (float& x : src) x = normal(rng);
    for (float& x : w) x = normal(rng);
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    const int threads = omp_get_max_threads();
    std::vector<std::vector<float>> outs;
    for (int t : {1, 2, 3}) {
      omp_set_num_threads(t);
      WinogradConv conv(s, engine, 4, WinogradSchedule::kFused);
      std::vector<float> u(size_t(conv.weights_floats()));
      conv.transform_weights(w.data(), u.data());
      std::vector<std::byte> scratch(size_t(conv.scratch_bytes()));
      outs.emplace_back(size_t(s.n * s.oh() * s.ow() * s.k));
      conv.run(src.data(), u.data(), outs.back().data(), scratch.data(), {}, stream);
    }
    omp_set_num_threads(threads);
    EXPECT_EQ(outs[0], outs[1]) << "h " << s.h;
    EXPECT_EQ(outs[0], outs[2]) << "h " << s.h;
  }
}

TEST(WinogradConv, RejectsBadShapes) {
  EXPECT_FALSE(WinogradConv::supports({1, 8, 2, 2, 8, 0, 0, 0, 0}));  // empty output
  EXPECT_FALSE(WinogradConv::supports({1, 8, 8, 8, 8, -1, 0, 0, 0}));
  EXPECT_FALSE(WinogradConv::supports({0, 8, 8, 8, 8, 1, 1, 1, 1}));
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  EXPECT_THROW(WinogradConv({1, 8, 8, 8, 8, 1, 1, 1, 1}, engine, 3), dnnl::error);
}

}  // namespace
}  // namespace tso::cpu
