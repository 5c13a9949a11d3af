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
constexpr size_t kRow = 8 + sizeof(Code);

Error bad(const std::string& path, const std::string& what) { return Error{path + ": " + what}; }

}  // namespace

Status write_part(const Part& p, const std::string& path) {
  Expected<AtomicFile> file = AtomicFile::create(path);
  if (!file) return file.error();
  std::ostream& out = file->out();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(p.op_set_hash));
  out << kMagic << "\n"
      << "ops=" << p.ops_name << " op-set-hash=" << hash << " max-ops=" << p.max_ops
      << " sets=" << p.sets << " seed=" << p.seed << " shard=" << p.shard << "/" << p.num_shards
      << " not-first-use=" << p.not_first_use << " graphs-by-ops=";
  for (size_t d = 0; d < p.graphs_by_ops.size(); ++d) out << (d ? "," : "") << p.graphs_by_ops[d];
  out << " records=" << p.records.size() << "\n";
  std::string buf;
  buf.reserve(kRow * 4096);
  for (size_t i = 0; i < p.records.size(); ++i) {
    const Record& r = p.records[i];
    for (int b = 0; b < 8; ++b) buf.push_back(static_cast<char>(r.key >> (8 * b)));
    buf.append(reinterpret_cast<const char*>(r.code.data()), r.code.size());
    if (buf.size() >= kRow * 4096 || i + 1 == p.records.size()) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  return file->commit();
}

Expected<Part> read_part(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(path, "cannot read");
  std::string magic, header;
  if (!std::getline(in, magic) || magic != kMagic)
    return bad(path, "not a part file of `tso generate --shard` (first line is not '" +
                         std::string(kMagic) + "')");
  if (!std::getline(in, header)) return bad(path, "missing header line");
  Part p;
  uint64_t records = 0;
  int fields = 0;
  std::istringstream words(header);
  for (std::string w; words >> w;) {
    size_t eq = w.find('=');
    if (eq == std::string::npos) return bad(path, "bad header field '" + w + "'");
    std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    try {
      if (key == "ops") {
        p.ops_name = value;
      } else if (key == "op-set-hash") {
        p.op_set_hash = std::stoull(value, nullptr, 16);
      } else if (key == "max-ops") {
        p.max_ops = std::stoi(value);
      } else if (key == "sets") {
        p.sets = std::stoi(value);
      } else if (key == "seed") {
        p.seed = std::stoull(value);
      } else if (key == "shard") {
        size_t slash = value.find('/');
        if (slash == std::string::npos) return bad(path, "bad shard '" + value + "'");
        p.shard = std::stoi(value.substr(0, slash));
        p.num_shards = std::stoi(value.substr(slash + 1));
      } else if (key == "not-first-use") {
        p.not_first_use = std::stoull(value);
      } else if (key == "graphs-by-ops") {
        std::istringstream counts(value);
        for (std::string c; std::getline(counts, c, ',');)
          p.graphs_by_ops.push_back(std::stoull(c));
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
  if (p.max_ops < 1 || p.max_ops > kMaxOps ||
      p.graphs_by_ops.size() != static_cast<size_t>(p.max_ops) + 1 || p.num_shards < 1 ||
      p.shard < 0 || p.shard >= p.num_shards)
    return bad(path, "inconsistent header");
  p.records.resize(records);
  std::string buf(kRow * 4096, '\0');
  for (uint64_t i = 0; i < records;) {
    const uint64_t n = std::min<uint64_t>(4096, records - i);
    if (!in.read(buf.data(), static_cast<std::streamsize>(n * kRow)))
      return bad(path, "truncated: " + std::to_string(records) + " records announced");
    for (uint64_t k = 0; k < n; ++k, ++i) {
      const char* row = buf.data() + k * kRow;
      Record& r = p.records[i];
      for (int b = 0; b < 8; ++b) r.key |= uint64_t{static_cast<unsigned char>(row[b])} << (8 * b);
      std::memcpy(r.code.data(), row + 8, r.code.size());
      if (r.code[0] > p.max_ops) return bad(path, "record " + std::to_string(i) + " is corrupt");
    }
  }
  if (in.peek() != std::char_traits<char>::eof())
    return bad(path, "trailing data after the records");
  if (!std::is_sorted(p.records.begin(), p.records.end()))
    return bad(path, "records are not sorted (corrupt part)");
  return p;
}

}  // namespace tso::gen
