// Internal to generator/: records on disk. A row is the key (8 bytes,
// little-endian) then the 24-byte program code, the form part files hold
// (part_file.h) and a job's spilled runs (job.h). Runs are sorted rows and
// nothing else; readers stream them a block at a time, and RunMerger merges
// sorted streams into one, so a sorted table larger than memory is read in
// order with a block per stream in memory.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "generator/enumerate.h"

namespace tso::gen {

constexpr size_t kRowBytes = 8 + sizeof(Code);

// Appends the rows of `records` to `out`.
void append_rows(std::span<const Record> records, std::string* out);
// Decodes `n` rows at `rows` into `out`.
void parse_rows(const char* rows, size_t n, Record* out);

class RunMerger;

// Writes sorted records as a run file (plain: a run is scratch, rewritten
// when a job restarts); from a span, or all that a merger yields.
Status write_run(std::span<const Record> records, const std::string& path);
Status write_run(RunMerger* records, const std::string& path);

// Reads `count` rows from `in` (positioned at the first) a block at a time;
// errors name `path`. Checks that the rows are sorted and their codes hold
// at most `max_ops` operators.
class RowReader {
 public:
  RowReader(std::unique_ptr<std::ifstream> in, std::string path, uint64_t count, int max_ops);
  // Opens a run file.
  static Expected<RowReader> open_run(const std::string& path, int max_ops);

  // The next rows, at most `max`; empty at the end.
  Expected<std::span<const Record>> next(size_t max);
  uint64_t left() const { return count_ - read_; }
  // Whether the file ends after the rows (call once they are all read).
  bool at_end() const { return in_->peek() == std::char_traits<char>::eof(); }

 private:
  std::unique_ptr<std::ifstream> in_;
  std::string path_;
  uint64_t count_ = 0, read_ = 0;
  int max_ops_ = 0;
  std::string buf_;
  std::vector<Record> block_;
  bool has_last_ = false;
  Record last_;
};

// Merges sorted streams into one sorted stream (a heap of their heads).
class RunMerger {
 public:
  // Streams are added before the first next_keys.
  void add(RowReader reader);
  void add(std::vector<Record> sorted);
  // Appends records in order until `out` holds at least `min` more and the
  // next record has another key (whole keys only), or the streams end.
  // Returns whether anything was appended.
  Expected<bool> next_keys(size_t min, std::vector<Record>* out);

 private:
  struct Stream {
    std::unique_ptr<RowReader> reader;  // null: `memory` is the whole stream
    std::vector<Record> memory;
    std::span<const Record> block;
  };
  Status refill(Stream& s);
  bool after(size_t a, size_t b) const {
    return streams_[b].block.front() < streams_[a].block.front();
  }
  std::vector<Stream> streams_;
  std::vector<size_t> heap_;  // streams with records, the smallest head first
  bool started_ = false;
};

}  // namespace tso::gen
