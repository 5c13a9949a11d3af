#include "driver/cpu_costs.h"

#include <cstdlib>
#include <filesystem>

#include "runtime/cpu/profiler.h"

namespace tso::driver {

std::string cpu_cost_device() { return cpu::device_description(0); }

namespace {

std::filesystem::path cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg     ? std::filesystem::path(xdg)
                              : home && *home ? std::filesystem::path(home) / ".cache"
                                              : std::filesystem::temp_directory_path();
  return dir / "tso";
}

}  // namespace

std::string cost_cache_path(const std::string& file, const std::string& device) {
  if (!file.empty()) return file;
  return (cache_dir() / opt::cost_cache_file_name(device)).string();
}

std::string plan_choices_path(int threads) {
  return (cache_dir() / opt::device_file_name("plans", cpu::device_description(threads))).string();
}

Expected<std::unique_ptr<opt::CachedCost>> open_cpu_cost_cache(const std::string& file,
                                                               const opt::CostModel* fallback) {
  const std::string device = cpu_cost_device();
  cpu::ProfileOptions o;
  o.iters = 20;
  o.warmup = 3;
  // A signature's timed runs stop past 300 ms once 3 are in: a batch-16
  // convolution of 100 ms spreads by 1-2% over its runs, and the search
  // of a batch-16 model meets hundreds of such signatures.
  o.budget_ms = 300;
  o.choices_file = plan_choices_path(0);
  return opt::CachedCost::open(
      cost_cache_path(file, device), device,
      [o](const Node& n, std::span<const TensorType> in, bool weights_cached) {
        cpu::ProfileOptions with = o;
        with.weights_cached = weights_cached;
        return cpu::profile_node(n, in, with);
      },
      [o](const opt::PostOp& p, const Node& n, std::span<const TensorType> in) {
        return cpu::profile_post_op(p.anchor, n, in, p.chain, o);
      },
      fallback);
}

}  // namespace tso::driver
