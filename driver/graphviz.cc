#include "driver/graphviz.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tso::driver {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Removes the scratch directory however render_svg returns.
struct Scratch {
  fs::path dir;
  ~Scratch() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

}  // namespace

Expected<std::string> render_svg(const std::string& dot) {
  std::string pattern = (fs::temp_directory_path() / "tso-dot-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    return Error{"cannot make a scratch directory for Graphviz in " +
                 fs::temp_directory_path().string()};
  Scratch scratch{pattern};
  const fs::path in = scratch.dir / "site.dot", out = scratch.dir / "site.svg",
                 err = scratch.dir / "stderr";
  {
    std::ofstream f(in, std::ios::binary);
    f << dot;
    if (!f) return Error{"cannot write " + in.string()};
  }
  // The paths are ours (mkdtemp's letters and fixed names): no quoting needed.
  const std::string cmd =
      "dot -Tsvg -o '" + out.string() + "' '" + in.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127)
    return Error{
        "Graphviz's dot was not found (Debian package graphviz); the HTML report "
        "draws its rewrite sites with it"};
  if (code != 0)
    return Error{"Graphviz's dot failed (exit " + std::to_string(code) + "): " + read_all(err)};
  return read_all(out);
}

}  // namespace tso::driver
