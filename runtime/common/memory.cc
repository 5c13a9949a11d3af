#include "runtime/common/memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>

namespace tso::rt {
namespace {

// MemAvailable in bytes, or -1 when /proc/meminfo does not say.
int64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    int64_t kib = -1;
    if (!(fields >> key >> kib >> unit) || key != "MemAvailable:") continue;
    int64_t bytes = 0;
    if (kib < 0 || unit != "kB" || __builtin_mul_overflow(kib, int64_t{1024}, &bytes)) return -1;
    return bytes;
  }
  return -1;
}

}  // namespace

int64_t available_memory_bytes() {
  const int64_t from_meminfo = meminfo_available();
  if (from_meminfo >= 0) return from_meminfo;
  const int64_t pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  int64_t bytes = 0;
  if (pages < 0 || page_size < 0 || __builtin_mul_overflow(pages, page_size, &bytes))
    return std::numeric_limits<int64_t>::max();  // unknown: refuse nothing
  return bytes;
}

Status check_allocation(int64_t bytes, const std::string& what) {
  TSO_CHECK(bytes >= 0, "a negative size for " + what);
  const int64_t available = available_memory_bytes();
  if (bytes <= available) return Status::Ok();
  return Error{"needs " + format_bytes(bytes) + " for " + what + " but the machine has " +
               format_bytes(available) + " available"};
}

Expected<int64_t> checked_bytes(const TensorType& t, const std::string& name) {
  const std::span<const int64_t> dims = t.shape.dims();
  // Empty whatever the other dimensions are (whose product may overflow).
  if (std::ranges::find(dims, 0) != dims.end()) return 0;
  int64_t bytes = dtype_bytes(t.dtype);
  for (int64_t d : dims)
    if (__builtin_mul_overflow(bytes, d, &bytes))
      return Error{"tensor " + name + ": " + to_string(t) +
                   " does not fit in memory: its size in bytes overflows int64"};
  return bytes;
}

std::string format_bytes(int64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double x = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (x >= 1024 && u < 5) x /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", x, kUnits[u]);
  return buf;
}

}  // namespace tso::rt
