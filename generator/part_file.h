// Part files: what `tso generate --shard i/n` writes and `--merge` reads, and
// a job's checkpoint of a finished shard (job.h). One text header line after
// the magic line, then the part's records as fixed-size binary rows (key,
// little-endian, then the program code; record_file.h):
//
//   # tso generate part v2
//   ops=taso op-set-hash=... max-ops=3 sets=2 seed=1 shard=0/3 not-first-use=...
//       graphs-by-ops=1,28,...  records=N            (one line)
//   <N rows of 8 + 24 bytes>
#pragma once

#include <string>

#include "core/error.h"
#include "generator/generator.h"
#include "generator/record_file.h"

namespace tso::gen {

// Writes `part` to `path` whole or not at all (core/atomic_file.h).
Status write_part(const Part& part, const std::string& path);
// The same with the records taken in order from `records` (`count` of them,
// sorted; `part.records` is not read), so a part need not fit in memory.
Status write_part(const Part& part, uint64_t count, RunMerger* records, const std::string& path);

// A part file opened for reading: its header (records empty) and its rows.
struct OpenPart {
  Part header;
  RowReader rows;
};
// Errors name the file and what is wrong (not a part file, bad header, ...);
// the rows report truncation and corruption as they are read.
Expected<OpenPart> open_part(const std::string& path);
// The whole part, records included; also rejects trailing data.
Expected<Part> read_part(const std::string& path);

}  // namespace tso::gen
