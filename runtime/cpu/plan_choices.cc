#include "runtime/cpu/plan_choices.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"

namespace tso::cpu {
namespace {

constexpr const char* kFormat = "tso-plan-choices";
constexpr int kVersion = 1;

struct Choices {
  std::string device;
  std::map<std::string, std::pair<int, int>> chosen;  // key -> (candidates, index)
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, Choices>& registry() {
  static std::map<std::string, Choices> r;
  return r;
}

// The choices in `path`: none when it does not exist.
Expected<Choices> read(const std::string& path, const std::string& device) {
  Choices c;
  c.device = device;
  std::ifstream in(path);
  if (!in) {
    if (std::filesystem::exists(path)) return Error{"plan choices " + path + ": cannot read it"};
    return c;
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  const std::string bad = "plan choices " + path + ": ";
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat)
    return Error{bad + "not a tso plan choices file (delete it, or give another file)"};
  if (j.value("version", 0) != kVersion)
    return Error{bad + "version " + std::to_string(j.value("version", 0)) + ", expected " +
                 std::to_string(kVersion)};
  if (j.value("device", "") != device)
    return Error{bad + "measured on '" + j.value("device", "") + "', not on '" + device +
                 "' (delete it, or give another file)"};
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_object())
    return Error{bad + "no 'choices' object"};
  for (const auto& [key, v] : choices->items()) {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() ||
        !v[1].is_number_integer() || v[0].get<int>() < 1 || v[1].get<int>() < 0 ||
        v[1].get<int>() >= v[0].get<int>())
      return Error{bad + "choice '" + key + "' is not [candidates, index]"};
    c.chosen[key] = {v[0].get<int>(), v[1].get<int>()};
  }
  return c;
}

Status write(const std::string& path, const Choices& c) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["device"] = c.device;
  nlohmann::ordered_json chosen = nlohmann::ordered_json::object();
  for (const auto& [key, v] : c.chosen) chosen[key] = {v.first, v.second};
  j["choices"] = std::move(chosen);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  return write_file_atomically(path, j.dump(1) + "\n");
}

}  // namespace

Status load_plan_choices(const std::string& path, const std::string& device) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(path);
  if (it != registry().end()) {
    if (it->second.device != device)
      return Error{"plan choices " + path + ": loaded for '" + it->second.device + "', not '" +
                   device + "'"};
    return Status::Ok();
  }
  Expected<Choices> c = read(path, device);
  if (!c) return c.error();
  registry().emplace(path, std::move(*c));
  return Status::Ok();
}

std::optional<int> remembered_choice(const std::string& path, const std::string& key,
                                     int candidates) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(path);
  if (it == registry().end()) return std::nullopt;
  auto c = it->second.chosen.find(key);
  if (c == it->second.chosen.end() || c->second.first != candidates) return std::nullopt;
  return c->second.second;
}

void remember_choice(const std::string& path, const std::string& key, int candidates, int index) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(path);
  if (it == registry().end()) return;
  Choices& mine = it->second;
  mine.chosen[key] = {candidates, index};
  // What other processes chose since this one loaded the file joins ours
  // (ours wins a key both chose), so concurrent planners lose nothing.
  if (Expected<Choices> theirs = read(path, mine.device))
    for (const auto& [k, v] : theirs->chosen) mine.chosen.emplace(k, v);
  (void)write(path, mine);
}

}  // namespace tso::cpu
