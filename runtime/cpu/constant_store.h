// Stored weights in the layouts plans chose, shared by the executors of one
// process that read the same stored weights (ExecutorOptions::constants).
// The speed check of `tso optimize` runs the input graph and the optimized
// graph side by side (run_model.h compare_graphs); the two share almost all
// their weights, and each executor held its own reordered copy: 340 MB twice
// for BERT-base. With one store the second executor finds the first one's
// copy and reorders nothing. Internal to runtime/cpu.
//
// A copy is named by the stored weight's address and the two layouts, and
// holds that weight alive: while any executor holds the copy, no other
// weight can take the address. The store itself holds no copy; one lives as
// long as an executor reads it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/common/memory.h"
#include "runtime/cpu/dnnl_util.h"

namespace tso::cpu {

// One weight's bytes in a plan's layout.
struct SharedConstant {
  rt::AlignedBuffer<std::byte> bytes;
  int64_t size = 0;
  std::shared_ptr<const void> source;  // the stored weight it was made from
};

class ConstantStore {
 public:
  // The copy of the weight at `source` reordered from `from` to `to`, made
  // by an executor that still holds it; null if there is none.
  std::shared_ptr<const SharedConstant> find(const std::byte* source, const memory::desc& from,
                                             const memory::desc& to);
  // A zeroed block of `size` bytes (64-byte aligned) for such a copy,
  // holding `keep` (the stored weight) alive; null when out of memory.
  static std::shared_ptr<SharedConstant> allocate(int64_t size, std::shared_ptr<const void> keep);
  // Makes `copy`, written, findable under (`source`, `from`, `to`).
  void publish(const std::byte* source, const memory::desc& from, const memory::desc& to,
               const std::shared_ptr<const SharedConstant>& copy);

 private:
  struct Entry {
    const std::byte* source;
    memory::desc from, to;
    std::weak_ptr<const SharedConstant> copy;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace tso::cpu
