// The measured cost model: per-node times from a cost table that a runtime
// measured (`tso profile`; format in runtime/common/cost_table.h), keyed by
// op_signature (core/signature.h). Nodes whose signature the table lacks
// fall back to another model, and are counted and remembered, so that a
// runtime can time them (`tso optimize --missing-costs`).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/signature_graph.h"
#include "optimizer/cost_model.h"
#include "runtime/common/cost_table.h"

namespace tso::opt {

class MeasuredCost : public CostModel {
 public:
  // Parses a table; errors name `source`.
  static Expected<MeasuredCost> parse(const std::string& json, const std::string& source,
                                      const CostModel* fallback);
  static Expected<MeasuredCost> load(const std::string& path, const CostModel* fallback);
  // A table already in memory; `source` names it in describe().
  MeasuredCost(const rt::CostTable& table, const std::string& source, const CostModel* fallback);

  double node_us(const Node& n, std::span<const TensorType> inputs) const override;
  // The table's post-op entry (post_op_signature); what the node costs
  // alone when there is none.
  double post_op_us(const PostOp& p, const Node& n,
                    std::span<const TensorType> inputs) const override;
  bool fuses() const override { return post_ops_ > 0; }
  std::string describe() const override;

  int entries() const { return static_cast<int>(us_.size()); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  // Each signature the table lacked, once, in the order first asked for.
  const std::vector<SignatureNode>& missed() const { return missed_; }

 private:
  std::string source_, device_;
  std::unordered_map<std::string, double> us_;  // signature -> rt::typical_ms, in microseconds
  const CostModel* fallback_ = nullptr;
  int post_ops_ = 0;  // entries of post-ops
  mutable int64_t hits_ = 0, misses_ = 0;
  mutable std::vector<SignatureNode> missed_;
  mutable std::unordered_set<std::string> missed_signatures_;
};

}  // namespace tso::opt
