#include "optimizer/cost_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/signature.h"
#include "core/signature_graph.h"

namespace tso::opt {

Expected<std::unique_ptr<CachedCost>> CachedCost::open(const std::string& path,
                                                       const std::string& device, MeasureFn measure,
                                                       MeasurePostOpFn measure_post_op,
                                                       const CostModel* fallback) {
  std::unique_ptr<CachedCost> c(new CachedCost());
  c->path_ = path;
  c->measure_ = std::move(measure);
  c->measure_post_op_ = std::move(measure_post_op);
  c->fallback_ = fallback;
  c->table_.device = device;
  c->table_.tf32 = false;
  c->table_.model = "tso optimize cost cache";
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    Expected<rt::CostTable> t = rt::read_cost_table(path);
    if (!t) return Error{"cost cache " + t.error().message + " (delete it to start afresh)"};
    if (rt::differ_in_runtime_only(t->device, device)) {
      const std::string old = path + ".old";
      const std::string why =
          "cost cache " + path + " was measured by another build of the runtime ('" +
          t->device + "')";
      std::filesystem::rename(path, old, ec);
      if (ec) return Error{why + " and cannot be set aside as " + old + ": " + ec.message()};
      c->set_aside_ = why + "; set aside as " + old + ", measuring afresh";
      return c;
    }
    if (t->device != device)
      return Error{"cost cache " + path + " was measured on '" + t->device + "', not on '" +
                   device + "'; delete it or give another --cost-cache"};
    c->table_ = std::move(*t);
    for (size_t i = 0; i < c->table_.entries.size(); ++i) {
      const rt::CostEntry& e = c->table_.entries[i];
      c->us_[e.signature] = {rt::typical_ms(e) * 1e3, true, i};
    }
    c->loaded_ = static_cast<int>(c->us_.size());
  }
  return c;
}

double CachedCost::cost_us(const std::string& sig,
                           const std::function<Expected<rt::CostEntry>()>& measure,
                           const std::function<double()>& fallback) const {
  if (auto it = us_.find(sig); it != us_.end()) {
    if (it->second.from_file) found_.insert(sig);
    if (confirming_ && measure && table_.entries[it->second.entry].measurements < 2 &&
        confirmed_.insert(sig).second)
      remeasure(sig, measure);
    return it->second.us;
  }
  if (failed_.count(sig) == 0 && measure) {
    const auto start = std::chrono::steady_clock::now();
    Expected<rt::CostEntry> e = measure();
    measuring_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (e) {
      e->signature = sig;
      e->occurrences = 1;
      e->measurements = 1;
      table_.entries.push_back(*e);
      ++measured_;
      if (progress_) progress_(measured_, measuring_seconds_, sig);
      const double us = rt::typical_ms(*e) * 1e3;
      us_[sig] = {us, false, table_.entries.size() - 1};
      return us;
    }
    failed_[sig] = e.error().message;
  } else if (!measure) {
    failed_.emplace(sig, "not in the cache and nothing to measure with");
  }
  return fallback();
}

void CachedCost::remeasure(const std::string& sig,
                           const std::function<Expected<rt::CostEntry>()>& measure) const {
  const auto start = std::chrono::steady_clock::now();
  Expected<rt::CostEntry> e = measure();
  measuring_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Cost& c = us_[sig];
  rt::CostEntry& kept = table_.entries[c.entry];
  // A failed second measurement leaves the first, measured once: a later
  // run tries again.
  if (!e) return;
  ++remeasured_;
  ++kept.measurements;
  if (rt::typical_ms(*e) < rt::typical_ms(kept)) {
    kept.min_ms = e->min_ms;
    kept.median_ms = e->median_ms;
    kept.samples = e->samples;
    kept.kernel = e->kernel;
    c.us = rt::typical_ms(*e) * 1e3;
  }
}

int CachedCost::confirm(const Graph& g, const GraphIndex& index) const {
  const int before = remeasured_;
  confirming_ = true;
  graph_cost(g, index, *this);
  confirming_ = false;
  return remeasured_ - before;
}

double CachedCost::node_us(const Node& n, std::span<const TensorType> inputs) const {
  if (is_source(n.op)) return 0;
  if (std::optional<double> us = fused_activation_us(*this, n, inputs)) return *us;
  std::function<Expected<rt::CostEntry>()> measure;
  if (measure_) measure = [&] { return measure_(n, inputs, weights_cached_); };
  return cost_us(key(n, inputs), measure,
                 [&] { return fallback_ ? fallback_->node_us(n, inputs) : 0; });
}

double CachedCost::post_op_us(const PostOp& p, const Node& n,
                              std::span<const TensorType> inputs) const {
  if (!measure_post_op_) return node_us(n, inputs);
  return cost_us(
      post_op_signature(p.anchor, n, inputs, p.chain),
      [&] { return measure_post_op_(p, n, inputs); }, [&] { return node_us(n, inputs); });
}

std::string CachedCost::key(const Node& n, std::span<const TensorType> inputs) const {
  std::string sig = op_signature(n, inputs);
  if (!weights_cached_) return sig;
  const std::vector<bool> weights = weight_args(n, inputs);
  if (std::find(weights.begin(), weights.end(), true) != weights.end()) sig += kWeightsCached;
  return sig;
}

void CachedCost::set_weights_cached(bool cached, const std::string& why) {
  weights_cached_ = cached;
  residency_ = why;
}

std::string CachedCost::describe() const {
  return "measured on demand (" + table_.device + (residency_.empty() ? "" : "; " + residency_) +
         "; cache " + path_ + ")";
}

Status CachedCost::save() const {
  if (measured_ == 0 && remeasured_ == 0) return Status::Ok();
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path_).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) return Error{"cost cache " + path_ + ": cannot create " + dir.string()};
  rt::CostTable sorted = table_;
  std::sort(
      sorted.entries.begin(), sorted.entries.end(),
      [](const rt::CostEntry& a, const rt::CostEntry& b) { return a.signature < b.signature; });
  return rt::write_cost_table(sorted, path_);
}

std::string device_file_name(const std::string& kind, const std::string& device) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: stable across builds and machines
  for (unsigned char ch : device) h = (h ^ ch) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return kind + "-" + std::string(hex) + ".json";
}

std::string cost_cache_file_name(const std::string& device) {
  return device_file_name("costs", device);
}

}  // namespace tso::opt
