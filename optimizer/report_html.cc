#include "optimizer/report_html.h"

#include <algorithm>
#include <cstdio>

namespace tso::opt {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char ch : s) switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += ch;
    }
  return o;
}

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o;
}

// White at 0, red at 1.
std::string heat(double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [t](int from, int to) { return static_cast<int>(from + (to - from) * t + 0.5); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(255, 215), mix(255, 48), mix(255, 39));
  return buf;
}

double max_cost(const std::vector<AppliedRewrite>& applied) {
  double m = 0;
  for (const AppliedRewrite& a : applied)
    for (const auto* side : {&a.before, &a.after})
      for (const SiteNode& n : *side) m = std::max(m, n.cost_us);
  return m;
}

// The SVG element of Graphviz's output, without its XML prologue.
std::string svg_element(const std::string& svg) {
  size_t at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 4px 10px; text-align: left; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.site { border: 1px solid #ccc; border-radius: 6px; margin: 1em 0; padding: 0.5em 1em; }
.sides { display: flex; gap: 2em; align-items: flex-start; }
.side { flex: 1; }
.side svg { max-width: 100%; height: auto; }
.note { color: #555; font-size: 0.9em; }
</style>
)";

std::string legend(const ReportContext& c, double max_us) {
  std::string s =
      "<p class=\"note\">Operators are coloured by their cost, " +
      std::string(c.measured_costs ? "<b>measured</b> per operator on the target"
                                   : "<b>predicted</b> by the analytic cost model") +
      " (" + html_escape(c.cost_model) +
      "); dashed nodes lie outside the site and are read by it.</p>\n"
      "<svg class=\"legend\" width=\"420\" height=\"40\" xmlns=\"http://www.w3.org/2000/svg\">"
      "<defs><linearGradient id=\"heat\"><stop offset=\"0\" stop-color=\"" +
      heat(0) + "\"/><stop offset=\"1\" stop-color=\"" + heat(1) +
      "\"/></linearGradient></defs>"
      "<rect x=\"10\" y=\"4\" width=\"400\" height=\"14\" fill=\"url(#heat)\" stroke=\"#888\"/>"
      "<text x=\"10\" y=\"34\" font-size=\"12\">0 us</text>"
      "<text x=\"410\" y=\"34\" font-size=\"12\" text-anchor=\"end\">" +
      fmt("%.2f", max_us) + " us</text></svg>\n";
  return s;
}

std::string times_table(const OptimizeResult& r, const ReportContext& c) {
  std::string s =
      "<h2>Times</h2>\n<table>\n<tr><th></th><th>before</th><th>after</th><th>speedup</th>"
      "<th>source</th></tr>\n";
  auto speedup = [](double a, double b) { return b > 0 ? fmt("%.2fx", a / b) : std::string("-"); };
  s += "<tr><td>predicted cost (us)</td><td class=\"num\">" + fmt("%.2f", r.cost_before) +
       "</td><td class=\"num\">" + fmt("%.2f", r.cost_after) + "</td><td class=\"num\">" +
       speedup(r.cost_before, r.cost_after) + "</td><td>cost model: " + html_escape(c.cost_model) +
       "</td></tr>\n";
  if (c.speed.ran)
    s += "<tr><td>measured end to end, minimum (ms)</td><td class=\"num\">" + fmt("%.3f", c.speed.input_ms) +
         "</td><td class=\"num\">" + fmt("%.3f", c.speed.optimized_ms) + "</td><td class=\"num\">" +
         speedup(c.speed.input_ms, c.speed.optimized_ms) + "</td><td>" + html_escape(c.speed.note) +
         "</td></tr>\n<tr><td>measured, median (ms)</td><td class=\"num\">" +
         fmt("%.3f", c.speed.input_median_ms) + "</td><td class=\"num\">" +
         fmt("%.3f", c.speed.optimized_median_ms) + "</td><td class=\"num\">" +
         speedup(c.speed.input_median_ms, c.speed.optimized_median_ms) + "</td><td></td></tr>\n";
  else
    s += "<tr><td>measured end to end</td><td colspan=\"3\">not run</td><td>" +
         html_escape(c.speed.note) + "</td></tr>\n";
  s += "<tr><td>operators</td><td class=\"num\">" + std::to_string(r.operators_before) +
       "</td><td class=\"num\">" + std::to_string(r.operators_after) +
       "</td><td></td><td></td></tr>\n</table>\n";
  if (c.speed.ran && c.speed.kept_input)
    s += "<p>The input graph was written: " + html_escape(kept_input_reason(c.speed)) + ".</p>\n";
  return s;
}

std::string kinds_table(const OptimizeResult& r, const ReportContext& c, int per_kind) {
  const std::array<KindGain, kNumRewriteKinds> gains = kind_gains(r.search, c);
  std::string s =
      "<h2>Rewrites by kind</h2>\n<p class=\"note\">The gain per kind is <b>predicted</b>: over "
      "its sites, the cost model's cost of the nodes removed less that of the nodes added. Only "
      "the whole model is measured (Times, above).</p>\n<table class=\"kinds\">\n<tr><th>kind</"
      "th><th>applications</th><th>predicted gain (us)</th><th>sites drawn</th></tr>\n";
  for (int k = 0; k < kNumRewriteKinds; ++k) {
    if (gains[k].applications == 0) continue;
    s += "<tr><td>" + std::string(rewrite_kind_name(static_cast<RewriteKind>(k))) +
         "</td><td class=\"num\">" + std::to_string(gains[k].applications) +
         "</td><td class=\"num\">" + fmt("%.2f", gains[k].predicted_gain_us) +
         "</td><td class=\"num\">" + std::to_string(std::min(gains[k].applications, per_kind)) +
         "</td></tr>\n";
  }
  if (r.search.applied.empty()) s += "<tr><td colspan=\"4\">no rewrite applied</td></tr>\n";
  return s + "</table>\n";
}

}  // namespace

std::string site_dot(const std::vector<SiteNode>& site, double max_cost_us) {
  double top = max_cost_us;
  if (top <= 0)
    for (const SiteNode& n : site) top = std::max(top, n.cost_us);
  std::string d =
      "digraph site {\n  bgcolor=\"transparent\";\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"Helvetica\", fontsize=10];\n  edge [color=\"#555555\"];\n";
  for (const SiteNode& n : site) {
    std::string label = n.op + "\\n" + dot_escape(n.name);
    if (!n.type.empty()) label += "\\n" + n.type;
    if (n.boundary)
      d += "  n" + std::to_string(n.id) + " [label=\"" + label +
           "\", style=\"rounded,dashed\", fontcolor=\"#777777\"];\n";
    else
      d += "  n" + std::to_string(n.id) + " [label=\"" + label + "\\n" + fmt("%.2f", n.cost_us) +
           " us\", fillcolor=\"" + heat(top > 0 ? n.cost_us / top : 0) + "\"];\n";
  }
  for (const SiteNode& n : site)
    if (!n.boundary)
      for (int a : n.args) d += "  n" + std::to_string(a) + " -> n" + std::to_string(n.id) + ";\n";
  return d + "}\n";
}

Expected<std::string> report_html(const OptimizeResult& r, const ReportContext& c,
                                  const DotRenderer& render, const HtmlReportOptions& options) {
  const std::vector<AppliedRewrite>& applied = r.search.applied;
  const double top = max_cost(applied);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tso "
      "optimize: " +
      html_escape(c.model) + "</title>\n" + kStyle + "</head>\n<body>\n";
  h += "<h1>tso optimize: " + html_escape(c.model) + "</h1>\n";
  h += times_table(r, c);
  h += kinds_table(r, c, options.sites_per_kind);
  if (!applied.empty()) h += "<h2>Rewrite sites</h2>\n" + legend(c, top);
  for (int k = 0; k < kNumRewriteKinds; ++k) {
    std::vector<size_t> sites;
    for (size_t i = 0; i < applied.size(); ++i)
      if (static_cast<int>(applied_kind(c, i)) == k) sites.push_back(i);
    if (sites.empty()) continue;
    h += "<h3>" + std::string(rewrite_kind_name(static_cast<RewriteKind>(k))) + " (" +
         std::to_string(sites.size()) + ")</h3>\n";
    const size_t drawn = std::min(sites.size(), static_cast<size_t>(options.sites_per_kind));
    for (size_t j = 0; j < drawn; ++j) {
      const AppliedRewrite& a = applied[sites[j]];
      h += "<div class=\"site\">\n<p>#" + std::to_string(sites[j] + 1) + " <b>" +
           html_escape(a.rule) + "</b>: predicted gain " +
           fmt("%.2f", site_cost(a.before) - site_cost(a.after)) +
           " us</p>\n<div class=\"sides\">\n";
      for (const auto& [title, side] : {std::pair{"before", &a.before}, {"after", &a.after}}) {
        Expected<std::string> svg = render(site_dot(*side, top));
        if (!svg) return svg.error();
        h += "<div class=\"side\"><p>" + std::string(title) + ": " + fmt("%.2f", site_cost(*side)) +
             " us</p>\n" + svg_element(*svg) + "</div>\n";
      }
      h += "</div>\n</div>\n";
    }
    if (sites.size() > drawn)
      h += "<p class=\"note\">and " + std::to_string(sites.size() - drawn) +
           " more sites of this kind, listed in the markdown and JSON reports.</p>\n";
  }
  h += "<h2>Search</h2>\n<p>" + std::to_string(r.search.expansions) + " expansions in " +
       fmt("%.3f", r.search.seconds) + " s, stopped: " + stop_reason_name(r.search.stop) + "; " +
       std::to_string(r.fold.folded) + " weights folded; numerical check: " +
       (r.checked ? std::to_string(r.check.runs) + " random input sets, max relative error " +
                        fmt("%.3g", r.check.max_relative_error)
                  : std::string("not needed")) +
       ".</p>\n</body>\n</html>\n";
  return h;
}

}  // namespace tso::opt
