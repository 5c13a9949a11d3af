#include "runtime/cuda/algo_cache.h"

#include <cmath>

namespace tso::cuda {

std::string ConvSignature::key() const {
  auto pair = [](int64_t a, int64_t b) { return std::to_string(a) + "," + std::to_string(b); };
  return "x" + to_string(x) + " w" + to_string(w) + " y" + to_string(y) + " pad=" +
         pair(pad_h, pad_w) + " stride=" + pair(stride_h, stride_w) + " dil=" +
         pair(dil_h, dil_w) + " groups=" + std::to_string(groups) + " tf32=" +
         (tf32 ? "1" : "0") + " fused=" + (fused ? "1" : "0");
}

Expected<ConvAlgoResult> ConvAlgoCache::choose(const ConvSignature& sig, const Measure& measure) {
  const std::string key = sig.key();
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  ++measurements_;
  Expected<std::vector<ConvAlgoResult>> results = measure(sig);
  if (!results) return Error{"conv " + key + ": " + results.error().message};
  const ConvAlgoResult* best = nullptr;
  for (const ConvAlgoResult& r : *results) {
    if (r.algo < 0 || !std::isfinite(r.ms) || r.workspace_bytes > workspace_limit_) continue;
    if (best == nullptr || r.ms < best->ms) best = &r;
  }
  if (best == nullptr)
    return Error{"conv " + key + ": none of the " + std::to_string(results->size()) +
                 " measured cuDNN algorithms fits the workspace limit of " +
                 std::to_string(workspace_limit_) + " bytes"};
  cache_.emplace(key, *best);
  return *best;
}

}  // namespace tso::cuda
