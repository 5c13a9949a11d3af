// `tso`: the command line of the tensor graph superoptimizer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "cli/interrupt.h"

int main(int argc, char** argv) {
  using namespace tso::cli;
  CLI::App app{"tso: a tensor graph superoptimizer", "tso"};
  app.set_version_flag("--version", "tso " TSO_VERSION);
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
  // The last resort: commands report errors as values, and whatever escapes
  // them (std::bad_alloc from an allocation no check foresaw, a library's
  // exception) is reported here instead of aborting. Commands write their
  // files through a temporary and a rename, so nothing partial is left.
  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tso: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tso: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitBadInput;  // unreachable: require_subcommand(1)
}
