// What SIGINT, SIGTERM and SIGHUP do to a running `tso`: the files it is
// writing (core/atomic_file.h) lose their temporaries, and the process then
// dies of the signal as it would have without the handler (the shell sees
// 130 for Ctrl-C). A target changes only at its rename, so an interrupted
// command leaves each of its files as it was before or complete, and no
// temporary beside it.
#pragma once

namespace tso::cli {

// Installs the handlers; main() calls it before running a command.
void remove_temporaries_on_signals();

}  // namespace tso::cli
