// Graphviz's `dot` (Debian package graphviz), run as a program: DOT text in,
// SVG out, for the HTML report's drawings (optimizer/report_html.h). Nothing
// is printed: what `dot` says on failure is in the error.
#pragma once

#include <string>

#include "core/error.h"

namespace tso::driver {

// Fails, saying so, where `dot` is not installed or rejects the text.
Expected<std::string> render_svg(const std::string& dot);

}  // namespace tso::driver
