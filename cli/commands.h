// The subcommands of `tso`. Each file registers one subcommand on the app and
// returns the function that runs it once the command line has parsed; main.cc
// dispatches. Subcommands parse flags, call libraries and print; logic that
// anything else could reuse belongs in a library.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tso::cli {

// Exit codes shared by every subcommand.
enum ExitCode : int {
  kExitOk = 0,
  kExitIoError = 1,   // a file could not be read or written
  kExitBadInput = 2,  // bad flags, or a malformed or ill-typed input file
  kExitInternal = 3,  // an exception no command handled (out of memory, a library failure)
};

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_inspect(CLI::App& tso);
Command add_generate(CLI::App& tso);
Command add_run(CLI::App& tso);
Command add_profile(CLI::App& tso);
Command add_zoo(CLI::App& tso);
Command add_verify(CLI::App& tso);
Command add_optimize(CLI::App& tso);
Command add_calibrate(CLI::App& tso);

}  // namespace tso::cli
