#include "runtime/cpu/measure.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "runtime/common/memory.h"
#include "runtime/cpu/cache_residency.h"
#include "runtime/cpu/plan_choices.h"

namespace tso::cpu {

double best_ms(const std::function<void()>& run, double bound, const std::function<void()>& prepare,
               int runs) {
  constexpr double kEnoughMs = 50;
  double best = 1e30, timed = 0;
  for (int i = 0; i <= runs && !(i > 1 && timed > kEnoughMs); ++i) {
    if (prepare) prepare();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i == 0) {
      if (ms > 1.5 * bound) return ms;
      continue;
    }
    best = std::min(best, ms);
    timed += ms;
  }
  return best;
}

bool can_time(int64_t bytes) { return bytes <= rt::available_memory_bytes() / 2; }

std::optional<std::unordered_map<int, memory>> scratch_args(const dnnl::engine& engine,
                                                            const dnnl::primitive_desc_base& pd,
                                                            const std::vector<Arg>& extra) {
  std::vector<std::pair<int, memory::desc>> mds;
  for (int key : {DNNL_ARG_SRC, DNNL_ARG_SRC_1, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST,
                  DNNL_ARG_SCRATCHPAD}) {
    const memory::desc md = pd.query_md(dnnl::query::exec_arg_md, key);
    if (md.get_size() > 0) mds.emplace_back(key, md);
  }
  for (const Arg& a : extra) mds.emplace_back(a.key, a.md);
  int64_t bytes = 0;
  for (const auto& [key, md] : mds) bytes += static_cast<int64_t>(md.get_size());
  if (!can_time(bytes)) return std::nullopt;
  std::unordered_map<int, memory> args;
  for (const auto& [key, md] : mds) args.emplace(key, memory(md, engine));
  for (auto& [key, m] : args) std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
  return args;
}

double time_primitive(const dnnl::engine& engine, const dnnl::primitive& prim,
                      const dnnl::primitive_desc_base& pd, const std::vector<Arg>& extra,
                      double bound, bool cold_weights) {
  std::optional<std::unordered_map<int, memory>> scratch = scratch_args(engine, pd, extra);
  if (!scratch) return kNotTimed;
  std::unordered_map<int, memory>& args = *scratch;
  dnnl::stream stream(engine);
  std::function<void()> flush;
  if (auto w = args.find(DNNL_ARG_WEIGHTS); cold_weights && w != args.end())
    flush = [&m = w->second] {
      flush_from_caches(m.get_data_handle(), static_cast<int64_t>(m.get_desc().get_size()));
      _mm_mfence();
    };
  return best_ms(
      [&] {
        prim.execute(stream, args);
        stream.wait();
      },
      cold_weights ? kNotTimed : bound, flush, cold_weights ? kColdRuns : 5);
}

int fastest(const std::string& choices_file, const std::string& key,
            const std::vector<Candidate>& candidates, int rounds) {
  static std::mutex mutex;
  static std::unordered_map<std::string, int> chosen;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = chosen.find(key);
  if (it != chosen.end()) return it->second;
  const int n = static_cast<int>(candidates.size());
  if (!choices_file.empty())
    if (std::optional<int> known = remembered_choice(choices_file, key, n)) {
      chosen.emplace(key, *known);
      return *known;
    }
  int best = 0;  // the first candidate when none could be timed
  double best_time = kNotTimed;
  std::vector<double> times(candidates.size(), kNotTimed);
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < candidates.size(); ++i) {
      times[i] = std::min(times[i], candidates[i](best_time));
      if (times[i] < best_time) best = static_cast<int>(i), best_time = times[i];
    }
  chosen.emplace(key, best);
  if (!choices_file.empty()) remember_choice(choices_file, key, n, best);
  return best;
}

}  // namespace tso::cpu
