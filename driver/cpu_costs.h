// The cache of operator costs measured on this CPU, shared by `tso optimize
// --device cpu` (costs on demand during the search) and `tso calibrate`
// (every signature of some models, to fit a device file): one file per
// device, so what either measured the other finds.
#pragma once

#include <memory>
#include <string>

#include "core/error.h"
#include "optimizer/cost_cache.h"

namespace tso::driver {

// The device string CPU measurements here belong to: all cores, as `tso run
// --device cpu` runs.
std::string cpu_cost_device();

// `file`, or when empty the default cache of measurements on `device`:
// $XDG_CACHE_HOME/tso (else ~/.cache/tso) costs-<hash of the device>.json.
std::string cost_cache_path(const std::string& file, const std::string& device);

// The CPU runtime's plan choices (runtime/cpu/plan_choices.h) on `threads`
// threads (0: all cores), beside the cost cache: $XDG_CACHE_HOME/tso (else
// ~/.cache/tso) plans-<hash of the device>.json. Every command that plans
// on the CPU runtime uses it, so a model is planned with the same
// implementations by `tso run`, `tso profile` and `tso optimize`.
std::string plan_choices_path(int threads);

// Opens ~/.cache/tso/costs-<hash of the device>.json, or `file` when not
// empty; missing signatures (and post-ops) are timed by the CPU runtime's
// profiler, and cost what `fallback` says when that fails (0 without one).
Expected<std::unique_ptr<opt::CachedCost>> open_cpu_cost_cache(const std::string& file,
                                                               const opt::CostModel* fallback);

}  // namespace tso::driver
