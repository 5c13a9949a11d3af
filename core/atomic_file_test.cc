#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace tso {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tso_atomic_file_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_))
      names.insert(e.path().filename().string());
    return names;
  }
  static std::string contents(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesTheFileAndLeavesNoTemporary) {
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "first").ok());
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "second, longer").ok());
  EXPECT_EQ(contents(path("a.txt")), "second, longer");
  EXPECT_EQ(files(), std::set<std::string>{"a.txt"});
}

TEST_F(AtomicFileTest, TheTargetChangesOnlyAtCommit) {
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "previous").ok());
  Expected<AtomicFile> f = AtomicFile::create(path("a.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  f->out() << "new contents";
  f->out().flush();
  EXPECT_EQ(contents(path("a.txt")), "previous");
  EXPECT_EQ(files().size(), 2u);  // the target and the temporary beside it
  ASSERT_TRUE(f->commit().ok());
  EXPECT_EQ(contents(path("a.txt")), "new contents");
  EXPECT_EQ(files(), std::set<std::string>{"a.txt"});
}

TEST_F(AtomicFileTest, AnUncommittedFileIsRemovedAndTheTargetKept) {
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "previous").ok());
  {
    Expected<AtomicFile> f = AtomicFile::create(path("a.txt"));
    ASSERT_TRUE(f.ok());
    f->out() << "half";
    AtomicFile moved = std::move(*f);  // the moved-from one owns nothing
  }
  EXPECT_EQ(contents(path("a.txt")), "previous");
  EXPECT_EQ(files(), std::set<std::string>{"a.txt"});
}

// What the command line's SIGINT handler does: the temporaries go, the
// targets stay as they were, and a later commit fails.
TEST_F(AtomicFileTest, RemoveTemporariesUnlinksEveryLiveTemporary) {
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "previous").ok());
  Expected<AtomicFile> a = AtomicFile::create(path("a.txt"));
  Expected<AtomicFile> b = AtomicFile::create(path("b.txt"));
  ASSERT_TRUE(a.ok() && b.ok());
  a->out() << "new a";
  b->out() << "new b";
  EXPECT_EQ(files().size(), 3u);
  remove_temporaries();
  EXPECT_EQ(files(), std::set<std::string>{"a.txt"});
  Status s = a->commit();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(path("a.txt") + ": cannot rename"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(contents(path("a.txt")), "previous");
  // Committed files are no longer listed: removing again touches nothing.
  ASSERT_TRUE(write_file_atomically(path("c.txt"), "c").ok());
  remove_temporaries();
  EXPECT_EQ(files(), (std::set<std::string>{"a.txt", "c.txt"}));
}

TEST_F(AtomicFileTest, AMissingDirectoryIsAnErrorNamingTheTarget) {
  Status s = write_file_atomically(path("no/such/dir/a.txt"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            path("no/such/dir/a.txt") + ": cannot write: No such file or directory");
  EXPECT_TRUE(files().empty());
}

TEST_F(AtomicFileTest, ARenameThatFailsLeavesTheTargetAndNoTemporary) {
  fs::create_directories(dir_ / "target" / "inside");  // a non-empty directory
  Status s = write_file_atomically(path("target"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot rename"), std::string::npos) << s.error().message;
  EXPECT_TRUE(fs::is_directory(dir_ / "target" / "inside"));
  EXPECT_EQ(files(), std::set<std::string>{"target"});
}

// A write that fails halfway (here the file size limit, as a full disk
// would) is an error; the previous file stays and the temporary goes. In a
// child process, which alone gets the limit.
TEST_F(AtomicFileTest, AWriteFailingHalfwayKeepsThePreviousFile) {
  ASSERT_TRUE(write_file_atomically(path("a.txt"), "previous").ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
    const rlimit limit{100, 100};
    setrlimit(RLIMIT_FSIZE, &limit);
    Status s = write_file_atomically(path("a.txt"), std::string(100000, 'x'));
    _exit(!s.ok() && s.error().message.starts_with(path("a.txt") + ": cannot write") ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write did not fail with an error naming the file";
  EXPECT_EQ(contents(path("a.txt")), "previous");
  EXPECT_EQ(files(), std::set<std::string>{"a.txt"});
}

}  // namespace
}  // namespace tso
