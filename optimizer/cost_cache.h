// The measured cost model with measurement on demand: per-node times from a
// persistent cache (a cost table, runtime/common/cost_table.h, one file per
// device), and for a signature the cache lacks, a measurement the caller
// provides (the CLI passes the CPU runtime's profiler, so the optimizer
// never depends on a runtime). That includes the nodes the search invents:
// merged convolutions, concatenated weights, enlarged kernels. New entries
// are written back by save(), atomically, so a second `tso optimize` of the
// same model measures nothing.
//
// A cache file belongs to one device string (machine, threads, library and
// ISA, and the revision of the runtime's kernels). A file that is not a cost
// table, or that names another device, is an error naming the file: it is
// never silently mixed or overwritten (delete it, or give another file). A
// file of this device measured by another build of the kernels is set
// aside, renamed FILE.old, and the cache starts empty (set_aside() says so):
// its costs are of kernels that no longer run, and every new build would
// otherwise stop at it. A signature whose measurement fails costs what
// the fallback model says, is counted, and is not cached.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "core/error.h"
#include "optimizer/cost_model.h"
#include "runtime/common/cost_table.h"

namespace tso::opt {

// Times one operator on arguments of the given types, with its weights in
// the last-level cache when `weights_cached` (else from memory); the entry's
// signature is op_signature(node, inputs) and rt::typical_ms its cost.
using MeasureFn =
    std::function<Expected<rt::CostEntry>(const Node&, std::span<const TensorType>, bool)>;
// Times what `n` adds to a kernel of `p.anchor` when it runs there as a
// post-op (the entry's signature is post_op_signature).
using MeasurePostOpFn =
    std::function<Expected<rt::CostEntry>(const PostOp&, const Node&, std::span<const TensorType>)>;

class CachedCost : public CostModel {
 public:
  // Loads `path` when it exists; a missing file starts an empty cache.
  static Expected<std::unique_ptr<CachedCost>> open(const std::string& path,
                                                    const std::string& device, MeasureFn measure,
                                                    MeasurePostOpFn measure_post_op,
                                                    const CostModel* fallback);

  double node_us(const Node& n, std::span<const TensorType> inputs) const override;
  // A post-op's own entry when measure_post_op is given; otherwise (and
  // when its measurement fails) what the node costs alone.
  double post_op_us(const PostOp& p, const Node& n,
                    std::span<const TensorType> inputs) const override;
  bool fuses() const override { return static_cast<bool>(measure_post_op_); }
  // Whether the model's weights stay in the last-level cache between runs
  // (runtime/cpu/cache_residency.h), and why, for describe(): from then on a
  // node with weights (core/signature_graph.h's weight_args) costs the entry
  // under its signature followed by kWeightsCached, measured so.
  void set_weights_cached(bool cached, const std::string& why);
  // Entries measured once (in this run or an earlier one) are measured
  // again; each entry records its measurements, so a later run does not
  // repeat it.
  int confirm(const Graph& g, const GraphIndex& index) const override;
  double measuring_seconds() const override { return measuring_seconds_; }
  std::string describe() const override;

  // Writes the cache (creating its folder) when something was measured;
  // the file appears only complete.
  Status save() const;

  // Called after each measurement: (signatures measured so far, seconds
  // spent measuring, the signature). Libraries never print.
  void set_progress(std::function<void(int, double, const std::string&)> progress) {
    progress_ = std::move(progress);
  }

  const std::string& path() const { return path_; }
  // Why the file at path() was renamed FILE.old when opened; empty if not.
  const std::string& set_aside() const { return set_aside_; }
  int loaded() const { return loaded_; }                         // entries in the file
  int found() const { return static_cast<int>(found_.size()); }  // distinct, from the file
  int measured() const { return measured_; }                     // distinct, timed now
  int remeasured() const { return remeasured_; }                 // by confirm()
  const std::map<std::string, std::string>& failed() const { return failed_; }  // signature -> why

 private:
  CachedCost() = default;
  // The cost under `sig`: cached, else measured (and cached), else
  // `fallback`. While confirming, a cached entry measured once is measured
  // again.
  double cost_us(const std::string& sig, const std::function<Expected<rt::CostEntry>()>& measure,
                 const std::function<double()>& fallback) const;

  // The key of `n`'s cost: its signature, marked when it is measured with
  // its weights cached.
  std::string key(const Node& n, std::span<const TensorType> inputs) const;

  std::string path_;
  std::string set_aside_;
  bool weights_cached_ = false;
  std::string residency_;  // set_weights_cached's why
  MeasureFn measure_;
  MeasurePostOpFn measure_post_op_;
  std::function<void(int, double, const std::string&)> progress_;
  const CostModel* fallback_ = nullptr;
  mutable rt::CostTable table_;  // what save() writes
  // Measures `sig` again and keeps the measurement of the lesser median.
  void remeasure(const std::string& sig,
                 const std::function<Expected<rt::CostEntry>()>& measure) const;

  struct Cost {
    double us = 0;  // rt::typical_ms, in microseconds
    bool from_file = false;
    size_t entry = 0;  // its index in table_.entries
  };
  mutable std::map<std::string, Cost> us_;
  mutable std::set<std::string> found_;
  mutable std::map<std::string, std::string> failed_;
  int loaded_ = 0;
  mutable int measured_ = 0;
  mutable int remeasured_ = 0;
  mutable bool confirming_ = false;
  mutable std::set<std::string> confirmed_;  // measured again (or tried) by this instance
  mutable double measuring_seconds_ = 0;
};

// Marks a cache entry measured with the node's weights in the last-level
// cache: "conv2d(...) [weights cached]".
inline constexpr const char* kWeightsCached = " [weights cached]";

// A file name for what belongs to `device`: "<kind>-<16 hex digits>.json",
// a hash of the device string (the folder is the caller's: the CLI uses
// ~/.cache/tso).
std::string device_file_name(const std::string& kind, const std::string& device);

// The default cache file name for `device`: device_file_name("costs", device).
std::string cost_cache_file_name(const std::string& device);

}  // namespace tso::opt
