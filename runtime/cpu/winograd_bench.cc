// winograd_bench: oneDNN's direct convolution (src/dst NHWC, weights in the
// layout it picks) beside WinogradConv F(4x4) and F(2x2) on the 3x3 convs of
// ResNet-50, SqueezeNet 1.1, Inception-v3 and CSRNet at batch 1 (CSRNet's
// dilated ones also as interleaved: four 14x14 sub-images in the batch). Per shape, rounds
// alternate direct / F4 fused / F4 matmul / F2 fused / F2 matmul; it prints
// direct's GFLOP/s, then the minimum (median) ms per run of each. With
// `cold` 1, each implementation's weights (oneDNN's reordered ones, the
// transformed ones) are flushed from every cache level before each timed run,
// as a model whose weights exceed the last-level cache reads them: F(4x4)
// reads 4 times the bytes of the direct kernel's weights, F(2x2) 1.8 times.
//   build/runtime/cpu/winograd_bench [rounds=7] [runs per round=5] [cold=0]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/cache_residency.h"
#include "runtime/cpu/winograd.h"

namespace {

using dnnl::memory;
using tso::cpu::WinogradConv;
using tso::cpu::WinogradShape;

struct Bench {
  const char* name;
  WinogradShape s;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Timings {
  std::vector<double> ms;
  double min() const { return *std::min_element(ms.begin(), ms.end()); }
  double median() {
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool cold = argc > 3 && std::atoi(argv[3]) != 0;
  const std::vector<Bench> benches = {
      {"resnet 64@56", {1, 64, 56, 56, 64, 1, 1, 1, 1}},
      {"resnet 128@28", {1, 128, 28, 28, 128, 1, 1, 1, 1}},
      {"resnet 256@14", {1, 256, 14, 14, 256, 1, 1, 1, 1}},
      {"resnet 512@7", {1, 512, 7, 7, 512, 1, 1, 1, 1}},
      {"squeeze 16>64@55", {1, 16, 55, 55, 64, 1, 1, 1, 1}},
      {"squeeze 32>128@27", {1, 32, 27, 27, 128, 1, 1, 1, 1}},
      {"squeeze 48>192@13", {1, 48, 13, 13, 192, 1, 1, 1, 1}},
      {"squeeze 64>256@13", {1, 64, 13, 13, 256, 1, 1, 1, 1}},
      {"incep 32>32@147 p0", {1, 32, 147, 147, 32, 0, 0, 0, 0}},
      {"incep 32>64@147", {1, 32, 147, 147, 64, 1, 1, 1, 1}},
      {"incep 64>96@35", {1, 64, 35, 35, 96, 1, 1, 1, 1}},
      {"incep 96>96@35", {1, 96, 35, 35, 96, 1, 1, 1, 1}},
      {"incep 384>384@8", {1, 384, 8, 8, 384, 1, 1, 1, 1}},
      {"csrnet 256>512@28", {1, 256, 28, 28, 512, 1, 1, 1, 1}},
      {"csrnet 512@28", {1, 512, 28, 28, 512, 1, 1, 1, 1}},
      {"csrnet 512@14 b4", {4, 512, 14, 14, 512, 1, 1, 1, 1}},
      {"csrnet 512>256@14 b4", {4, 512, 14, 14, 256, 1, 1, 1, 1}},
  };
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::printf("threads %d, %d rounds x %d runs, weights %s; ms per conv, min (median)\n",
              omp_get_max_threads(), rounds, runs, cold ? "flushed before each run" : "warm");
  std::printf("%-19s %5s %-15s %-15s %-15s %-15s %-15s %s\n", "shape", "GF/s", " direct",
              " F4 fused", " F4 matmul", " F2 fused", " F2 matmul", "direct/best");
  for (const Bench& b : benches) {
    const WinogradShape& s = b.s;
    std::vector<float> src(size_t(s.n * s.h * s.w * s.c)), w(size_t(s.k * s.c * 9)),
        dst(size_t(s.n * s.oh() * s.ow() * s.k));
    for (float& x : src) x = normal(rng);
    for (float& x : w) x = normal(rng) * 0.05f;

    // oneDNN direct
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    memory::desc src_md({s.n, s.c, s.h, s.w}, f32, tag::nhwc);
    memory::desc dst_md({s.n, s.k, s.oh(), s.ow()}, f32, tag::nhwc);
    memory::desc wany({s.k, s.c, 3, 3}, f32, tag::any);
    dnnl::convolution_forward::primitive_desc cpd(
        engine, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
        wany, dst_md, {1, 1}, {s.pad_top, s.pad_left}, {s.pad_bottom, s.pad_right});
    dnnl::convolution_forward conv(cpd);
    memory w_plain({{s.k, s.c, 3, 3}, f32, tag::oihw}, engine, w.data());
    memory w_conv(cpd.weights_desc(), engine);
    dnnl::reorder(w_plain, w_conv).execute(stream, w_plain, w_conv);
    memory src_m(src_md, engine, src.data()), dst_m(dst_md, engine, dst.data());
    auto direct = [&] {
      conv.execute(stream,
                   {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_conv}, {DNNL_ARG_DST, dst_m}});
      stream.wait();
    };

    // Winograd: F(4x4) and F(2x2), each fused and as a batched matmul.
    using enum tso::cpu::WinogradSchedule;
    const std::pair<int, tso::cpu::WinogradSchedule> kConfigs[] = {
        {4, kFused}, {4, kBatchedMatmul}, {2, kFused}, {2, kBatchedMatmul}};
    std::vector<WinogradConv> convs;
    std::vector<std::vector<float>> us;
    int64_t scratch_size = 0;
    for (auto [tile, schedule] : kConfigs) {
      convs.emplace_back(s, engine, tile, schedule);
      us.emplace_back(size_t(convs.back().weights_floats()));
      convs.back().transform_weights(w.data(), us.back().data());
      scratch_size = std::max(scratch_size, convs.back().scratch_bytes());
    }
    std::vector<std::byte> scratch(static_cast<size_t>(scratch_size));
    std::vector<std::function<void()>> configs = {direct};
    for (size_t i = 0; i < convs.size(); ++i)
      configs.push_back([&, i] {
        convs[i].run(src.data(), us[i].data(), dst.data(), scratch.data(), {}, stream);
      });
    // Each configuration's weights, for `cold`.
    std::vector<std::pair<const void*, int64_t>> weights = {
        {w_conv.get_data_handle(), static_cast<int64_t>(cpd.weights_desc().get_size())}};
    for (const std::vector<float>& u : us)
      weights.emplace_back(u.data(), static_cast<int64_t>(u.size() * sizeof(float)));

    std::vector<Timings> t(configs.size());
    for (int r = 0; r < 3; ++r)  // warm up
      for (auto& f : configs) f();
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < configs.size(); ++i)
        for (int k = 0; k < runs; ++k) {
          if (cold) {
            tso::cpu::flush_from_caches(weights[i].first, weights[i].second);
            _mm_mfence();
          }
          const double t0 = now_ms();
          configs[i]();
          t[i].ms.push_back(now_ms() - t0);
        }
    const double flops = 2.0 * s.n * s.oh() * s.ow() * s.k * s.c * 9;
    double best = 1e30;
    std::printf("%-19s %5.0f", b.name, flops / t[0].min() * 1e-6);
    for (size_t i = 0; i < t.size(); ++i) {
      if (i > 0) best = std::min(best, t[i].min());
      std::printf(" %6.3f (%6.3f)", t[i].min(), t[i].median());
    }
    std::printf(" %5.2fx\n", t[0].min() / best);
    std::fflush(stdout);
  }
  return 0;
}
