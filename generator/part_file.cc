// Reading and writing part files (see part_file.h).
#include "generator/part_file.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"

namespace tso::gen {

namespace {

constexpr const char* kMagic = "# tso generate part v2";

Error bad(const std::string& path, const std::string& what) { return Error{path + ": " + what}; }

void write_header(const Part& p, uint64_t count, std::ostream& out) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(p.op_set_hash));
  out << kMagic << "\n"
      << "ops=" << p.ops_name << " op-set-hash=" << hash << " max-ops=" << p.max_ops
      << " sets=" << p.sets << " seed=" << p.seed << " shard=" << p.shard << "/" << p.num_shards
      << " not-first-use=" << p.not_first_use << " graphs-by-ops=";
  for (size_t d = 0; d < p.graphs_by_ops.size(); ++d) out << (d ? "," : "") << p.graphs_by_ops[d];
  out << " records=" << count << "\n";
}

// Reads the header line's fields into `p`; returns the record count.
Expected<uint64_t> parse_header(const std::string& path, const std::string& header, Part* p) {
  uint64_t records = 0;
  int fields = 0;
  std::istringstream words(header);
  for (std::string w; words >> w;) {
    size_t eq = w.find('=');
    if (eq == std::string::npos) return bad(path, "bad header field '" + w + "'");
    std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    try {
      if (key == "ops") {
        p->ops_name = value;
      } else if (key == "op-set-hash") {
        p->op_set_hash = std::stoull(value, nullptr, 16);
      } else if (key == "max-ops") {
        p->max_ops = std::stoi(value);
      } else if (key == "sets") {
        p->sets = std::stoi(value);
      } else if (key == "seed") {
        p->seed = std::stoull(value);
      } else if (key == "shard") {
        size_t slash = value.find('/');
        if (slash == std::string::npos) return bad(path, "bad shard '" + value + "'");
        p->shard = std::stoi(value.substr(0, slash));
        p->num_shards = std::stoi(value.substr(slash + 1));
      } else if (key == "not-first-use") {
        p->not_first_use = std::stoull(value);
      } else if (key == "graphs-by-ops") {
        std::istringstream counts(value);
        for (std::string c; std::getline(counts, c, ',');)
          p->graphs_by_ops.push_back(std::stoull(c));
      } else if (key == "records") {
        records = std::stoull(value);
      } else {
        return bad(path, "unknown header field '" + key + "'");
      }
    } catch (const std::exception&) {
      return bad(path, "bad header field '" + w + "'");
    }
    ++fields;
  }
  if (fields != 9) return bad(path, "header has " + std::to_string(fields) + " fields, expected 9");
  if (p->max_ops < 1 || p->max_ops > kMaxOps ||
      p->graphs_by_ops.size() != static_cast<size_t>(p->max_ops) + 1 || p->num_shards < 1 ||
      p->shard < 0 || p->shard >= p->num_shards)
    return bad(path, "inconsistent header");
  return records;
}

}  // namespace

Status write_part(const Part& p, const std::string& path) {
  Expected<AtomicFile> file = AtomicFile::create(path);
  if (!file) return file.error();
  std::ostream& out = file->out();
  write_header(p, p.records.size(), out);
  std::string buf;
  for (size_t i = 0; i < p.records.size(); i += 4096) {
    buf.clear();
    append_rows(std::span(p.records).subspan(i, std::min<size_t>(4096, p.records.size() - i)),
                &buf);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
  return file->commit();
}

Status write_part(const Part& p, uint64_t count, RunMerger* records, const std::string& path) {
  Expected<AtomicFile> file = AtomicFile::create(path);
  if (!file) return file.error();
  std::ostream& out = file->out();
  write_header(p, count, out);
  std::vector<Record> block;
  std::string buf;
  uint64_t written = 0;
  while (true) {
    block.clear();
    Expected<bool> more = records->next_keys(1 << 16, &block);
    if (!more) return more.error();
    if (!*more) break;
    buf.clear();
    append_rows(block, &buf);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    written += block.size();
  }
  TSO_CHECK(written == count, "a part's runs hold another count of records than announced");
  return file->commit();
}

Expected<OpenPart> open_part(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return bad(path, "cannot read");
  std::string magic, header;
  if (!std::getline(*in, magic) || magic != kMagic)
    return bad(path, "not a part file of `tso generate --shard` (first line is not '" +
                         std::string(kMagic) + "')");
  if (!std::getline(*in, header)) return bad(path, "missing header line");
  Part p;
  Expected<uint64_t> records = parse_header(path, header, &p);
  if (!records) return records.error();
  const int max_ops = p.max_ops;
  return OpenPart{std::move(p), RowReader(std::move(in), path, *records, max_ops)};
}

Expected<Part> read_part(const std::string& path) {
  Expected<OpenPart> open = open_part(path);
  if (!open) return open.error();
  Part p = std::move(open->header);
  p.records.reserve(open->rows.left());
  while (true) {
    Expected<std::span<const Record>> block = open->rows.next(4096);
    if (!block) return block.error();
    if (block->empty()) break;
    p.records.insert(p.records.end(), block->begin(), block->end());
  }
  if (!open->rows.at_end()) return bad(path, "trailing data after the records");
  return p;
}

}  // namespace tso::gen
