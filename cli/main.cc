// `tso`: the command line of the tensor graph superoptimizer.
#include <stdio_ext.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <vector>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/version.h"

namespace {

int run(int argc, char** argv) {
  using namespace tso::cli;
  CLI::App app{"tso: a tensor graph superoptimizer", "tso"};
  app.set_version_flag("--version", version_text,
                       "print the version, the default rule files' and specs' hashes and the "
                       "libraries' versions, and exit");
  app.require_subcommand(1);

  std::vector<Command> commands = {add_inspect(app),   add_generate(app), add_run(app),
                                   add_profile(app),   add_zoo(app),      add_optimize(app),
                                   add_calibrate(app), add_verify(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  remove_temporaries_on_signals();
  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return kExitBadInput;  // unreachable: require_subcommand(1)
}

// The last resort: commands report errors as values, and whatever escapes
// them (std::bad_alloc from an allocation no check foresaw, a library's
// exception) is reported here instead of aborting. What the command printed
// and stdio still buffers is dropped, so a failed command's report is not
// cut short silently; files are written through a temporary and a rename,
// so nothing partial is left there either.
[[nodiscard]] int internal_error(const char* what, const char* detail = "") {
  __fpurge(stdout);
  std::fprintf(stderr, "tso: %s%s\n", what, detail);
  return tso::cli::kExitInternal;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return internal_error("out of memory");
  } catch (const std::exception& e) {
    return internal_error("internal error: ", e.what());
  } catch (...) {
    return internal_error("internal error: an exception of unknown type");
  }
}
