#include "optimizer/defaults.h"

#include <algorithm>
#include <filesystem>

namespace tso::opt {

std::string default_rules_dir() { return TSO_SOURCE_DIR "/substitutions"; }

std::vector<std::string> default_rule_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(default_rules_dir(), ec))
    if (e.path().extension() == ".rules") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string default_device_path() { return TSO_SOURCE_DIR "/optimizer/devices/h100.json"; }

std::string cpu_device_path() { return TSO_SOURCE_DIR "/optimizer/devices/cpu-epyc-2c.json"; }

}  // namespace tso::opt
