#include "runtime/cpu/cache_residency.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace tso::cpu {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Where the sums of the reads go, so that the compiler keeps the reads.
volatile uint32_t g_sink = 0;

int thread_count(int threads) { return threads > 0 ? threads : omp_get_num_procs(); }

// The L2 of cpu0 from sysfs ("2048K"), 2 MB where it cannot be read.
int64_t l2_bytes() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index2/size");
  std::string text;
  if (!(in >> text) || text.empty()) return 2 * kMiB;
  const char unit = text.back();
  const int64_t n = std::atoll(text.c_str());
  if (n <= 0) return 2 * kMiB;
  return unit == 'K' ? n * 1024 : unit == 'M' ? n * kMiB : n;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint32_t[], FreeDeleter>;

// `bytes` of page-aligned memory, touched by the threads that will read it.
Buffer touched(int64_t bytes, int threads) {
  Buffer b(static_cast<uint32_t*>(std::aligned_alloc(4096, bytes)));
  const int64_t n = bytes / 4;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) b[i] = static_cast<uint32_t>(i);
  return b;
}

// Seconds for `threads` threads to read the first `bytes` of `b` once.
double read_seconds(const uint32_t* b, int64_t bytes, int threads, uint32_t* sink) {
  const int64_t n = bytes / 4;
  uint32_t sum = 0;
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += b[i];
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *sink += sum;
  return s;
}

}  // namespace

int64_t cached_capacity_bytes(int threads) {
  const int t = thread_count(threads);
  constexpr int64_t kSizesMiB[] = {8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256};
  const Buffer b = touched(kSizesMiB[std::size(kSizesMiB) - 1] * kMiB, t);
  uint32_t sink = 0;
  double reference = 0;  // bytes per second at 8 MB
  int64_t capacity = kSizesMiB[0] * kMiB;
  for (int64_t mib : kSizesMiB) {
    const int64_t bytes = mib * kMiB;
    read_seconds(b.get(), bytes, t, &sink);  // into the caches
    const double best =
        std::min(read_seconds(b.get(), bytes, t, &sink), read_seconds(b.get(), bytes, t, &sink));
    const double rate = static_cast<double>(bytes) / best;
    if (reference == 0) reference = rate;
    if (rate < 0.6 * reference) break;
    capacity = bytes;
  }
  g_sink = g_sink + sink;
  return capacity;
}

bool weights_stay_cached(int64_t weight_bytes, int64_t capacity) {
  return 4 * weight_bytes <= 3 * capacity;
}

void evict_private_caches(int threads) {
  const int t = thread_count(threads);
  static const int64_t per_thread = 2 * l2_bytes();
  // One buffer per thread, written by that thread once (an untouched page
  // reads as the one zero page, which evicts nothing).
  static std::vector<Buffer> scratch;
  if (static_cast<int>(scratch.size()) != t) {
    scratch.clear();
    for (int i = 0; i < t; ++i) scratch.push_back(touched(per_thread, 1));
  }
  uint32_t sum = 0;
#pragma omp parallel num_threads(t) reduction(+ : sum)
  {
    const uint32_t* p = scratch[omp_get_thread_num()].get();
    for (int64_t i = 0; i < per_thread / 4; i += 16) sum += p[i];  // a load a cache line
  }
  g_sink = g_sink + sum;
}

}  // namespace tso::cpu
