// The canonical text format of tso graphs (grammar in core/README.md).
// `parse_graph(print(g)) == g` for every graph.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/graph.h"

namespace tso {

std::string print(const Graph& g);

// Errors read "FILE:LINE:COL: message"; an unknown operator lists the nearest
// known names; a type annotation that disagrees with inference names the node
// and both types.
Expected<Graph> parse_graph(std::string_view text, std::string_view filename = "<input>");

}  // namespace tso
