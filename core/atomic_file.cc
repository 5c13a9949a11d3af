#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

namespace tso {
namespace {

constexpr int kSlots = 1024;
constexpr size_t kMaxName = 4096;

// The live temporaries, in fixed arrays a signal handler can read without
// locks or allocation. A tag is a generation times 4 plus a state: the
// handler copies a live name and unlinks it only if its tag did not change
// while it read (the slot was not released and reused meanwhile). The tags
// sit apart from the names so that a scan touches two pages, and a name's
// page is only touched when used.
enum : uint64_t { kFree = 0, kFilling = 1, kLive = 2, kStateMask = 3 };
static_assert(std::atomic<uint64_t>::is_always_lock_free);
std::atomic<uint64_t> g_tags[kSlots];
char g_names[kSlots][kMaxName];
std::atomic<uint64_t> g_next_temporary{0};

int claim_slot(const std::string& name) {
  for (int i = 0; i < kSlots; ++i) {
    uint64_t tag = g_tags[i].load();
    const uint64_t generation = (tag & ~kStateMask) + 4;
    if ((tag & kStateMask) != kFree ||
        !g_tags[i].compare_exchange_strong(tag, generation | kFilling))
      continue;
    std::memcpy(g_names[i], name.c_str(), name.size() + 1);
    g_tags[i].store(generation | kLive);
    return i;
  }
  return -1;
}

void release_slot(int slot) { g_tags[slot].store(g_tags[slot].load() & ~kStateMask); }

// fsync on the directory makes the rename itself durable. Failure is not
// reported: the rename has happened, and some file systems refuse it.
void sync_directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Expected<AtomicFile> AtomicFile::create(const std::string& path) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                          std::to_string(g_next_temporary.fetch_add(1));
  if (tmp.size() >= kMaxName) return Error{path + ": cannot write: the path is too long"};
  // Listed before it exists, so no moment has a temporary a handler misses.
  const int slot = claim_slot(tmp);
  if (slot < 0)
    return Error{path + ": cannot write: " + std::to_string(kSlots) +
                 " files are being written already"};
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int e = errno;
    release_slot(slot);
    return Error{path + ": cannot write: " + std::strerror(e)};
  }
  AtomicFile f(path, tmp, fd, slot);
  if (!f.out_.is_open()) return Error{path + ": cannot write " + tmp};
  return f;
}

AtomicFile::AtomicFile(std::string path, std::string tmp, int fd, int slot)
    : path_(std::move(path)),
      tmp_(std::move(tmp)),
      out_(tmp_, std::ios::binary | std::ios::trunc),
      fd_(fd),
      slot_(slot) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      out_(std::move(other.out_)),
      fd_(std::exchange(other.fd_, -1)),
      slot_(std::exchange(other.slot_, -1)) {}

AtomicFile::~AtomicFile() {
  if (slot_ >= 0) discard();
}

void AtomicFile::discard() {
  out_.close();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  // Released only after the unlink: a signal in between finds it listed.
  release_slot(slot_);
  slot_ = -1;
}

Status AtomicFile::commit() {
  TSO_CHECK(slot_ >= 0, path_ + ": AtomicFile committed twice");
  out_.close();
  if (out_.fail()) {
    discard();
    return Error{path_ + ": cannot write: writing the temporary " + tmp_ + " failed"};
  }
  if (::fsync(fd_) != 0) {
    const int e = errno;
    discard();
    return Error{path_ + ": cannot write: " + std::strerror(e)};
  }
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    discard();
    return Error{path_ + ": cannot rename " + tmp_ + " into place: " + std::strerror(e)};
  }
  release_slot(slot_);
  slot_ = -1;
  sync_directory_of(path_);
  return Status::Ok();
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  Expected<AtomicFile> f = AtomicFile::create(path);
  if (!f) return f.error();
  f->out().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return f->commit();
}

void remove_temporaries() noexcept {
  const int saved_errno = errno;
  for (int i = 0; i < kSlots; ++i) {
    const uint64_t before = g_tags[i].load();
    if ((before & kStateMask) != kLive) continue;
    char name[kMaxName];
    size_t n = 0;
    while (n + 1 < kMaxName && g_names[i][n] != '\0') name[n] = g_names[i][n], ++n;
    name[n] = '\0';
    if (g_tags[i].load() == before) ::unlink(name);
  }
  errno = saved_errno;
}

}  // namespace tso
