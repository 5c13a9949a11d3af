// The HTML report: self-contained, the times and the kinds' tables, one
// drawing per side of each site drawn (the first N per kind, the rest
// counted), gains labelled as predicted; and the DOT of a site.
#include "optimizer/report_html.h"

#include <gtest/gtest.h>

namespace tso::opt {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// conv -> relu fused into one conv, read from input x.
AppliedRewrite fusion(const std::string& name) {
  AppliedRewrite a{"fuse", {name, name + "r"}};
  a.before = {{1, "conv2d", name, "f32[1,4,8,8]", {0}, 3.0, false},
              {2, "relu", name + "r", "f32[1,4,8,8]", {1}, 1.0, false},
              {0, "input", "x", "f32[1,3,8,8]", {}, 0, true}};
  a.after = {{1, "conv2d", name + "r", "f32[1,4,8,8]", {0}, 3.0, false},
             {0, "input", "x", "f32[1,3,8,8]", {}, 0, true}};
  return a;
}

TEST(ReportHtml, DrawsTheFirstSitesPerKindAndCountsTheRest) {
  OptimizeResult r;
  r.cost_before = 28;
  r.cost_after = 21;
  ReportContext c;
  c.model = "m<1>.onnx";
  c.cost_model = "analytic (toy)";
  for (int i = 0; i < 7; ++i) {
    r.search.applied.push_back(fusion("%c" + std::to_string(i)));
    c.applied_kinds.push_back(RewriteKind::kFuseActivation);
  }
  c.speed = {true, "3 runs", 2.0, 1.5, 2.2, 1.6, 3, 3, false};
  int rendered = 0;
  auto render = [&rendered](const std::string& dot) -> Expected<std::string> {
    ++rendered;
    EXPECT_NE(dot.find("digraph"), std::string::npos);
    return std::string("<?xml version=\"1.0\"?>\n<svg class=\"drawn\"></svg>");
  };
  Expected<std::string> h = report_html(r, c, render, {.sites_per_kind = 5});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(rendered, 10);
  EXPECT_EQ(count(*h, "<svg class=\"drawn\">"), 10);
  EXPECT_EQ(count(*h, "<?xml"), 0);
  EXPECT_NE(h->find("and 2 more sites of this kind"), std::string::npos);
  EXPECT_NE(h->find("m&lt;1&gt;.onnx"), std::string::npos);
  EXPECT_NE(h->find("<td>fuse activation</td><td class=\"num\">7</td><td class=\"num\">7.00</td>"),
            std::string::npos);
  EXPECT_NE(h->find("measured end to end, minimum (ms)"), std::string::npos);
  EXPECT_NE(h->find("<td>measured, median (ms)</td><td class=\"num\">2.200</td>"),
            std::string::npos);
  EXPECT_NE(h->find("The gain per kind is <b>predicted</b>"), std::string::npos);
  EXPECT_EQ(h->find("<script"), std::string::npos);
  EXPECT_EQ(h->find("http://www.w3.org/1999"), std::string::npos);  // nothing linked but SVG's ns
  EXPECT_EQ(count(*h, "<html"), 1);
  EXPECT_EQ(count(*h, "</html>"), 1);
}

TEST(ReportHtml, ARendererErrorIsTheReportsError) {
  OptimizeResult r;
  r.search.applied.push_back(fusion("%c"));
  Expected<std::string> h = report_html(
      r, {}, [](const std::string&) -> Expected<std::string> { return Error{"no dot"}; });
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message, "no dot");
}

TEST(ReportHtml, SiteDotColoursByCostAndDashesTheBoundary) {
  const std::string d = site_dot(fusion("%c").before, 3.0);
  EXPECT_NE(d.find("n1 [label=\"conv2d\\n%c\\nf32[1,4,8,8]\\n3.00 us\", fillcolor=\"#d73027\"]"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("fillcolor=\"#f2bab7\""), std::string::npos) << d;  // a third of the top
  EXPECT_NE(d.find("n0 [label=\"input\\nx\\nf32[1,3,8,8]\", style=\"rounded,dashed\""),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("n0 -> n1;"), std::string::npos);
  EXPECT_NE(d.find("n1 -> n2;"), std::string::npos);
}

}  // namespace
}  // namespace tso::opt
