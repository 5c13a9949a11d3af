// Rows, run files and the merge of sorted streams (see record_file.h).
#include "generator/record_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tso::gen {

namespace {

constexpr size_t kBlock = 1 << 16;  // rows read at a time

}  // namespace

void append_rows(std::span<const Record> records, std::string* out) {
  out->reserve(out->size() + records.size() * kRowBytes);
  for (const Record& r : records) {
    for (int b = 0; b < 8; ++b) out->push_back(static_cast<char>(r.key >> (8 * b)));
    out->append(reinterpret_cast<const char*>(r.code.data()), r.code.size());
  }
}

void parse_rows(const char* rows, size_t n, Record* out) {
  for (size_t k = 0; k < n; ++k) {
    const char* row = rows + k * kRowBytes;
    Record& r = out[k];
    r.key = 0;
    for (int b = 0; b < 8; ++b) r.key |= uint64_t{static_cast<unsigned char>(row[b])} << (8 * b);
    std::memcpy(r.code.data(), row + 8, r.code.size());
  }
}

Status write_run(std::span<const Record> records, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot write: " + std::strerror(errno)};
  std::string buf;
  for (size_t i = 0; i < records.size(); i += kBlock) {
    buf.clear();
    append_rows(records.subspan(i, std::min(kBlock, records.size() - i)), &buf);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
  out.close();
  if (!out) return Error{path + ": cannot write: " + std::strerror(errno)};
  return Status::Ok();
}

RowReader::RowReader(std::unique_ptr<std::ifstream> in, std::string path, uint64_t count,
                     int max_ops)
    : in_(std::move(in)), path_(std::move(path)), count_(count), max_ops_(max_ops) {}

Expected<RowReader> RowReader::open_run(const std::string& path, int max_ops) {
  std::error_code ec;
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (ec || !*in) return Error{path + ": cannot read"};
  if (bytes % kRowBytes != 0) return Error{path + ": truncated run"};
  return RowReader(std::move(in), path, bytes / kRowBytes, max_ops);
}

Expected<std::span<const Record>> RowReader::next(size_t max) {
  const uint64_t n = std::min<uint64_t>(max, count_ - read_);
  buf_.resize(n * kRowBytes);
  block_.resize(n);
  if (n == 0) return std::span<const Record>();
  if (!in_->read(buf_.data(), static_cast<std::streamsize>(buf_.size())))
    return Error{path_ + ": truncated: " + std::to_string(count_) + " records announced"};
  parse_rows(buf_.data(), n, block_.data());
  for (uint64_t k = 0; k < n; ++k) {
    const Record& r = block_[k];
    if (r.code[0] > max_ops_)
      return Error{path_ + ": record " + std::to_string(read_ + k) + " is corrupt"};
    if (has_last_ && r < last_) return Error{path_ + ": records are not sorted (corrupt file)"};
    last_ = r;
    has_last_ = true;
  }
  read_ += n;
  return std::span<const Record>(block_);
}

void RunMerger::add(RowReader reader) {
  TSO_CHECK(!started_, "streams are added before the merge starts");
  streams_.push_back({std::make_unique<RowReader>(std::move(reader)), {}, {}});
}

void RunMerger::add(std::vector<Record> sorted) {
  TSO_CHECK(!started_, "streams are added before the merge starts");
  Stream s{nullptr, std::move(sorted), {}};
  s.block = s.memory;
  streams_.push_back(std::move(s));
}

Status RunMerger::refill(Stream& s) {
  if (!s.block.empty() || s.reader == nullptr) return Status::Ok();
  Expected<std::span<const Record>> b = s.reader->next(kBlock);
  if (!b) return b.error();
  s.block = *b;
  return Status::Ok();
}

Expected<bool> RunMerger::next_keys(size_t min, std::vector<Record>* out) {
  auto later = [this](size_t a, size_t b) { return after(a, b); };
  if (!started_) {
    started_ = true;
    for (size_t i = 0; i < streams_.size(); ++i) {
      TSO_RETURN_IF_ERROR(refill(streams_[i]));
      if (!streams_[i].block.empty()) heap_.push_back(i);
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  const size_t start = out->size();
  while (!heap_.empty()) {
    const size_t i = heap_.front();
    Stream& s = streams_[i];
    const Record& r = s.block.front();
    if (out->size() > start && out->size() - start >= min && r.key != out->back().key) break;
    out->push_back(r);
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    s.block = s.block.subspan(1);
    TSO_RETURN_IF_ERROR(refill(s));
    if (!s.block.empty()) {
      heap_.push_back(i);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  return out->size() > start;
}

Status write_run(RunMerger* records, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot write: " + std::strerror(errno)};
  std::vector<Record> block;
  std::string buf;
  while (true) {
    block.clear();
    Expected<bool> more = records->next_keys(kBlock, &block);
    if (!more) return more.error();
    if (!*more) break;
    buf.clear();
    append_rows(block, &buf);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
  out.close();
  if (!out) return Error{path + ": cannot write: " + std::strerror(errno)};
  return Status::Ok();
}

}  // namespace tso::gen
