#include "runtime/common/memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/common/arena.h"

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

Status check_fits(int64_t bytes, int64_t available, const std::string& what,
                  const std::string& holder) {
  TSO_CHECK(bytes >= 0, "a negative size for " + what);
  if (bytes <= available) return Status::Ok();
  return Error{"needs " + format_bytes(bytes) + " for " + what + " but " + holder + " has " +
               format_bytes(available) + " available"};
}

Status check_allocation(int64_t bytes, const std::string& what) {
  return check_fits(bytes, available_memory_bytes(), what, "the machine");
}

Expected<int64_t> checked_total(std::span<const int64_t> sizes, int64_t alignment,
                                const std::string& what) {
  TSO_CHECK(alignment > 0, "alignment " + std::to_string(alignment));
  Count total = 0;
  for (int64_t bytes : sizes) total = total + bytes + (alignment - 1);
  if (!total.fits()) return Error{what + ": its buffers together exceed 2^63 bytes"};
  return *total.value();
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

void FreeAligned::operator()(void* p) const { std::free(p); }

void* aligned_allocation(int64_t bytes, int64_t alignment) {
  const int64_t size = align_up(std::max<int64_t>(bytes, 1), alignment);
  return std::aligned_alloc(static_cast<size_t>(alignment), static_cast<size_t>(size));
}

}  // namespace tso::rt
