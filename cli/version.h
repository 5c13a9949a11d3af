// What `tso --version` prints: the version, the hashes of the default rule
// files and specs (which rules a run may apply, proved against which
// axioms), and the versions of the libraries that decide results and speed.
#pragma once

#include <string>

namespace tso::cli {

std::string version_text();

}  // namespace tso::cli
