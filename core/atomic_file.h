// Files written whole or not at all. A writer gets a temporary file beside its
// target (the same directory, so the final rename stays on one file system),
// writes it, and commit() flushes it to the disk (fsync) and renames it over
// the target. The rename is the only moment the target changes: a reader, a
// failure or an interruption sees the previous file (or none) or the new one
// complete, never a prefix. A temporary that is not committed is removed when
// its AtomicFile goes away; every live temporary is also listed where a signal
// handler can reach it, and remove_temporaries() (async-signal-safe: unlink
// only) removes them, so a command interrupted by SIGINT or SIGTERM leaves no
// stray file either (tso's command line installs that handler).
//
// POSIX (open, fsync, rename, unlink) beside the standard library: there is
// no portable fsync.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

#include "core/error.h"

namespace tso {

class AtomicFile {
 public:
  // Creates the temporary `<path>.tmp-<pid>-<n>`; errors name `path`.
  static Expected<AtomicFile> create(const std::string& path);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  // The temporary's contents; a write error is found by commit().
  std::ostream& out() { return out_; }

  // Flushes and syncs the temporary and renames it over the target. On
  // failure the temporary is removed and the target left as it was. Once.
  Status commit();

  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string tmp, int fd, int slot);
  void discard();

  std::string path_, tmp_;
  std::ofstream out_;
  int fd_ = -1;    // the temporary, kept open to fsync it
  int slot_ = -1;  // its entry in the list remove_temporaries() reads
};

// Writes `bytes` to `path` through an AtomicFile.
Status write_file_atomically(const std::string& path, std::string_view bytes);

// Removes every temporary of this process not yet committed or discarded.
// Calls only unlink(2): safe in a signal handler. The AtomicFiles stay valid
// (their commit then fails).
void remove_temporaries() noexcept;

}  // namespace tso
