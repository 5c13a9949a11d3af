// Part files: what `tso generate --shard i/n` writes and `--merge` reads.
// One text header line after the magic line, then the part's records as
// fixed-size binary rows (key, little-endian, then the program code):
//
//   # tso generate part v2
//   ops=taso op-set-hash=... max-ops=3 sets=2 seed=1 shard=0/3 not-first-use=...
//       graphs-by-ops=1,28,...  records=N            (one line)
//   <N rows of 8 + 24 bytes>
#pragma once

#include <string>

#include "core/error.h"
#include "generator/generator.h"

namespace tso::gen {

// Writes `part` to `path` whole or not at all (core/atomic_file.h).
Status write_part(const Part& part, const std::string& path);
// Errors name the file and what is wrong (not a part file, truncated, ...).
Expected<Part> read_part(const std::string& path);

}  // namespace tso::gen
