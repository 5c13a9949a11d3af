// What a piece of work adds to this process's peak resident memory, for
// tests that check how much a step holds at once (the importer, the CPU
// executor's prologue). Linux only: the peak (VmHWM in /proc/self/status) is
// reset to what is resident now by writing 5 to /proc/self/clear_refs.
// Freed heap memory is returned to the system first (malloc_trim), or the
// work could reuse pages an earlier test left resident and seem to add
// nothing (a test binary run whole, not test by test as ctest runs it).
// Header-only; under AddressSanitizer freed memory stays in quarantine, so
// such tests skip there (sanitizers.h).
#pragma once

#include <malloc.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace tso::testing {

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 if absent.
inline int64_t status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  return -1;
}

// The bytes `work()` adds to the peak resident memory above what was resident
// before it; nullopt where the peak cannot be reset or read.
template <class F>
std::optional<int64_t> added_peak_bytes(F&& work) {
  malloc_trim(0);
  if (!(std::ofstream("/proc/self/clear_refs") << "5")) return std::nullopt;
  const int64_t before = status_kib("VmRSS");
  work();
  const int64_t peak = status_kib("VmHWM");
  if (before < 0 || peak < 0) return std::nullopt;
  return (peak - before) * 1024;
}

}  // namespace tso::testing
