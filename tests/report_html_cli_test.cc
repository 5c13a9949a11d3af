// `tso optimize --report OUT.html` through the binary on a chain of seven
// conv+relu pairs (seven activation fusions): the page is self-contained and
// balanced, carries the times and the kinds' tables, draws the first five
// sites before and after (one <svg> per side, plus the legend) and counts
// the other two; the markdown and JSON reports carry the same sites and
// gains. Then headless Chromium renders the page: no script errors, the
// drawings in its DOM, and a screenshot kept under the build's Testing/
// folder (its path printed). Skips, saying why, without Graphviz or Chromium.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/binary_run.h"

namespace tso {
namespace {

namespace fs = std::filesystem;
using tso::testing::quote;
using tso::testing::read_file;
using tso::testing::RunResult;

const std::string kH100 = TSO_SOURCE_DIR "/optimizer/devices/h100.json";

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// x -> (conv, relu) x7 -> y
std::string chain_model() {
  std::string t = "graph chain {\n  input x: f32[1,8,16,16]\n";
  for (int i = 0; i < 7; ++i)
    t += "  weight w" + std::to_string(i) + ": f32[8,8,3,3]\n  weight b" + std::to_string(i) +
         ": f32[8]\n";
  std::string prev = "x";
  for (int i = 0; i < 7; ++i) {
    const std::string c = "%c" + std::to_string(i), r = "%r" + std::to_string(i);
    t += "  " + c + " = conv2d(" + prev + ", w" + std::to_string(i) + ", b" + std::to_string(i) +
         ", pad=same)\n  " + r + " = relu(" + c + ")\n";
    prev = r;
  }
  return t + "  output y = " + prev + "\n}\n";
}

class ReportHtmlCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!on_path("dot"))
      GTEST_SKIP() << "Graphviz's dot is not installed (Debian package graphviz)";
    dir_ = fs::path(::testing::TempDir()) / ("tso_report_html_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "chain.tso") << chain_model();
    setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Optimizes the chain with a report at `report`.
  void optimize(const std::string& report) {
    RunResult r = tso::testing::run_binary(
        TSO_BINARY,
        {"optimize", (dir_ / "chain.tso").string(), (dir_ / "out.tso").string(), "--device", kH100,
         "--report", (dir_ / report).string(), "-q"},
        dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  fs::path dir_;
};

TEST_F(ReportHtmlCli, PageMarkdownAndJsonCarryTheSites) {
  optimize("r.html");
  optimize("r.md");
  optimize("r.json");
  const std::string h = read_file(dir_ / "r.html");
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(h, "<html"), 1);
  EXPECT_EQ(count(h, "</html>"), 1);
  for (const std::string tag : {"table", "svg", "div", "h2", "h3", "p"})
    EXPECT_EQ(count(h, "<" + tag + ">") + count(h, "<" + tag + " "), count(h, "</" + tag + ">"))
        << tag;
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_NE(h.find("<h2>Times</h2>"), std::string::npos);
  EXPECT_NE(h.find("<h2>Rewrites by kind</h2>"), std::string::npos);
  EXPECT_NE(h.find("<td>fuse activation</td><td class=\"num\">7</td>"), std::string::npos);
  EXPECT_NE(h.find("and 2 more sites of this kind"), std::string::npos);
  EXPECT_NE(h.find("<b>predicted</b> by the analytic cost model"), std::string::npos);
  EXPECT_EQ(count(h, "<svg"), 1 + 2 * 5);  // the legend, then each drawn site's two sides

  const std::string md = read_file(dir_ / "r.md");
  EXPECT_NE(md.find("## Rewrite sites (7)"), std::string::npos) << md;
  EXPECT_NE(md.find("| fuse activation | 7 | "), std::string::npos) << md;
  const auto j = nlohmann::json::parse(read_file(dir_ / "r.json"));
  EXPECT_EQ(j["node_costs"], "analytic");
  EXPECT_EQ(j["rewrite_gains"]["fuse_activation"]["applications"], 7);
  EXPECT_GT(j["rewrite_gains"]["fuse_activation"]["predicted_gain_us"].get<double>(), 0);
  ASSERT_EQ(j["rewrite_sites"].size(), 7u);
  for (const auto& s : j["rewrite_sites"]) {
    EXPECT_EQ(s["kind"], "fuse_activation");
    EXPECT_FALSE(s["before"].empty());
    EXPECT_FALSE(s["after"].empty());
  }
}

TEST_F(ReportHtmlCli, ChromiumRendersThePage) {
  std::string chromium;
  for (const char* c : {"chromium", "chromium-browser", "google-chrome"})
    if (on_path(c)) {
      chromium = c;
      break;
    }
  if (chromium.empty()) GTEST_SKIP() << "Chromium is not installed (Debian package chromium)";
  optimize("r.html");
  const std::string url = "file://" + fs::absolute(dir_ / "r.html").string();
  const std::string flags =
      " --headless --disable-gpu --no-sandbox --enable-logging=stderr --v=0 --user-data-dir=" +
      quote((dir_ / "profile").string());
  const fs::path dom = dir_ / "dom.html", log = dir_ / "chromium.log";
  int rc = std::system(("timeout 60 " + chromium + flags + " --dump-dom " + quote(url) + " >" +
                        quote(dom.string()) + " 2>" + quote(log.string()))
                           .c_str());
  ASSERT_EQ(rc, 0) << read_file(log);
  const std::string d = read_file(dom), l = read_file(log);
  EXPECT_EQ(count(d, "<svg"), 1 + 2 * 5) << d.substr(0, 2000);
  EXPECT_NE(d.find("<h2>Rewrites by kind</h2>"), std::string::npos);
  // Console messages (an uncaught error, a refused resource) are logged as CONSOLE.
  EXPECT_EQ(l.find("CONSOLE"), std::string::npos) << l;
  EXPECT_EQ(l.find("Uncaught"), std::string::npos) << l;

  const fs::path keep = fs::path(TSO_BINARY_DIR) / "Testing" / "report_html";
  fs::create_directories(keep);
  fs::copy_file(dir_ / "r.html", keep / "report.html", fs::copy_options::overwrite_existing);
  const fs::path png = keep / "report.png";
  fs::remove(png);
  rc = std::system(("timeout 60 " + chromium + flags +
                    " --window-size=1200,2000 --screenshot=" + quote(png.string()) + " " +
                    quote(url) + " >/dev/null 2>>" + quote(log.string()))
                       .c_str());
  ASSERT_EQ(rc, 0) << read_file(log);
  const std::string image = read_file(png);
  ASSERT_GT(image.size(), 10000u);
  EXPECT_EQ(image.substr(1, 3), "PNG");
  std::cout << "screenshot: " << png.string() << "\n";
}

}  // namespace
}  // namespace tso
