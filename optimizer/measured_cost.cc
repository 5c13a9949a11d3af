#include "optimizer/measured_cost.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tso::opt {

Expected<MeasuredCost> MeasuredCost::parse(const std::string& text, const std::string& source,
                                           const CostModel* fallback) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{source + ": not valid JSON"};
  MeasuredCost m;
  m.source_ = source;
  m.fallback_ = fallback;
  try {
    if (j.at("format") != "tso-cost-table")
      return Error{source + ": not a tso cost table (format is " + j.at("format").dump() + ")"};
    if (j.at("version") != 1)
      return Error{source + ": cost table version " + j.at("version").dump() +
                   " is not the supported 1"};
    m.device_ = j.at("device").get<std::string>();
    for (const nlohmann::json& e : j.at("entries")) {
      std::string sig = e.at("signature").get<std::string>();
      double ms = e.at("median_ms").get<double>();
      if (!(ms >= 0)) return Error{source + ": entry " + sig + " has a negative time"};
      m.us_[sig] = ms * 1e3;
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{source + ": malformed cost table: " + e.what()};
  }
  return m;
}

Expected<MeasuredCost> MeasuredCost::load(const std::string& path, const CostModel* fallback) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, fallback);
}

double MeasuredCost::node_us(const Node& n, std::span<const TensorType> inputs) const {
  if (is_source(n.op)) return 0;
  auto it = us_.find(op_signature(n, inputs));
  if (it != us_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  return fallback_ ? fallback_->node_us(n, inputs) : 0;
}

std::string MeasuredCost::describe() const {
  return "measured (" + source_ + ", " + device_ + ", " + std::to_string(us_.size()) +
         " entries" + (fallback_ ? "; missing ones: " + fallback_->describe() : "") + ")";
}

}  // namespace tso::opt
