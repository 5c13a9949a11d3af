#include "runtime/cpu/interference.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cstdio>
#include <string>

namespace tso::cpu {
namespace {

// The sum of run_delay (nanoseconds, the second field of schedstat) over
// the process's threads; nullopt when /proc does not say. A thread that
// ends between two tallies drops out of the second, which can only make a
// run look less disturbed by what that thread waited: the profiler's
// threads outlive its runs.
std::optional<double> waited_ms() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return std::nullopt;
  double ns = 0;
  bool any = false;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    unsigned long long cpu_ns = 0, delay_ns = 0;
    if (std::fscanf(f, "%llu %llu", &cpu_ns, &delay_ns) == 2) {
      ns += static_cast<double>(delay_ns);
      any = true;
    }
    std::fclose(f);
  }
  closedir(dir);
  if (!any) return std::nullopt;
  return ns / 1e6;
}

}  // namespace

SchedulerTally scheduler_tally() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {u.ru_nivcsw, waited_ms()};
}

bool undisturbed(const SchedulerTally& before, const SchedulerTally& after, double run_ms) {
  if (after.preemptions == before.preemptions) return true;
  if (!before.waited_ms || !after.waited_ms) return false;
  return *after.waited_ms - *before.waited_ms <= kMaxWaitedShare * run_ms;
}

}  // namespace tso::cpu
