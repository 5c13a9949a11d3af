#include "runtime/common/cost_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/atomic_file.h"

namespace tso::rt {

std::string cost_table_json(const CostTable& table) {
  std::vector<CostEntry> entries = table.entries;
  std::sort(entries.begin(), entries.end(),
            [](const CostEntry& a, const CostEntry& b) { return a.signature < b.signature; });
  nlohmann::ordered_json j;
  j["format"] = "tso-cost-table";
  j["version"] = kCostTableVersion;
  j["device"] = table.device;
  j["tf32"] = table.tf32;
  j["model"] = table.model;
  j["entries"] = nlohmann::ordered_json::array();
  for (const CostEntry& e : entries)
    j["entries"].push_back({{"signature", e.signature},
                            {"op", e.op},
                            {"kernel", e.kernel},
                            {"median_ms", e.median_ms},
                            {"min_ms", e.min_ms},
                            {"samples", e.samples},
                            {"occurrences", e.occurrences},
                            {"measurements", e.measurements}});
  return j.dump(2) + "\n";
}

Expected<CostTable> parse_cost_table(const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{source + ": not valid JSON"};
  try {
    if (j.at("format") != "tso-cost-table")
      return Error{source + ": not a tso cost table (format is " + j.at("format").dump() + ")"};
    if (j.at("version") != kCostTableVersion)
      return Error{source + ": cost table version " + j.at("version").dump() +
                   " is not the supported " + std::to_string(kCostTableVersion)};
    CostTable t;
    t.device = j.at("device").get<std::string>();
    t.tf32 = j.at("tf32").get<bool>();
    t.model = j.at("model").get<std::string>();
    for (const nlohmann::json& e : j.at("entries")) {
      CostEntry c;
      c.signature = e.at("signature").get<std::string>();
      c.op = e.at("op").get<std::string>();
      c.kernel = e.at("kernel").get<std::string>();
      c.median_ms = e.at("median_ms").get<double>();
      c.min_ms = e.at("min_ms").get<double>();
      if (c.median_ms < 0 || c.min_ms < 0)
        return Error{source + ": entry " + c.signature + " has a negative time"};
      if (!std::isfinite(c.median_ms) || !std::isfinite(c.min_ms))
        return Error{source + ": entry " + c.signature + " has a time that is not finite"};
      // Counts are integers that fit an int (a float such as 5e121 does not
      // convert: undefined behaviour, found by tests/fuzz/cost_table_fuzz).
      std::vector<const char*> counts = {"samples", "occurrences"};
      if (e.contains("measurements")) counts.push_back("measurements");
      for (const char* key : counts) {
        const nlohmann::json& v = e.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
            v.get<int64_t>() > std::numeric_limits<int>::max())
          return Error{source + ": entry " + c.signature + ": " + key + " is " + v.dump() +
                       ", not a count"};
      }
      c.samples = e.at("samples").get<int>();
      c.occurrences = e.at("occurrences").get<int>();
      c.measurements = e.value("measurements", 1);
      t.entries.push_back(std::move(c));
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    return Error{source + ": malformed cost table: " + e.what()};
  }
}

Status write_cost_table(const CostTable& table, const std::string& path) {
  return write_file_atomically(path, cost_table_json(table));
}

Expected<CostTable> read_cost_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_cost_table(ss.str(), path);
}

namespace {

// `device` without its ", runtime <hex digits>" part.
std::string without_runtime(const std::string& device) {
  static const std::string kToken = ", runtime ";
  const size_t at = device.find(kToken);
  if (at == std::string::npos) return device;
  size_t end = at + kToken.size();
  while (end < device.size() && std::isxdigit(static_cast<unsigned char>(device[end]))) ++end;
  return device.substr(0, at) + device.substr(end);
}

}  // namespace

bool differ_in_runtime_only(const std::string& a, const std::string& b) {
  return a != b && without_runtime(a) == without_runtime(b);
}

}  // namespace tso::rt
