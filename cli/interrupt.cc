#include "cli/interrupt.h"

#include <signal.h>

#include <csignal>

#include "core/atomic_file.h"

namespace tso::cli {
namespace {

// Async-signal-safe only: unlink(2) in remove_temporaries(), then the
// default action. The signal stays blocked while the handler runs, so the
// raise() is delivered, with the default action, as the handler returns.
void on_signal(int sig) {
  remove_temporaries();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void remove_temporaries_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal ignored when tso started (nohup, a background job) stays ignored.
    struct sigaction previous {};
    if (sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace tso::cli
