// A least-recently-used cache of shared values keyed by search state, with
// one key that is never evicted (the search's root, from which every graph
// can be rebuilt).
#pragma once

#include <algorithm>
#include <list>
#include <memory>
#include <unordered_map>

namespace tso::opt {

template <typename V>
class LruCache {
 public:
  LruCache(int capacity, int pinned) : capacity_(std::max(2, capacity)), pinned_(pinned) {}

  // The value of `key`, now the most recently used; null when absent.
  std::shared_ptr<V> get(int key) {
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }

  void put(int key, std::shared_ptr<V> value) {
    if (auto it = map_.find(key); it != map_.end()) order_.erase(it->second.second);
    order_.push_front(key);
    map_[key] = {std::move(value), order_.begin()};
    while (static_cast<int>(map_.size()) > capacity_) {
      if (order_.back() == pinned_) order_.splice(order_.begin(), order_, std::prev(order_.end()));
      map_.erase(order_.back());
      order_.pop_back();
    }
  }

 private:
  int capacity_;
  int pinned_;
  std::list<int> order_;  // most recent first
  std::unordered_map<int, std::pair<std::shared_ptr<V>, std::list<int>::iterator>> map_;
};

}  // namespace tso::opt
