#include "optimizer/measured_cost.h"

#include "core/signature.h"

namespace tso::opt {

MeasuredCost::MeasuredCost(const rt::CostTable& table, const std::string& source,
                           const CostModel* fallback)
    : source_(source), device_(table.device), fallback_(fallback) {
  for (const rt::CostEntry& e : table.entries) {
    us_[e.signature] = rt::typical_ms(e) * 1e3;
    post_ops_ += is_post_op_signature(e.signature);
  }
}

Expected<MeasuredCost> MeasuredCost::parse(const std::string& text, const std::string& source,
                                           const CostModel* fallback) {
  Expected<rt::CostTable> t = rt::parse_cost_table(text, source);
  if (!t) return t.error();
  return MeasuredCost(*t, source, fallback);
}

Expected<MeasuredCost> MeasuredCost::load(const std::string& path, const CostModel* fallback) {
  Expected<rt::CostTable> t = rt::read_cost_table(path);
  if (!t) return t.error();
  return MeasuredCost(*t, path, fallback);
}

double MeasuredCost::node_us(const Node& n, std::span<const TensorType> inputs) const {
  if (is_source(n.op)) return 0;
  if (std::optional<double> us = fused_activation_us(*this, n, inputs)) return *us;
  std::string signature = op_signature(n, inputs);
  auto it = us_.find(signature);
  if (it != us_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  if (missed_signatures_.insert(signature).second) {
    Node detached = n;
    detached.args.clear();
    missed_.push_back({std::move(signature), std::move(detached), {inputs.begin(), inputs.end()}});
  }
  return fallback_ ? fallback_->node_us(n, inputs) : 0;
}

double MeasuredCost::post_op_us(const PostOp& p, const Node& n,
                                std::span<const TensorType> inputs) const {
  auto it = us_.find(post_op_signature(p.anchor, n, inputs, p.chain));
  if (it == us_.end()) return node_us(n, inputs);
  ++hits_;
  return it->second;
}

std::string MeasuredCost::describe() const {
  return "measured (" + source_ + ", " + device_ + ", " + std::to_string(us_.size()) + " entries" +
         (fallback_ ? "; missing ones: " + fallback_->describe() : "") + ")";
}

}  // namespace tso::opt
