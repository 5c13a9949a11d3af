#include "runtime/cpu/constant_store.h"

#include <cstring>

namespace tso::cpu {

std::shared_ptr<const SharedConstant> ConstantStore::find(const std::byte* source,
                                                          const memory::desc& from,
                                                          const memory::desc& to) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& e : entries_)
    if (e.source == source && e.from == from && e.to == to)
      if (std::shared_ptr<const SharedConstant> copy = e.copy.lock()) return copy;
  return nullptr;
}

std::shared_ptr<SharedConstant> ConstantStore::allocate(int64_t size,
                                                        std::shared_ptr<const void> keep) {
  auto c = std::make_shared<SharedConstant>();
  c->bytes = rt::aligned_buffer(size);
  if (!c->bytes) return nullptr;
  std::memset(c->bytes.get(), 0, size);
  c->size = size;
  c->source = std::move(keep);
  return c;
}

void ConstantStore::publish(const std::byte* source, const memory::desc& from,
                            const memory::desc& to,
                            const std::shared_ptr<const SharedConstant>& copy) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(entries_, [](const Entry& e) { return e.copy.expired(); });
  entries_.push_back({source, from, to, copy});
}

}  // namespace tso::cpu
