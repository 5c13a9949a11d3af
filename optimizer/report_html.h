// The optimization report as one self-contained HTML page (inline CSS and
// SVG, no script, nothing fetched): the predicted and measured times before
// and after, the rewrites grouped by kind with their predicted gains, and per
// kind the first few rewrite sites drawn before and after, each operator
// coloured by its cost under the search's cost model. The drawings are
// Graphviz DOT text made here and turned into SVG by the caller's renderer
// (driver/graphviz.h runs `dot`): the library runs no program.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "optimizer/report.h"

namespace tso::opt {

// DOT text of one side of a site: its nodes filled by cost, from white at 0
// to red at `max_cost_us` (its largest where 0); boundary nodes dashed.
std::string site_dot(const std::vector<SiteNode>& site, double max_cost_us);

using DotRenderer = std::function<Expected<std::string>(const std::string& dot)>;

struct HtmlReportOptions {
  int sites_per_kind = 5;  // drawn per kind; the rest are counted
};

// Fails only where `render` fails.
Expected<std::string> report_html(const OptimizeResult& r, const ReportContext& c,
                                  const DotRenderer& render, const HtmlReportOptions& options = {});

}  // namespace tso::opt
