// Preloaded into `tso` by no_partial_outputs_test (LD_PRELOAD): delivers a
// signal at an exact moment of writing a file, which a timer could only hit
// by chance. TSO_INTERRUPT_AT=rename:N raises TSO_INTERRUPT_SIGNAL (a
// number) just before the N-th rename(2), when a temporary is complete but
// not yet committed; write:N before the N-th write(2) or writev(2) to a
// file other than stdout and stderr, when a temporary is open and not yet
// whole. With TSO_INTERRUPT_UNDER=DIR, only files under DIR count (the
// command's outputs, not the caches it keeps elsewhere). The call then
// proceeds as usual, if the process survives the signal.
#include <dlfcn.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::atomic<int> g_renames{0}, g_writes{0};

// The count at which `call` is interrupted, or 0.
int interrupt_at(const char* call) {
  const char* at = std::getenv("TSO_INTERRUPT_AT");
  const size_t n = std::strlen(call);
  if (!at || std::strncmp(at, call, n) != 0 || at[n] != ':') return 0;
  return std::atoi(at + n + 1);
}

// Whether `path` counts: under TSO_INTERRUPT_UNDER, when that is set.
bool counts(const char* path) {
  const char* under = std::getenv("TSO_INTERRUPT_UNDER");
  return !under || (path && std::strncmp(path, under, std::strlen(under)) == 0);
}

// The path `fd` is open on (empty when unknown).
std::string fd_path(int fd) {
  char buf[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void maybe_interrupt(const char* call, std::atomic<int>& count, const std::string& path) {
  const int at = interrupt_at(call);
  if (at > 0 && counts(path.c_str()) && ++count == at) {
    const char* sig = std::getenv("TSO_INTERRUPT_SIGNAL");
    raise(sig ? std::atoi(sig) : SIGINT);
  }
}

}  // namespace

extern "C" int rename(const char* from, const char* to) {
  maybe_interrupt("rename", g_renames, to ? to : "");
  using Rename = int (*)(const char*, const char*);
  static const Rename real = reinterpret_cast<Rename>(dlsym(RTLD_NEXT, "rename"));
  return real(from, to);
}

extern "C" ssize_t write(int fd, const void* data, size_t n) {
  if (fd > STDERR_FILENO) maybe_interrupt("write", g_writes, fd_path(fd));
  using Write = ssize_t (*)(int, const void*, size_t);
  static const Write real = reinterpret_cast<Write>(dlsym(RTLD_NEXT, "write"));
  return real(fd, data, n);
}

extern "C" ssize_t writev(int fd, const iovec* iov, int n) {
  if (fd > STDERR_FILENO) maybe_interrupt("write", g_writes, fd_path(fd));
  using Writev = ssize_t (*)(int, const iovec*, int);
  static const Writev real = reinterpret_cast<Writev>(dlsym(RTLD_NEXT, "writev"));
  return real(fd, iov, n);
}
