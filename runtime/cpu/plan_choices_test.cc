#include "runtime/cpu/plan_choices.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/signature.h"
#include "runtime/cpu/executor.h"
#include "runtime/cpu/executor_testing.h"
#include "runtime/cpu/profiler.h"
#include "runtime/reference/runtime_cases.h"

namespace tso::cpu {
namespace {

namespace fs = std::filesystem;

// A fresh path for each use (the process keeps a loaded file's choices
// under its path), in a folder removed when the tests end.
std::string fresh_path(const std::string& name) {
  struct Folder {
    fs::path path = fs::temp_directory_path() / ("tso_plan_choices_" + std::to_string(getpid()));
    Folder() { fs::create_directories(path); }
    ~Folder() { fs::remove_all(path); }
  };
  static const Folder folder;
  static int n = 0;
  return (folder.path / (name + "_" + std::to_string(n++) + ".json")).string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

std::string choices_file(const std::string& device, const nlohmann::json& choices) {
  return nlohmann::json{
      {"format", "tso-plan-choices"}, {"version", 1}, {"device", device}, {"choices", choices}}
      .dump();
}

// A 3x3 convolution of `size` x `size` images: five candidates (direct,
// then Winograd F4 and F2 in two schedules each).
Graph conv_graph(int size) {
  const std::string s = std::to_string(size);
  return ref::testing::graph_with_weights(R"(graph g {
  input x: f32[1,16,)" + s + "," + s + R"(]
  weight w: f32[16,16,3,3]
  %c = conv2d(x, w, pad=same)
  output y = %c
})",
                                          3);
}

bool runs_winograd(const Graph& g, const ExecutorOptions& o) {
  for (const StepTime& s : testing::profiled_steps(g, o))
    if (s.what.find("winograd") != std::string::npos) return true;
  return false;
}

TEST(PlanChoices, APlanRunsTheImplementationTheFileChose) {
  ExecutorOptions o;
  o.threads = 1;
  const std::string device = device_description(1);
  // Different sizes: the process remembers a key once planned.
  for (const auto& [size, index] : {std::pair{12, 0}, std::pair{14, 4}, std::pair{10, 1}}) {
    const Graph g = conv_graph(size);
    int conv = 0;
    while (g.node(conv).op != Op::Conv2d) ++conv;
    o.choices_file = fresh_path("chosen");
    write_text(o.choices_file,
               choices_file(device, {{"winograd " + op_signature(g, conv), {5, index}}}));
    EXPECT_EQ(runs_winograd(g, o), index > 0) << "size " << size << ", candidate " << index;
  }
}

TEST(PlanChoices, ATimedChoiceIsWrittenForTheNextProcess) {
  ExecutorOptions o;
  o.threads = 1;
  o.choices_file = fresh_path("timed");
  const Graph g = conv_graph(9);
  ASSERT_TRUE(Executor::create(g, o).ok());
  const nlohmann::json j = read_json(o.choices_file);
  EXPECT_EQ(j["device"], device_description(1));
  int conv = 0;
  while (g.node(conv).op != Op::Conv2d) ++conv;
  const nlohmann::json& c = j["choices"]["winograd " + op_signature(g, conv)];
  ASSERT_TRUE(c.is_array()) << j.dump();
  EXPECT_EQ(c[0], 5);
  EXPECT_GE(c[1], 0);
  EXPECT_LT(c[1], 5);
}

TEST(PlanChoices, WhatOtherProcessesWroteIsKept) {
  const std::string path = fresh_path("merged"), device = "cpu: test";
  ASSERT_TRUE(load_plan_choices(path, device).ok());
  remember_choice(path, "a", 2, 1);
  // Another process adds "b" meanwhile, and chose "a" otherwise.
  write_text(path, choices_file(device, {{"a", {2, 0}}, {"b", {3, 2}}}));
  remember_choice(path, "c", 2, 0);
  const nlohmann::json j = read_json(path)["choices"];
  EXPECT_EQ(j, nlohmann::json({{"a", {2, 1}}, {"b", {3, 2}}, {"c", {2, 0}}}));

  const std::string copy = fresh_path("copy");
  fs::copy_file(path, copy);
  ASSERT_TRUE(load_plan_choices(copy, device).ok());
  EXPECT_EQ(remembered_choice(copy, "b", 3), 2);
  EXPECT_EQ(remembered_choice(copy, "b", 4), std::nullopt);  // the candidates changed
  EXPECT_EQ(remembered_choice(copy, "d", 2), std::nullopt);
}

TEST(PlanChoices, AForeignOrCorruptFileIsAnErrorNamingIt) {
  const std::string device = device_description(1);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"not json {", "not a tso plan choices file"},
      {R"({"format": "tso-cost-table"})", "not a tso plan choices file"},
      {choices_file("cpu: another machine", nlohmann::json::object()), "another machine"},
      {choices_file(device, {{"k", {2, 2}}}), "choice 'k' is not [candidates, index]"},
      {choices_file(device, {{"k", "direct"}}), "choice 'k' is not [candidates, index]"},
  };
  ExecutorOptions o;
  o.threads = 1;
  for (const auto& [text, why] : files) {
    o.choices_file = fresh_path("bad");
    write_text(o.choices_file, text);
    Expected<std::unique_ptr<Executor>> ex = Executor::create(conv_graph(8), o);
    ASSERT_FALSE(ex.ok()) << text;
    EXPECT_NE(ex.error().message.find(o.choices_file), std::string::npos) << ex.error().message;
    EXPECT_NE(ex.error().message.find(why), std::string::npos) << ex.error().message;
  }
}

}  // namespace
}  // namespace tso::cpu
