// FNV-1a, 64 bits: a stable hash of bytes for provenance (the specs' hash in
// rule files, the rule files' hashes in `tso --version`). Not for security.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tso {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;

// Continues hash `h` over the bytes of `s`.
constexpr uint64_t fnv1a(std::string_view s, uint64_t h = kFnvOffset) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// 16 lowercase hex digits.
inline std::string hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tso
