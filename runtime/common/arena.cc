#include "runtime/common/arena.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"

namespace tso::rt {
namespace {

bool overlap_in_time(const Lifetime& a, const Lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

int64_t align_up(int64_t n, int64_t alignment) {
  TSO_CHECK(alignment > 0, "alignment " + std::to_string(alignment));
  return (n + alignment - 1) / alignment * alignment;
}

ArenaLayout plan_arena(const std::vector<Lifetime>& buffers, int64_t alignment) {
  const size_t n = buffers.size();
  ArenaLayout out;
  out.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first, ties by start so the layout is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  struct Block {
    int64_t begin, end;
  };
  std::vector<size_t> placed;
  std::vector<Block> conflicts;
  for (size_t i : order) {
    const int64_t size = align_up(buffers[i].bytes, alignment);
    out.total_bytes += size;
    conflicts.clear();
    for (size_t j : placed)
      if (overlap_in_time(buffers[i], buffers[j]))
        conflicts.push_back(
            {out.offsets[j], out.offsets[j] + align_up(buffers[j].bytes, alignment)});
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Block& a, const Block& b) { return a.begin < b.begin; });
    int64_t offset = 0;
    for (const Block& c : conflicts) {
      if (size == 0 || offset + size <= c.begin) break;
      offset = std::max(offset, c.end);
    }
    out.offsets[i] = offset;
    out.peak_bytes = std::max(out.peak_bytes, offset + size);
    placed.push_back(i);
  }
  return out;
}

}  // namespace tso::rt
